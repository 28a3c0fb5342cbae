package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/exec/approval"
)

// get_task_result returns a task's own answer or an error: a signed result
// copied from another task is refused, never handed to the agent as this
// task's outcome.
func TestMCPGetTaskResultRefusesAnotherTasksResult(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"mine", "theirs"} {
		f.env.Submit(f.env.Play(id, "/media/"+id+".mkv"))
		if _, _, err := f.env.Queue.Decide(context.Background(), id, approval.Decision{Approve: true, By: "operator:ada"}); err != nil {
			t.Fatal(err)
		}
	}
	res := filepath.Join(f.env.Dir, "results")
	b, _ := os.ReadFile(filepath.Join(res, "theirs.json"))
	os.WriteFile(filepath.Join(res, "mine.json"), b, 0o600)
	cs := f.connect(t, "stdio")
	r, sc := call(t, cs, "get_task_result", map[string]any{"task_id": "mine", "wait_seconds": 0})
	if !r.IsError || sc["task_id"] == "theirs" || strings.Contains(text(r), `"theirs"`) && sc["status"] != nil {
		t.Fatalf("another task's result: %s", text(r))
	}
}
