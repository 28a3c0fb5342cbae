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

// However many warnings a preview starts with, the prompt opens only where
// all of them and the request line under them are on screen (three fixed
// lines were all warnings when there were three, and the request line was
// hidden under the prompt).
func TestPromptNeedsEveryWarningAndTheRequestLine(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("warned", "https://раураl.com/a\u200bb\u200bc.mp4"))
	clk := approvaltest.NewClock()
	first := loadedPane(t, env, clk)
	list, view := first.reload(nil)(), first.loadView(first.queue.selID)()
	warnings := 0
	lines, _ := first.previewLines(view.(viewMsg).view, 100)
	for _, l := range lines {
		if strings.HasPrefix(ansi.Strip(l), "⚠") {
			warnings++
		}
	}
	if warnings < 3 {
		t.Fatalf("want a preview with at least 3 warning lines, got %d", warnings)
	}
	opened := false
	for h := 10; h <= 40; h++ {
		p := newPane(env)
		p.o.Now = clk.Now
		p.Update(list)
		p.Update(view)
		m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
		m.Update(tea.WindowSizeMsg{Width: 100, Height: h})
		clk.Advance(GraceMax)
		press(m, "a")
		if p.dialogs.confirm == nil {
			continue
		}
		opened = true
		shown := ansi.Strip(m.Render())
		if !strings.Contains(shown, "SIM sim://living-room") || strings.Count(shown, "⚠") < warnings {
			t.Fatalf("100×%d: the prompt opened without every warning and the request line:\n%s", h, shown)
		}
	}
	if !opened {
		t.Fatal("the prompt never opened")
	}
}
