package approval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// A finished task rolled back to pending with its approved and executed
// entries edited in place (renamed to another task, same length) so the
// log seems to hold no decision: the decision reads the task's entries from
// its submitted entry on through the chain, finds the break and fails
// closed; the device does not run the task a second time.
func TestDecisionReadsTheTaskThroughTheChain(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("rolled"))
	if _, res, err := h.q.Decide(context.Background(), "rolled", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatalf("approve: %v", err)
	}
	h.submit(h.play("later")) // the log's end stays intact
	h.editJSON(h.taskFile("rolled", "record.json"), func(m map[string]any) {
		m["state"] = "pending"
		for _, k := range []string{"decided_at", "decided_by", "decided_via", "preview_hash", "finished_at", "error"} {
			delete(m, k)
		}
	})
	os.Remove(filepath.Join(h.Dir, "results", "rolled.json"))
	b, _ := os.ReadFile(h.AuditPath())
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"task_id":"rolled"`) && !strings.Contains(l, `"event":"submitted"`) {
			lines[i] = strings.Replace(l, `"task_id":"rolled"`, `"task_id":"rolleX"`, 1)
		}
	}
	os.WriteFile(h.AuditPath(), []byte(strings.Join(lines, "")), 0o600)
	_, _, err := h.q.Decide(context.Background(), "rolled", Decision{Approve: true, By: "operator:mallory"})
	if err == nil {
		t.Fatal("a second approval succeeded")
	}
	if n := h.runs("movie.mkv"); n != 1 {
		t.Fatalf("the device ran it %d times", n)
	}
	if r, _ := h.q.Get("rolled"); r.State == Done || r.State == Approved {
		t.Fatalf("state %s", r.State)
	}
}
