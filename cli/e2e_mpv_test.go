package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/internal/mpvtest"
)

// TestApprovalEndToEndWithRealMPV: submit → preview → approve from the CLI →
// a real mpv plays → the audit log shows submitted, approved, executed with
// before/after hashes, and `vigil audit verify` passes.
func TestApprovalEndToEndWithRealMPV(t *testing.T) {
	home := t.TempDir()
	sock := filepath.Join(home, "mpv.sock")
	wav := filepath.Join(home, "tone.wav")
	mpvtest.WriteWAV(t, wav, 20)
	mpvtest.Start(t, sock)
	cfg := `[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[media]
action_timeout = "30s"

[[devices]]
id = "speaker"
driver = "mpv"
socket = "mpv.sock"
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	must := func(want int, args ...string) string {
		t.Helper()
		out, errs, code := run(t, home, args...)
		if code != want {
			t.Fatalf("vigil %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out
	}
	must(0, "keys", "init")
	tok := strings.TrimSpace(must(0, "lease", "issue", "--sub", "agent:e2e", "--task-id", "e2e-play", "--cap", "MEDIA_PLAY", "--device", "speaker"))
	manifest, _ := json.Marshal(map[string]any{"task_id": "e2e-play", "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": wav, "target_device": "speaker"}})
	mf := filepath.Join(home, "task.json")
	os.WriteFile(mf, manifest, 0o600)

	if out := must(0, "submit", mf); !strings.Contains(out, `"state": "pending"`) {
		t.Fatalf("submit: %s", out)
	}
	if p := mpvtest.Get(t, sock, "path"); p != nil {
		t.Fatalf("mpv is playing %v before any approval", p)
	}
	var pv map[string]any
	json.Unmarshal([]byte(must(0, "preview", "e2e-play", "--json")), &pv)
	if pv["method"] != "IPC" || pv["url"] != "unix://"+sock || !strings.Contains(pv["raw"].(string), "loadfile") {
		t.Fatalf("preview: %v", pv)
	}
	out := must(0, "approve", "e2e-play", "--yes")
	if !strings.Contains(out, `"status": "SUCCESS"`) {
		t.Fatalf("approve: %s", out)
	}
	if p := mpvtest.Get(t, sock, "path"); p != wav {
		t.Fatalf("mpv path = %v, want %s", p, wav)
	}
	if paused := mpvtest.Get(t, sock, "pause"); paused != false {
		t.Fatalf("mpv pause = %v", paused)
	}
	// approving again runs nothing and says it was decided
	must(1, "approve", "e2e-play", "--yes")
	var events []string
	var executed audit.Entry
	audit.Scan(filepath.Join(home, "audit.log"), 0, func(l audit.Line) bool {
		events = append(events, l.Entry.Event)
		if l.Entry.Event == audit.EventExecuted {
			executed = l.Entry
		}
		return true
	})
	if got := strings.Join(events, ","); got != "submitted,approved,executed" {
		t.Fatalf("audit events %s", got)
	}
	if executed.ContentHashBefore == "" || executed.ContentHashBefore == executed.ContentHashAfter || !executed.Success {
		t.Fatalf("executed entry: %+v", executed)
	}
	if out := must(0, "audit", "verify"); !strings.Contains(out, "verified") {
		t.Fatalf("verify: %s", out)
	}
	if out := must(0, "result", "e2e-play"); !strings.Contains(out, `"signature"`) {
		t.Fatalf("result: %s", out)
	}
}
