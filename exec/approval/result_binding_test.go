package approval_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

// A signed result answers one task's one request: a result copied from
// another task (signed, so it verifies) or signed for another request under
// this id is never served as this task's answer, nor adopted as its outcome.
func TestResultOfAnotherTaskRefused(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("mine"))
	h.submit(h.h2play("theirs"))
	h.submit(h.play("waiting"))
	for _, id := range []string{"mine", "theirs"} {
		if _, _, err := h.q.Decide(context.Background(), id, Decision{Approve: true, By: "operator:ada"}); err != nil {
			t.Fatal(err)
		}
	}
	res := filepath.Join(h.Dir, "results")
	b, _ := os.ReadFile(filepath.Join(res, "theirs.json"))
	os.WriteFile(filepath.Join(res, "mine.json"), b, 0o600)
	if r, err := h.q.Result("mine"); err == nil || !errors.Is(err, task.ErrNotThisTask) {
		t.Errorf("another task's result served: %+v, %v", r, err)
	}

	// signed by the operator key for this id, but another request
	signer, err := task.LoadSigner(filepath.Join(h.Dir, "keys", lease.OperatorKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	mine, _ := h.q.Get("theirs")
	forged := &task.Result{TaskID: "theirs", CapabilityID: "MEDIA_PLAY", Status: task.StatusSuccess,
		Output: []byte(`{"state":"playing"}`), ExecutedAt: "2026-11-22T10:00:00Z", RequestHash: "0" + mine.RequestHash[1:]}
	if err := signer.Sign(forged); err != nil {
		t.Fatal(err)
	}
	fb, _ := task.MarshalResult(forged)
	os.WriteFile(filepath.Join(res, "theirs.json"), fb, 0o600)
	if r, err := h.q.Result("theirs"); err == nil || !errors.Is(err, task.ErrNotThisTask) {
		t.Errorf("a result for another request served: %+v, %v", r, err)
	}

	// a pending task is not finished by another task's result
	os.WriteFile(filepath.Join(res, "waiting.json"), b, 0o600)
	if r, _ := h.q.Get("waiting"); r.State == Done {
		t.Errorf("a pending task adopted another task's result: %s", r.State)
	}
	if r, err := h.q.Result("waiting"); err == nil && r.TaskID != "waiting" {
		t.Errorf("the pending task's answer is another task's: %+v", r)
	}
	if n := h.runs("other.mkv"); n != 1 {
		t.Errorf("other.mkv ran %d times", n)
	}
}

func (h *harness) h2play(id string) []byte { return h.Play(id, "/media/other.mkv") }
