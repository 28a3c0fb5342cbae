package memorypane

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// Changed is closed by the next message the pane handles, and the
// Snapshot read after it shows that message's effect.
func TestChangedClosesOnTheNextMessage(t *testing.T) {
	p := newPane(demoStore(t))
	defer p.Close()
	ch := p.Changed()
	select {
	case <-ch:
		t.Fatal("closed before any message")
	default:
	}
	for _, r := range "python" {
		p.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	select {
	case <-ch:
	default:
		t.Fatal("not closed by a handled key")
	}
	cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if s := p.Snapshot(); !s.Busy || s.Searched || s.Keys != 8 { // e (newPane), python, enter
		t.Fatalf("after enter: %+v", s)
	}
	ch = p.Changed()
	p.Update(cmd())
	<-ch
	if s := p.Snapshot(); s.Busy || !s.Searched || s.Hits == 0 {
		t.Fatalf("after the answer: %+v", s)
	}
}
