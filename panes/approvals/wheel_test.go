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

// The mouse wheel does not scroll the top of the preview out from under an
// open prompt: y answers only while the request line is on screen (the
// wheel scrolled it away and y still approved).
func TestWheelKeepsTheRequestAboveThePrompt(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("wheel", secretURI))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 18})
	clk.Advance(GraceMax)
	press(m, "J", "J") // the whole request on screen once: a may open the prompt
	press(m, "a")
	if p.dialogs.confirm == nil {
		t.Fatalf("a did not open the prompt: %q\n%s", p.notice, ansi.Strip(m.Render()))
	}
	for i := 0; i < 5; i++ {
		m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	}
	clk.Advance(GraceMax)
	screen := ansi.Strip(m.Render())
	press(m, "y")
	if p.busy && !strings.Contains(screen, "SIM sim://living-room") {
		t.Fatalf("y approved with the request line scrolled off:\n%s", screen)
	}
}
