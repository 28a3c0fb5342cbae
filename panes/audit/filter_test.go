package auditpane

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index"
	"github.com/vigil-dev/vigil/audit/index/indextest"
)

// bigEnough is a log above inMemoryLog, so the filter runs as a pass.
func bigEnough(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, n)
	if st, _ := os.Stat(path); st.Size() <= inMemoryLog {
		t.Fatalf("the log is %d bytes: too small for a pass", st.Size())
	}
	return path
}

func typeKeys(p *Pane, s string) {
	for _, r := range s {
		p.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// TestFilterKeystrokeCancelsThePass: a key typed while a pass runs cancels
// it — its goroutine returns, its results are never shown — and the last
// key's pass finds the matches. That a new pass judges only once the old one
// has stopped, and that a cancelled one stops part way, the engine's test
// holds (audit/index TestNewPassCancelsThePassBefore).
func TestFilterKeystrokeCancelsThePass(t *testing.T) {
	path := bigEnough(t, 40000)
	p := New(path, benchStyles())
	defer p.Close()
	p.LoadSync()
	total := int64(len(p.table.offs))

	typeKeys(p, "/t")
	first, firstGen := p.filter.pass, p.filter.gen
	if first == nil || !p.filter.passing {
		t.Fatal("no pass started")
	}
	typeKeys(p, "ask-0000123")
	if p.filter.pass == first {
		t.Fatal("the keystroke did not start a new pass")
	}
	<-first.Done() // cancelled: it returns (the test's deadline guards a hang)
	runSync(p, p.waitPass(p.filter.pass, p.filter.gen))
	if p.filter.passing || len(p.filter.view) != 4 {
		t.Fatalf("after the last key: %d matches, passing %v", len(p.filter.view), p.filter.passing)
	}
	if got := p.filter.pass.Scanned(); got != total {
		t.Fatalf("the last pass judged %d lines of %d", got, total)
	}
	// a batch from the cancelled pass, arriving late, changes nothing
	p.Update(filterBatchMsg{Batch: index.Batch{Matches: []int{0, 1, 2}, Next: 3}, gen: firstGen, pass: first})
	if len(p.filter.view) != 4 {
		t.Fatal("a cancelled pass's batch was applied")
	}
	for _, line := range p.filter.view {
		if r, ok := p.table.rows.get(p.table.offs[line]); !ok || r.Task != "task-0000123" {
			t.Fatalf("line %d shows %+v", line, r)
		}
	}
}

// filterSpecs are the filters the pane can set (event, outcome, /) over
// indextest.Queries.
func filterSpecs() []index.Filter {
	var out []index.Filter
	for _, q := range indextest.Queries {
		for _, ev := range []string{"", "submitted", "denied", index.DamagedEvent} {
			for _, o := range outcomes {
				out = append(out, index.Filter{Query: audit.Query{Event: ev}, Outcome: o, Text: q})
			}
		}
	}
	return out
}

// TestFilteredViewOfAHostileLog: through the pane — pass, offsets, the chain's
// verified lines — the view holds exactly the lines whose rows pass, held in
// memory or read from the file.
func TestFilteredViewOfAHostileLog(t *testing.T) {
	for _, large := range []bool{false, true} {
		t.Run(map[bool]string{false: "small", true: "large"}[large], func(t *testing.T) {
			if large {
				largePath(t)
			}
			path, lines := indextest.HostileLog(t)
			p := New(path, benchStyles())
			defer p.Close()
			p.LoadSync()
			for _, sp := range filterSpecs() {
				p.filter.event = sp.Query.Event
				p.filter.outcome = map[string]int{"": 0, "ok": 1, "failed": 2}[sp.Outcome]
				p.filter.field.SetValue(sp.Text)
				runSync(p, p.refilter())
				var want []int
				for i, l := range lines {
					if sp.Keeps(index.RowOf(l)) {
						want = append(want, i)
					}
				}
				if sp.Empty() {
					continue // no filter: every line shows, no view is kept
				}
				if got := p.filter.view; !reflect.DeepEqual(got, want) {
					t.Fatalf("spec %+v: view %v, want %v", sp, got, want)
				}
			}
		})
	}
}

// TestFilterPassOnAShrunkLog: a log cut short under the index ends the pass
// with an error shown in the pane, with the matches before the cut; no line
// is judged from bytes the file no longer has.
func TestFilterPassOnAShrunkLog(t *testing.T) {
	path := bigEnough(t, 40000)
	p := New(path, benchStyles())
	defer p.Close()
	p.LoadSync()
	st, _ := os.Stat(path)
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	p.filter.field.SetValue("task-0000123")
	runSync(p, p.refilter())
	if !errors.Is(p.filter.err, io.ErrUnexpectedEOF) {
		t.Fatalf("filter error %v, want the short read", p.filter.err)
	}
	if len(p.filter.view) != 4 || p.filter.view[0] != 492 {
		t.Fatalf("view %v, want the 4 lines of task-0000123 before the cut", p.filter.view)
	}
	if !strings.Contains(p.View(120, 20), "filter: unexpected EOF") {
		t.Fatal("the pane does not show the error")
	}
}
