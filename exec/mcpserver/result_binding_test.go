package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
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

// bucketReader is a queue that hands out whatever it holds, as a shared
// queue's bucket does.
type bucketReader struct {
	rec approval.Record
	res *task.Result
}

func (f bucketReader) Get(string) (approval.Record, error) { return f.rec, nil }
func (f bucketReader) Result(string) (*task.Result, error) { return f.res, nil }
func (f bucketReader) Changes(ctx context.Context) (<-chan approval.Change, error) {
	return nil, errors.New("none")
}

// get_task_result's own read checks the result against the task whatever
// queue it reads (the shared queue's reader does not): another task's, or
// another request's, is an error.
func TestMCPStatusRefusesAForeignResultFromAnyQueue(t *testing.T) {
	rec := approval.Record{TaskID: "mine", State: approval.Done, RequestHash: strings.Repeat("b", 64)}
	for _, res := range []*task.Result{
		{TaskID: "theirs", RequestHash: rec.RequestHash},
		{TaskID: "mine", RequestHash: strings.Repeat("a", 64)},
	} {
		if _, got, err := status(bucketReader{rec: rec, res: res}, "mine"); got != nil || !errors.Is(err, task.ErrNotThisTask) {
			t.Errorf("result %s/%s: served %v, err %v", res.TaskID, res.RequestHash[:4], got, err)
		}
	}
	ok := &task.Result{TaskID: "mine", RequestHash: rec.RequestHash}
	if _, got, err := status(bucketReader{rec: rec, res: ok}, "mine"); got != ok || err != nil {
		t.Errorf("the task's own result: %v, %v", got, err)
	}
}
