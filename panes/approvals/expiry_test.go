package approvals

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
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
	p.Update(p.reload()())
	if !strings.Contains(p.notice, "short-lease expired without a decision (LEASE_EXPIRED)") {
		t.Fatalf("notice %q", p.notice)
	}
}

func mustRender(p *Pane, w, h int) []string {
	l, _ := p.render(w, h)
	return l
}
