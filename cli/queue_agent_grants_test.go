package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An agent home with [queue] agent publishes on its own subject; the
// executor mints the lease of a manifest that brings none under the
// agent's grants: the agent holds no key, and the task is the agent's.
func TestQueueAgentWithoutLeaseIsMintedByTheExecutor(t *testing.T) {
	r := newNatsRig(t)
	appendConfig(t, r.exec.home, `
[[agents]]
name = "kitchen-bot"
token_env = "VIGIL_TEST_KB_TOKEN"
[[agents.grants]]
capabilities = ["MEDIA_PAUSE"]
devices = ["living-room"]
`)
	appendConfig(t, r.agent, "agent = \"kitchen-bot\"\n") // the [queue] section is the file's last
	ex := r.startExecutor("VIGIL_TEST_KB_TOKEN=kitchen-bot-token-0123456789")
	defer ex.stop(t)

	manifest := func(id, capID string) string {
		b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": capID,
			"inputs": map[string]any{"target_device": "living-room"}})
		p := filepath.Join(t.TempDir(), id+".json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	res := r.must(0, r.agent, "agent", "submit", manifest("kb-pause", "MEDIA_PAUSE"))
	var v map[string]any
	if err := json.Unmarshal([]byte(res.out), &v); err != nil || v["state"] != "pending" {
		t.Fatalf("a granted pause without a lease: %v %s %s", err, res.out, res.err)
	}
	var rec struct{ Agent, State string }
	b, err := os.ReadFile(filepath.Join(r.exec.home, "tasks", "kb-pause", "record.json"))
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.Agent != "agent:kitchen-bot" || rec.State != "pending" {
		t.Fatalf("the executor's record: %v %s", err, b)
	}
	if log, _ := os.ReadFile(filepath.Join(r.exec.home, "audit.log")); !strings.Contains(string(log), `"lease_issued"`) {
		t.Fatalf("no lease_issued in the executor's log:\n%s", log)
	}
	refused := r.run(r.agent, "agent", "submit", manifest("kb-stop", "MEDIA_STOP"))
	if refused.code == 0 || !strings.Contains(refused.out+refused.err, "INVALID_LEASE") {
		t.Fatalf("an ungranted stop: exit %d\n%s%s", refused.code, refused.out, refused.err)
	}
}

func appendConfig(t *testing.T, home, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprint(f, text); err != nil {
		t.Fatal(err)
	}
}
