package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/preview"
)

// TestPreviewTaskFieldsCannotForgeEachOther: the agent's values (its
// lease's sub and jti, its manifest's capability and device) are shown one
// labelled line each, cut, so an agent name cannot paint the lease's
// expiry, a capability or a line of its own; the task id stays whole.
func TestPreviewTaskFieldsCannotForgeEachOther(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	forgedAgent := "agent:x (MEDIA_STOP) from agent:trusted, lease jti real, lease expires 2099-01-01T00:00:00Z"
	v := approval.View{
		Preview: preview.HTTPPreview{Method: "POST", URL: "http://tv/jsonrpc", EstimatedEffect: "plays a film"},
		Record: approval.Record{TaskID: "t-forge", CapabilityID: "MEDIA_PLAY", State: approval.Pending,
			Agent: forgedAgent, TokenJTI: "jti-1" + strings.Repeat(" ", 50) + "expires 2099-01-01T00:00:00Z", Device: "tv\u202e\tkitchen\nlease: x",
			LeaseExpires: now.Add(5 * time.Minute), SubmittedAt: now, ExpiresAt: now.Add(10 * time.Minute)},
		LeaseValid: true, BindingHash: "h",
	}
	var b bytes.Buffer
	writePreviewAt(&b, v, now)
	out := b.String()
	if strings.Contains(out, "2099") {
		t.Errorf("an agent's value reached a field of its own:\n%s", out)
	}
	if strings.ContainsAny(out, "\t\u202e") {
		t.Errorf("a raw tab or bidi control reached the terminal:\n%q", out)
	}
	fields := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, val, ok := strings.Cut(l, ":"); ok && !strings.Contains(k, " ") {
			fields[k] = strings.TrimSpace(val)
		}
	}
	want := map[string]string{"task": "t-forge", "action": "MEDIA_PLAY", "device": `tv\u202e\tkitchen\nlease: x`}
	for k, w := range want {
		if fields[k] != w {
			t.Errorf("%s: %q, want %q\n%s", k, fields[k], w, out)
		}
	}
	if a := fields["agent"]; !strings.HasPrefix(a, "agent:x (MEDIA_STOP)") || !strings.HasSuffix(a, "…") {
		t.Errorf("agent %q is not shown cut on its own line", a)
	}
	if l := fields["lease"]; !strings.HasPrefix(l, "expires "+now.Add(5*time.Minute).Format(time.RFC3339)+", jti jti-1") {
		t.Errorf("lease %q", l)
	}
	if !strings.Contains(out, "note:    3 hidden characters") {
		t.Errorf("the hidden characters are not counted:\n%s", out)
	}
}

// secretID is a GitHub token shape an agent might paste as an id.
const secretID = "ghp_Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7J"

// TestPreviewMasksSecretShapedIDs: a task id, sub or jti that is a secret
// is shown masked (issue 36, item 6), as every other value is.
func TestPreviewMasksSecretShapedIDs(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	v := approval.View{
		Preview: preview.HTTPPreview{Method: "POST", URL: "http://tv/jsonrpc"},
		Record: approval.Record{TaskID: secretID, CapabilityID: "MEDIA_PLAY", State: approval.Pending,
			Agent: "agent:" + secretID, TokenJTI: secretID, LeaseExpires: now.Add(time.Minute),
			SubmittedAt: now, ExpiresAt: now.Add(time.Minute)},
		LeaseValid: true,
	}
	var b bytes.Buffer
	writePreviewAt(&b, v, now)
	if out := b.String(); strings.Contains(out, secretID[8:]) || !strings.Contains(out, "task:    ghp_...") {
		t.Fatalf("a secret-shaped id is shown:\n%s", out)
	}
}
