package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/lease"
)

// A lease whose exp has already passed when it is submitted (accepted by
// the verifier's clock-skew leeway) is past its deadline on arrival: the
// submission is refused with LEASE_EXPIRED, exit 2, rather than answered
// "pending" for a task no one can ever approve.
func TestSubmitOfALeaseAlreadyPastItsExp(t *testing.T) {
	h := newCLIHome(t)
	key, _, err := lease.LoadPrivateKey(filepath.Join(h.home, "keys", lease.IssuerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Issue(key, lease.IssueOptions{Subject: "agent:skew", TaskID: "skew", Caps: []string{"MEDIA_PLAY"},
		TTL: 50 * time.Second, Now: func() time.Time { return time.Now().Add(-time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"task_id": "skew", "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/skew.mkv", "target_device": "living-room"}})
	p := filepath.Join(h.home, "skew.json")
	os.WriteFile(p, b, 0o600)
	out := h.must(2, "submit", p)
	if !strings.Contains(out, "LEASE_EXPIRED") || !strings.Contains(out, "rejected") {
		t.Fatalf("submit: %s", out)
	}
	if _, err := os.Stat(filepath.Join(h.home, "tasks", "skew", "record.json")); err == nil {
		t.Fatal("a task was made for a lease past its exp")
	}
}
