package auditpane

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index/indextest"
	"github.com/vigil-dev/vigil/themes"
)

// Two change signals in a burst start two reads from the same offset; only
// one may be applied, or rows double and the badge cries BROKEN.
func TestOverlappingReadsApplyOnce(t *testing.T) {
	largePath(t) // the incremental path, which large logs take
	path := filepath.Join(t.TempDir(), "audit.log")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := audit.Open(path, func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	add := func(n int) {
		for i := 0; i < n; i++ {
			if _, err := l.Append(audit.Entry{Actor: "a", Event: "submitted"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(3)
	pal, _ := themes.Palettes("dark")
	p := New(path, themes.New(pal))
	p.LoadSync()
	add(2)
	first := p.readMore()
	add(2)
	second := p.readMore()
	p.Update(first())
	if cmd := p.Update(second()); cmd != nil {
		p.Update(cmd())
	}
	if p.ver.chain.Bad() != nil || p.ver.chain.Len() != 7 {
		t.Fatalf("badge %q", p.Report())
	}
}

func TestDetailClosedBeforeItArrivesStaysClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, _ := audit.Open(path, time.Now)
	l.Append(audit.Entry{Actor: "a", Event: "submitted"})
	pal, _ := themes.Palettes("dark")
	p := New(path, themes.New(pal))
	p.LoadSync()
	cmd := p.openDetail(p.table.offs[0])
	p.detail.want = -1 // esc before the read lands
	p.Update(cmd())
	if p.detail.entry != nil {
		t.Fatal("a detail that arrived after esc opened anyway")
	}
}

// TestEventFilterCyclesTheIndexedEvents: the event names come from the
// index scan (no row parsed), in order of appearance, and `e` cycles them,
// in memory and on the path large logs take.
func TestEventFilterCyclesTheIndexedEvents(t *testing.T) {
	for _, large := range []bool{false, true} {
		t.Run(map[bool]string{false: "small", true: "large"}[large], func(t *testing.T) {
			if large {
				largePath(t)
			}
			path := filepath.Join(t.TempDir(), "audit.log")
			indextest.WriteValidLog(t, path, 10)
			p := New(path, benchStyles())
			defer p.Close()
			p.LoadSync()
			want := []string{"submitted", "approved", "executed", "denied"}
			if strings.Join(p.table.events, ",") != strings.Join(want, ",") {
				t.Fatalf("events %q", p.table.events)
			}
			for i, ev := range append(want, "") {
				runSync(p, p.Update(keyMsg('e')))
				lines := 10
				if ev != "" {
					lines = []int{3, 3, 2, 2}[i]
				}
				if p.filter.event != ev || p.viewLen() != lines {
					t.Fatalf("after %d presses: event %q, %d rows", i+1, p.filter.event, p.viewLen())
				}
			}
		})
	}
}
