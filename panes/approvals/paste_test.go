package approvalspane

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// A reason pasted into the deny dialog lands in it (it was dropped), with
// controls and invisible characters shown as their escapes: none reaches
// the terminal or is silently removed.
func TestPasteIntoTheDenyReason(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("pasted", "/media/a.mkv"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	clk.Advance(GraceMax)
	press(m, "d")
	if p.dialogs.deny == nil {
		t.Fatalf("d did not open the dialog: %q", p.notice)
	}
	m.Update(tea.PasteMsg{Content: "not \x1b]0;owned\x07now\u202e\nthanks"})
	got := p.dialogs.deny.input.Value()
	for _, want := range []string{"not ", `\x1b`, "now", "thanks"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the reason %q lacks %q", got, want)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07\u202e\n") {
		t.Fatalf("a raw control reached the reason field: %q", got)
	}
	if strings.Contains(m.Render(), "\x1b]0;") {
		t.Fatal("the pasted escape reached the screen")
	}
}
