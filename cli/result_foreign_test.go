package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `vigil result ID` prints ID's answer or nothing: a signed result copied
// from another task verifies, but answers another request, and is refused
// with a clear error and a non-zero exit.
func TestResultRefusesAnotherTasksResult(t *testing.T) {
	h := newCLIHome(t)
	for _, id := range []string{"mine", "theirs"} {
		h.must(0, "submit", h.manifest(id, "1h"))
		h.must(0, "approve", id, "--yes")
	}
	b, err := os.ReadFile(filepath.Join(h.home, "results", "theirs.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(h.home, "results", "mine.json"), b, 0o600)
	out, errs, code := runReal(t, h.home, "result", "mine")
	if code == 0 || strings.Contains(out, "theirs") || !strings.Contains(errs, "not this task's") {
		t.Fatalf("another task's result: exit %d\n%s%s", code, out, errs)
	}
}
