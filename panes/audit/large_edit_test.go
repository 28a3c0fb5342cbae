package auditpane

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/themes"
)

// TestLiveBadgeInPlaceEditLargeLog: above the size where every change
// re-reads the whole log, an entry edited in place in the middle (same inode,
// same size, the last line untouched) still turns the badge within a second.
func TestLiveBadgeInPlaceEditLargeLog(t *testing.T) {
	defer func(n int64) { smallLog = n }(smallLog)
	smallLog = 0
	path, _ := liveLog(t, 20)
	m, _ := startHost(t, path)
	editInPlace(t, path, 7)
	took := m.waitScreen(t, "BROKEN at #7", 5*time.Second, func(s string) bool { return strings.Contains(s, "✗ BROKEN at #7: hash mismatch") })
	if took > liveBudget {
		t.Errorf("the badge took %v to turn", took)
	}
}

// TestLargeLogAppendsStayIncremental: the prefix check passes a pure
// append, so a large log is not re-read whole on every new entry.
func TestLargeLogAppendsStayIncremental(t *testing.T) {
	path, l := liveLog(t, 20)
	pal, _ := themes.Palettes("dark")
	p := New(path, themes.New(pal))
	p.smallLog = 0
	p.LoadSync()
	if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "late", Success: true}); err != nil {
		t.Fatal(err)
	}
	m := p.readMore()().(moreMsg)
	if m.reload || len(m.lines) != 1 {
		t.Fatalf("an append was not read incrementally: reload %v, %d lines", m.reload, len(m.lines))
	}
	p.Update(m)
	editInPlace(t, path, 3)
	if m := p.readMore()().(moreMsg); !m.reload {
		t.Fatal("an in-place edit was taken for an append")
	}
}

// TestChangeSignalsDuringAReadDoNotStackReads: a change signalled while a
// read is in flight waits for it, then one read follows; reads (each hashes
// the whole log on the large path) never run side by side.
func TestChangeSignalsDuringAReadDoNotStackReads(t *testing.T) {
	path, l := liveLog(t, 20)
	pal, _ := themes.Palettes("dark")
	p := New(path, themes.New(pal))
	p.smallLog = 0
	p.LoadSync()
	l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "late", Success: true})
	first := p.Update(changedMsg{})
	if first == nil {
		t.Fatal("a change started no read")
	}
	l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "later", Success: true})
	if again := p.Update(changedMsg{}); again != nil {
		t.Fatal("a second read started while the first was in flight")
	}
	next := p.Update(first())
	if next == nil {
		t.Fatal("the change signalled meanwhile was not read after the first read")
	}
	p.Update(next())
	if p.chain.Len() != 22 || p.broken() != nil {
		t.Fatalf("%d entries, badge %q", p.chain.Len(), p.Report())
	}
}
