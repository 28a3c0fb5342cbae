package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `vigil result` hands the stored result to an agent: an edited one (its
// signature no longer matches) is refused, exit 1, and not printed as if
// Vigil had signed it.
func TestResultRefusesAnEditedResult(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("edited", "1h"))
	h.must(0, "approve", "edited", "--yes")
	if out := h.must(0, "result", "edited"); !strings.Contains(out, `"SUCCESS"`) {
		t.Fatalf("result: %s", out)
	}
	p := filepath.Join(h.home, "results", "edited.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["executed_at"] = "2020-01-01T00:00:00Z"
	b, _ = json.Marshal(m)
	os.WriteFile(p, b, 0o600)
	out, errs, code := runReal(t, h.home, "result", "edited")
	if code != 1 || strings.Contains(out, "2020-01-01") || !strings.Contains(errs, "signature") {
		t.Fatalf("an edited result: exit %d\n%s%s", code, out, errs)
	}
}
