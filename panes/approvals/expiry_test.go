package approvalspane

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// A task whose lease runs out before the approval timeout leaves the queue
// with the reason the engine recorded (LEASE_EXPIRED), not a made-up
// APPROVAL_TIMEOUT.
func TestLeaseExpiryNoticeSaysLease(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Manifest("short-lease", "MEDIA_PLAY", map[string]any{"media_uri": "/media/a.mkv", "target_device": "living-room"}, 32*time.Second))
	p := loadedPane(t, env)
	if !strings.Contains(strings.Join(mustRender(p, 100, 30), "\n"), "lease expires in 0:32") {
		t.Fatalf("no lease deadline:\n%s", strings.Join(mustRender(p, 100, 30), "\n"))
	}
	env.Clock.Advance(33 * time.Second)
	p.Update(p.reload(nil)())
	if !strings.Contains(p.notice, "short-lease expired without a decision (LEASE_EXPIRED)") {
		t.Fatalf("notice %q", p.notice)
	}
}

func mustRender(p *Pane, w, h int) []string {
	l, _ := p.render(w, h)
	return l
}

// At the second a task's deadline passes, before the next reload takes it
// off the queue, a does not open a prompt for it: its row already says
// "expired".
func TestExpiredRowCannotBeApproved(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("at-the-bell", "/media/a.mkv"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	clk.Advance(10*time.Minute + time.Second) // the approval timeout, on the pane's clock only
	if !strings.Contains(strings.Join(mustRender(p, 100, 28), "\n"), "approval expired") {
		t.Fatalf("the row does not say expired:\n%s", strings.Join(mustRender(p, 100, 28), "\n"))
	}
	press(m, "a")
	if p.dialogs.confirm != nil {
		t.Fatal("a opened a prompt for a task whose deadline passed")
	}
	if !strings.Contains(p.notice, "expired") {
		t.Fatalf("a did nothing silently: notice %q", p.notice)
	}
}
