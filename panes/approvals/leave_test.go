package approvalspane

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// The pane's notice answers a key in one view: it clears when the person
// switches between the pending and the decided list, selects another task,
// or the screen stops showing the pane (the help overlay, another pane).
func TestNoticeClearsWhenTheViewChanges(t *testing.T) {
	env := approvaltest.New(t)
	submitAll(env, "one", "two")
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	const said = "just changed"
	refuse := func() { // a in the grace: a notice that says why nothing happened
		t.Helper()
		p.dialogs.grace.arm(clk.Now())
		press(m, "a")
		if !strings.Contains(ansi.Strip(m.Render()), said) {
			t.Fatalf("no notice to clear:\n%s", ansi.Strip(m.Render()))
		}
	}
	cleared := func(how string) {
		t.Helper()
		if screen := ansi.Strip(m.Render()); strings.Contains(screen, said) {
			t.Fatalf("%s kept the notice:\n%s", how, screen)
		}
	}
	refuse()
	press(m, "v")
	cleared("v (to the decided list)")
	press(m, "v")
	refuse()
	if cmd := press(m, "j"); cmd != nil {
		p.Update(runBatch(cmd))
	}
	cleared("j (another task)")
	refuse()
	press(m, "?")
	press(m, "esc")
	cleared("the help overlay")
	refuse()
	p.Leave()
	cleared("Leave")
}
