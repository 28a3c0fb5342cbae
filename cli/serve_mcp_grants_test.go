package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/internal/testbin"
)

// withGrants adds alpha's grant (pause and stop the living room) to a
// home withAgents made.
func withGrants(t *testing.T, home string) {
	t.Helper()
	f := filepath.Join(home, "config.toml")
	cfg, _ := os.ReadFile(f)
	cfg = []byte(strings.Replace(string(cfg), `token_file = "agents/alpha.token"`, `token_file = "agents/alpha.token"
lease_ttl = "20m"
[[agents.grants]]
capabilities = ["MEDIA_PAUSE"]
devices = ["living-room"]`, 1))
	if err := os.WriteFile(f, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestServeMCPGrants: `vigil serve --mcp` mints alpha's lease for a
// granted pause sent without one (the task is alpha's, pending; approved
// by a `vigil approve` process it runs: the engine's verifier accepted the
// minted lease at submission and again at execution), refuses an
// ungranted stop naming it, and leaves beta (no grants) to the queue's
// refusal of a call without a lease.
func TestServeMCPGrants(t *testing.T) {
	testbin.FullRunOnly(t, "builds and runs vigil serve --mcp and vigil approve processes")
	h := mcpHome(t)
	withAgents(t, h.home, alphaTok)
	withGrants(t, h.home)
	sv := startServeMCP(t, h, "VIGIL_TEST_BETA_TOKEN="+betaTok)
	alpha, _ := connectMCP(t, sv.url, alphaTok, "claude")

	res, sc := mcpCall(t, alpha, &mcp.CallToolParams{Name: "media_pause",
		Arguments: map[string]any{"task_id": "granted-pause", "target_device": "living-room", "wait_seconds": 0}})
	if res.IsError || sc["state"] != "pending" {
		t.Fatalf("granted pause: %s", mcpText(res))
	}
	b, err := os.ReadFile(filepath.Join(h.home, "tasks", "granted-pause", "record.json"))
	var rec struct {
		Agent string `json:"agent"`
	}
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.Agent != "agent:alpha" {
		t.Fatalf("the task's record (%v): %s", err, b)
	}
	if out, err := h.child("", "approve", "granted-pause", "--yes").CombinedOutput(); err != nil {
		t.Fatalf("approve: %v %s", err, out)
	}
	res, sc = mcpCall(t, alpha, &mcp.CallToolParams{Name: "get_task_result",
		Arguments: map[string]any{"task_id": "granted-pause", "wait_seconds": 30}})
	if res.IsError || sc["status"] != "SUCCESS" {
		t.Fatalf("the granted pause, approved: %s", mcpText(res))
	}
	audit := h.must(0, "audit", "show", "--task", "granted-pause", "--json")
	if i, j := strings.Index(audit, `"lease_issued"`), strings.Index(audit, `"submitted"`); i < 0 || j < i {
		t.Fatalf("the trail is not lease_issued then submitted:\n%s", audit)
	}

	res, sc = mcpCall(t, alpha, &mcp.CallToolParams{Name: "media_stop",
		Arguments: map[string]any{"task_id": "ungranted-stop", "target_device": "living-room", "wait_seconds": 0}})
	e, _ := sc["error"].(map[string]any)
	if !res.IsError || e["code"] != "INVALID_LEASE" || !strings.Contains(e["message"].(string), "agent alpha has no grant for MEDIA_STOP on living-room") {
		t.Fatalf("ungranted stop: %s", mcpText(res))
	}
	if _, err := os.Stat(filepath.Join(h.home, "tasks", "ungranted-stop")); !os.IsNotExist(err) {
		t.Fatalf("a refused call made a task: %v", err)
	}
}

// Grants whose leases the config does not trust refuse the start (exit 2)
// before anything listens, naming the fix.
func TestMCPGrantsNeedATrustedIssuer(t *testing.T) {
	h := newCrashHome(t, "")
	withAgents(t, h.home, alphaTok)
	withGrants(t, h.home)
	f := filepath.Join(h.home, "config.toml")
	cfg, _ := os.ReadFile(f)
	cfg = []byte(strings.Replace(string(cfg), "public_key = \"keys/issuer.pub.pem\"", "public_key = \"keys/operator.pub.pem\"", 1))
	cfg = []byte(strings.Replace(string(cfg), "token_env = \"VIGIL_TEST_BETA_TOKEN\"", "token_file = \"agents/alpha.token2\"", 1))
	if err := os.WriteFile(f, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.home, "agents", "alpha.token2"), []byte("beta-0123456789abcdef01234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runReal(t, h.home, "mcp", "--http", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errs, "leases minted with the issuer key would not verify") ||
		!strings.Contains(errs, `kid = "local"`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
