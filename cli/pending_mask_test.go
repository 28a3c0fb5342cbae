package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lease sub that is a secret (a pasted token) never reaches vigil
// pending's table unmasked; an ordinary task id stays whole, the handle.
func TestPendingMasksASecretShapedAgent(t *testing.T) {
	h := newCLIHome(t)
	const secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	tok := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", secret, "--task-id", "t1", "--cap", "MEDIA_PLAY", "--ttl", "1h"))
	b, _ := json.Marshal(map[string]any{"task_id": "t1", "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/a.mkv", "target_device": "living-room"}})
	p := filepath.Join(h.home, "t1.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h.must(0, "submit", p)
	out := h.must(0, "pending")
	if strings.Contains(out, secret[:12]) || !strings.Contains(out, "t1 ") {
		t.Fatalf("pending shows the secret or lost the task id:\n%s", out)
	}
}
