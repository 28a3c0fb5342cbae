package approvalspane

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// A reason typed as soon as the deny dialog opens is kept whole: the grace
// period holds back enter (the key that acts), not the letters, which are on
// screen and act on nothing. (The first letters were swallowed and the
// agent was sent the tail of the reason.)
func TestDenyReasonTypedAtOnceIsKept(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("spam", "/media/a.mkv"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	clk.Advance(GraceMax)
	press(m, "d")
	if p.dialogs.deny == nil {
		t.Fatalf("d did not open the dialog: %q", p.notice)
	}
	for _, r := range "not now, this is spam" {
		clk.Advance(60 * time.Millisecond)
		press(m, string(r))
	}
	if got := p.dialogs.deny.input.Value(); got != "not now, this is spam" {
		t.Fatalf("the reason field holds %q", got)
	}
	// enter at once is held back; a moment later it denies, with the whole reason
	press(m, "enter")
	if p.dialogs.deny == nil {
		t.Fatal("enter right after typing denied at once")
	}
	clk.Advance(GraceQuiet)
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if p.dialogs.deny != nil || cmd == nil {
		t.Fatalf("enter after a pause did not deny: %q", p.notice)
	}
	cmd()
	if r, _ := env.Queue.Get("spam"); r.State != approval.Denied || r.Reason != "not now, this is spam" {
		t.Fatalf("state %s, reason %q", r.State, r.Reason)
	}
}
