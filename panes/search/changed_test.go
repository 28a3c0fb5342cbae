package searchpane

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Changed is closed by the next message the pane handles, and the
// Snapshot read after it shows that message's effect: a test waits on it
// instead of polling.
func TestChangedClosesOnTheNextMessage(t *testing.T) {
	p := New(baseOptions(t.TempDir(), "ugrep"), styles())
	defer p.Close()
	ch := p.Changed()
	if ch != p.Changed() {
		t.Fatal("two waiters before a change got different channels")
	}
	select {
	case <-ch:
		t.Fatal("closed before any message")
	default:
	}
	p.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	select {
	case <-ch:
	default:
		t.Fatal("not closed by a handled key")
	}
	if got := p.Snapshot().Keys; got != 1 {
		t.Fatalf("snapshot after the key: %d keys", got)
	}
	if next := p.Changed(); next == ch {
		t.Fatal("a closed channel handed out again")
	}
}
