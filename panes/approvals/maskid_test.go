package approvalspane

import (
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
)

// A lease sub or jti that is a secret (a pasted token) is masked in the
// queue's rows and the preview's lease line; the pane still decides on the
// stored id.
func TestSecretShapedIDsAreMaskedOnScreen(t *testing.T) {
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := approval.Record{TaskID: "t1", Agent: secret, TokenJTI: secret, CapabilityID: "MEDIA_PLAY", Device: "living-room",
		State: approval.Pending, SubmittedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
	c := cellsOf(r, now)
	if strings.Contains(c.agent, secret[:12]) || c.id != "t1" || c.raw.Agent != secret {
		t.Fatalf("row cells: agent %q id %q", c.agent, c.id)
	}
	if got := shownID(secret); strings.Contains(got, secret[:12]) {
		t.Fatalf("shownID kept the secret: %q", got)
	}
	if got := shownID("claude-desktop"); got != "claude-desktop" {
		t.Fatalf("an ordinary id changed: %q", got)
	}
}
