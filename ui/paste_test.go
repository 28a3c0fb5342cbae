package ui_test

import (
	"context"
	"testing"

	kb "charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// pastePane records the pastes it is given; its field always has the
// keyboard, like the Search composer.
type pastePane struct {
	id     string
	pasted []string
}

func (p *pastePane) ID() string                   { return p.id }
func (p *pastePane) Title() string                { return p.id }
func (p *pastePane) Init(context.Context) tea.Cmd { return nil }
func (p *pastePane) Close()                       {}
func (p *pastePane) View(w, h int) string         { return "" }
func (p *pastePane) ShortHelp() []kb.Binding      { return nil }
func (p *pastePane) FullHelp() [][]kb.Binding     { return nil }
func (p *pastePane) Capturing() bool              { return true }
func (p *pastePane) Badge() string                { return "" }
func (p *pastePane) SetStyles(*themes.Styles)     {}
func (p *pastePane) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(tea.PasteMsg); ok {
		p.pasted = append(p.pasted, m.Content)
	}
	return nil
}

// A paste is typing: it reaches only the focused pane, and only while the
// screen shows it (a paste into a too-small window landed, unseen, in the
// Search composer; a paste reached every pane's field at once).
func TestPasteGoesOnlyWhereKeysGo(t *testing.T) {
	a, b := &pastePane{id: "a"}, &pastePane{id: "b"}
	m := ui.New(ui.Options{Panes: []panes.Pane{a, b}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	m.Update(tea.PasteMsg{Content: "one"})
	if len(a.pasted) != 1 || len(b.pasted) != 0 {
		t.Fatalf("a paste with a focused: a got %q, b got %q", a.pasted, b.pasted)
	}
	m.Update(tea.WindowSizeMsg{Width: 30, Height: 8})
	m.Update(tea.PasteMsg{Content: "hidden"})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	if len(a.pasted) != 1 || len(b.pasted) != 0 {
		t.Fatalf("a paste into a too-small window was typed: a got %q, b got %q", a.pasted, b.pasted)
	}
}
