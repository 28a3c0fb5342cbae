package ui

import (
	"context"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
)

// wordyPane has more footer keys than 80 columns hold.
type wordyPane struct{}

func (wordyPane) ID() string                   { return "wordy" }
func (wordyPane) Title() string                { return "Wordy" }
func (wordyPane) Init(context.Context) tea.Cmd { return nil }
func (wordyPane) Update(tea.Msg) tea.Cmd       { return nil }
func (wordyPane) View(w, h int) string         { return panes.Block(nil, w, h) }
func (wordyPane) FullHelp() [][]key.Binding    { return nil }
func (wordyPane) Capturing() bool              { return false }
func (wordyPane) Badge() string                { return "" }
func (wordyPane) Close()                       {}
func (wordyPane) SetStyles(*themes.Styles)     {}
func (wordyPane) ShortHelp() []key.Binding {
	return []key.Binding{panes.Bind("a", "approve…", "a"), panes.Bind("d", "deny…", "d"),
		panes.Bind("↓/j", "next task", "j"), panes.Bind("v", "decided ⇄ pending", "v"),
		panes.Bind("x", "something else entirely", "x")}
}

// A footer with more keys than the width holds drops the pane's last
// ones, not "? help" and "q quit" at its end, and never ends in "…".
func TestFooterKeepsHelpAndQuitWhenNarrow(t *testing.T) {
	m := New(Options{Panes: []panes.Pane{wordyPane{}}, Theme: "dark", JobControl: func() bool { return true }})
	for _, w := range []int{120, 80, 60} {
		m.Update(tea.WindowSizeMsg{Width: w, Height: 24})
		f := strings.TrimRight(footer(m), " ")
		if strings.HasSuffix(f, "…") || !strings.Contains(f, "? help") || !strings.Contains(f, "q quit") || !strings.HasPrefix(f, "a approve…") {
			t.Errorf("footer at %d columns: %q", w, f)
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 24})
	if f := footer(m); !strings.Contains(f, "x something else entirely") {
		t.Errorf("a wide footer dropped a key: %q", f)
	}
}
