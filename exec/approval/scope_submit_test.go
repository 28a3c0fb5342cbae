package approval_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/task"
)

func scopeEnv(t *testing.T) *approvaltest.Env {
	env := approvaltest.New(t)
	scopes, err := scope.WriteDemo(filepath.Join(env.Dir, "scopes"))
	if err != nil {
		t.Fatal(err)
	}
	env.Scopes = scopes
	env.Queue = env.Open()
	return env
}

func searchInputs(q, sc string, max int) map[string]any {
	return map[string]any{"query": q, "target_scope": sc, "max_results": max}
}

// A search task needs no approval: it runs at submission, its signed result
// is stored, the audit log records it, and a repeat is byte-identical.
func TestSearchTaskRunsAtSubmission(t *testing.T) {
	env := scopeEnv(t)
	raw := env.Manifest("find-budget", "SEARCH_EMAILS", searchInputs("budget", "archive", 10), time.Hour)
	out := env.Submit(raw)
	if out.State != "done" || out.Result == nil || out.Result.Status != task.StatusSuccess || out.Result.Signature == nil {
		t.Fatalf("outcome %+v", out)
	}
	var o scope.Output
	if err := json.Unmarshal(out.Result.Output, &o); err != nil || o.Count != 1 || o.TargetScope != "archive" || o.Results[0].MatchField != "body" {
		t.Fatalf("output %s", out.Result.Output)
	}
	first, _ := json.Marshal(out.Result)
	env.Clock.Advance(time.Minute)
	again := env.Submit(raw)
	second, _ := json.Marshal(again.Result)
	if !bytes.Equal(first, second) {
		t.Fatalf("repeat differs:\n%s\n%s", first, second)
	}
	if got := strings.Join(env.Events(), ","); got != "searched" {
		t.Fatalf("audit %s (a repeat must not run again)", got)
	}
	// and from another process
	mf := filepath.Join(env.Dir, "m.json")
	os.WriteFile(mf, raw, 0o600)
	c := helper(t, env.Dir, "VIGIL_HELPER=search", "VIGIL_MANIFEST="+mf)
	b, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.IndexByte(b, '{'); i < 0 || !bytes.HasPrefix(b[i:], first) {
		t.Fatalf("other process got:\n%s\nwant:\n%s", b, first)
	}
}

func TestSearchTaskLeaseAndScopeChecks(t *testing.T) {
	env := scopeEnv(t)
	cases := []struct {
		name  string
		raw   []byte
		state string
		code  task.Code
	}{
		{"capability not leased", env.Manifest("s1", "SEARCH_FILES", searchInputs("a", "mail", 5), time.Hour, "SEARCH_EMAILS"), "rejected", task.UnsupportedCapability},
		{"scope not allowlisted", env.Manifest("s2", "SEARCH_DATASETS", searchInputs("Ada", "payroll", 5), time.Hour), "failed", task.ScopeNotAllowed},
		{"query too long", env.Manifest("s3", "SEARCH_DATASETS", searchInputs(strings.Repeat("x", 4097), "contacts", 5), time.Hour), "failed", task.InvalidQuery},
		{"max_results out of range", env.Manifest("s4", "SEARCH_DATASETS", searchInputs("Ada", "contacts", 1001), time.Hour), "failed", task.InvalidQuery},
	}
	for _, c := range cases {
		out := env.Submit(c.raw)
		code := task.Code("")
		if out.Error != nil {
			code = out.Error.Code
		} else if out.Result != nil && out.Result.Error != nil {
			code = out.Result.Error.Code
		}
		if out.State != c.state || code != c.code {
			t.Errorf("%s: %+v (code %s)", c.name, out, code)
		}
	}
	// an expired lease
	raw := env.Manifest("s5", "SEARCH_DATASETS", searchInputs("Ada", "contacts", 5), time.Minute)
	env.Clock.Advance(2 * time.Minute)
	if out := env.Submit(raw); out.State != "rejected" || out.Error.Code != task.LeaseExpired {
		t.Fatalf("expired lease: %+v", out)
	}
}
