package searchpane

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// hiddenListPane is the pane on the mail scope with its list drawn once
// at 120×36 (so clicks have a map), the opener answering with open.
func hiddenListPane(t *testing.T, open func(config.ScopeConfig, string) (scope.Document, error)) *Pane {
	t.Helper()
	scopes, err := scope.WriteDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := fakeOptions(t)
	o.Scopes, o.InitialScope, o.ScopeOpen = scopes, "mail", open
	p := New(o, styles())
	t.Cleanup(p.Close)
	runTyped(t, p, "budget")
	if p.results.scoped == nil || len(p.results.scoped.Hits) < 2 {
		t.Fatalf("want two mail hits, have %+v", p.results.scoped)
	}
	p.View(120, 36)
	return p
}

// rowOf is the pane line the list drew item i on.
func rowOf(t *testing.T, p *Pane, i int) int {
	t.Helper()
	for y := range 36 {
		if got, ok := p.results.list.Map.At(1, y); ok && got == i {
			return y
		}
	}
	t.Fatalf("item %d is not on screen", i)
	return -1
}

// While the viewer says a hit could not be opened, the list is not on
// screen: the wheel, a click where a row was, and j must not move its
// hidden cursor (esc then returns to the row the person left).
func TestDocumentErrorHidesTheList(t *testing.T) {
	p := hiddenListPane(t, func(config.ScopeConfig, string) (scope.Document, error) {
		return scope.Document{}, errors.New("gone")
	})
	second := rowOf(t, p, 1)
	drain(t, p, p.Update(panetest.Key("enter")))
	if view := ansi.Strip(p.View(120, 36)); !strings.Contains(view, "cannot open: gone") {
		t.Fatalf("the viewer does not show the error:\n%s", view)
	}
	for _, msg := range []tea.Msg{panetest.WheelDown(5, 5), panetest.Click(5, second), panetest.Key("j"), panetest.Key("G")} {
		drain(t, p, p.Update(msg))
		if c := p.results.list.Cursor(); c != 0 {
			t.Fatalf("%T moved the hidden list's cursor to %d", msg, c)
		}
	}
	drain(t, p, p.Update(panetest.Key("esc")))
	if view := ansi.Strip(p.View(120, 36)); strings.Contains(view, "cannot open") {
		t.Fatalf("esc did not close the error:\n%s", view)
	}
}

// While a hit opens ("opening…" fills the pane) the list is hidden too:
// keys, the wheel and clicks wait for the document.
func TestOpeningDocumentHidesTheList(t *testing.T) {
	p := hiddenListPane(t, func(sc config.ScopeConfig, id string) (scope.Document, error) {
		return scope.Open(sc, id)
	})
	second := rowOf(t, p, 1)
	open := p.Update(panetest.Key("enter")) // not delivered yet: opening
	if view := ansi.Strip(p.View(120, 36)); !strings.Contains(view, "opening…") {
		t.Fatalf("no opening state:\n%s", view)
	}
	for _, msg := range []tea.Msg{panetest.WheelDown(5, 5), panetest.Click(5, second), panetest.Key("j"), panetest.Key("enter")} {
		if cmd := p.Update(msg); cmd != nil {
			// a key nothing acts on says so; anything else is a second open
			if _, ok := cmd().(panes.KeyDisabledMsg); !ok {
				t.Fatalf("%T while opening returned a command (a second open?)", msg)
			}
		}
		if c := p.results.list.Cursor(); c != 0 {
			t.Fatalf("%T moved the hidden list's cursor to %d", msg, c)
		}
	}
	drain(t, p, open)
	view := ansi.Strip(p.View(120, 36))
	if !strings.Contains(view, "esc back") || !strings.Contains(view, "The quarterly report draft is in the shared folder") {
		t.Fatalf("the first hit's document is not shown (a second enter while opening is not \"back\"):\n%s", view)
	}
}

// esc while a hit opens goes back to the list, and the document that
// arrives after it does not take the screen over.
func TestBackWhileOpeningDropsTheLateDocument(t *testing.T) {
	p := hiddenListPane(t, func(sc config.ScopeConfig, id string) (scope.Document, error) {
		return scope.Open(sc, id)
	})
	open := p.Update(panetest.Key("enter"))
	p.Update(panetest.Key("esc"))
	drain(t, p, open)
	view := ansi.Strip(p.View(120, 36))
	if strings.Contains(view, "esc back") || strings.Contains(view, "opening…") {
		t.Fatalf("the document opened after esc went back:\n%s", view)
	}
	drain(t, p, p.Update(panetest.Key("j")))
	if c := p.results.list.Cursor(); c != 1 {
		t.Fatalf("j after going back: cursor %d, want 1", c)
	}
}
