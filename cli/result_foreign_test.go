package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
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

// Over the shared queue too: a result signed by the executor for another
// task, or for another request under this id, put in this task's view, is
// refused (exit 1, the reason on stderr), never printed as its answer.
func TestQueueResultRefusesAnotherTasksResult(t *testing.T) {
	r := newNatsRig(t)
	_, js, _ := r.client("agent")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, natsqueue.TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := task.LoadSigner(filepath.Join(r.exec.home, "keys", lease.OperatorKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := os.ReadFile(filepath.Join(r.exec.home, "keys", lease.OperatorPubFile))
	os.MkdirAll(filepath.Join(r.agent, "keys"), 0o700)
	if err := os.WriteFile(filepath.Join(r.agent, "keys", lease.OperatorPubFile), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	mine := strings.Repeat("b", 64)
	for _, c := range []struct{ resTask, resHash string }{{"mcpq-theirs", strings.Repeat("a", 64)}, {"mcpq-mine", strings.Repeat("a", 64)}} {
		res := &task.Result{TaskID: c.resTask, CapabilityID: "MEDIA_PLAY", Status: task.StatusSuccess,
			Output: json.RawMessage(`{}`), ExecutedAt: time.Now().UTC().Format(time.RFC3339), RequestHash: c.resHash}
		if err := signer.Sign(res); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(natsqueue.TaskView{Record: approval.Record{TaskID: "mcpq-mine", State: approval.Done, RequestHash: mine}, Result: res})
		if _, err := kv.Put(ctx, natsqueue.TaskKey("mcpq-mine"), b); err != nil {
			t.Fatal(err)
		}
		got := r.must(1, r.agent, "agent", "result", "mcpq-mine")
		if strings.Contains(got.out, "SUCCESS") || !strings.Contains(got.err, "not this task's") {
			t.Fatalf("result of %s/%s served for mcpq-mine: %s%s", c.resTask, c.resHash[:4], got.out, got.err)
		}
	}
}
