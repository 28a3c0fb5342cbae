package memorypane

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// The pane opens on its list, so the global keys reach the root on first
// launch; e or enter on the empty list start typing and esc leaves.
func TestOpensOnTheList(t *testing.T) {
	p := New(Options{Tool: nil, Now: clock}, styles())
	if p.Capturing() {
		t.Fatal("a new pane has the keyboard: 3 ? q would be typed")
	}
	p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if !p.Capturing() || p.focus != fQuery {
		t.Fatal("enter on the empty list did not focus the query field")
	}
	p.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if p.Capturing() {
		t.Fatal("esc left the keyboard in the form")
	}
	p.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
	if !p.Capturing() || p.inputs[fQuery].Value() != "" {
		t.Fatalf("e did not focus the form without typing: %q", p.inputs[fQuery].Value())
	}
}
