package searchpane

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// A status line speaks of the view it was set in: going to another pane
// and back (or opening the help) clears it.
func TestNoticeClearsWhenTheViewChanges(t *testing.T) {
	needBackend(t, "ugrep")
	p := typing(New(baseOptions(fixtureTree(t), "ugrep"), styles()))
	defer p.Close()
	other := New(baseOptions(t.TempDir(), "ugrep"), styles())
	defer other.Close()
	runLive(t, p, "needle")
	press(p, "esc")
	m := ui.New(ui.Options{Panes: []panes.Pane{p, other}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 20})
	for _, via := range [][]string{{"2", "1"}, {"?", "esc"}} {
		m.Update(kp("y"))
		if !strings.Contains(ansi.Strip(m.Render()), "copied ") {
			t.Fatalf("setup: no notice after y:\n%s", ansi.Strip(m.Render()))
		}
		for _, k := range via {
			m.Update(kp(k))
		}
		if out := ansi.Strip(m.Render()); strings.Contains(out, "copied ") {
			t.Fatalf("after %v the old notice is still shown:\n%s", via, out)
		}
	}
}
