package auditpane

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/themes"
)

// TestLiveBadgeInPlaceEditLargeLog: above the size where every change
// re-reads the whole log, an entry edited in place in the middle (same inode,
// same size, the last line untouched) still turns the badge (on the change signal; no timer).
func TestLiveBadgeInPlaceEditLargeLog(t *testing.T) {
	largePath(t)
	path, _ := liveLog(t, 20)
	m, _ := startHost(t, path)
	editInPlace(t, path, 7)
	m.waitScreen(t, "BROKEN at #7", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #7: hash mismatch") })
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
	if m.Reload || len(m.Lines) != 1 {
		t.Fatalf("an append was not read incrementally: reload %v, %d lines", m.Reload, len(m.Lines))
	}
	p.Update(m)
	editInPlace(t, path, 3)
	if m := p.readMore()().(moreMsg); !m.Reload {
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
	first := collect(p.Update(changedMsg{}))
	if len(first) != 2 {
		t.Fatalf("a change started %d reads, want the index's and the chain's", len(first))
	}
	l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "later", Success: true})
	if again := p.Update(changedMsg{}); again != nil {
		t.Fatal("a second read started while the first was in flight")
	}
	var next []tea.Msg
	for _, m := range first {
		next = append(next, collect(p.Update(m))...)
	}
	reads := 0
	for _, m := range next {
		switch m.(type) {
		case moreMsg, indexMoreMsg:
			reads++
		}
		runSync(p, p.Update(m))
	}
	if reads != 2 {
		t.Fatalf("the change signalled meanwhile started %d reads after the first ones, want 2", reads)
	}
	if p.ver.chain.Len() != 22 || p.ver.broken() != nil || len(p.table.offs) != 22 {
		t.Fatalf("%d entries, %d lines, badge %q", p.ver.chain.Len(), len(p.table.offs), p.Report())
	}
}

// collect runs a command (and the commands of a batch) and returns their messages.
func collect(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	switch m := cmd().(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range m {
			out = append(out, collect(c)...)
		}
		return out
	default:
		return []tea.Msg{m}
	}
}
