package approval_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// A result file dropped beside a task that is not final (a pending task,
// or one a crash left executing) is the outcome of record only if the
// operator key signed it: an unsigned or altered "success" for a task that
// never ran is not adopted, never logged as executed, and does not stay as
// the task's answer.
func TestRecoveryAdoptsOnlySignedResults(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("forged-pending"))
	h.submit(h.play("forged-executing"))
	for _, id := range []string{"forged-pending", "forged-executing"} {
		rec, _ := h.q.Get(id)
		res := &task.Result{TaskID: id, CapabilityID: "MEDIA_PLAY", Status: task.StatusSuccess,
			Output: []byte(`{"state":"playing"}`), ExecutedAt: "2026-11-22T10:00:00Z", RequestHash: rec.RequestHash,
			Signature: &task.Signature{Alg: task.SignatureAlg, KeyID: "ed25519:0000000000000000", Value: "AAAA"}}
		b, err := task.MarshalResult(res)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.Dir, "results", id+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h.editJSON(h.taskFile("forged-executing", "record.json"), func(m map[string]any) {
		m["state"] = "executing"
		m["decided_by"] = "operator:ada"
	})
	q := h.Open() // recovery
	for _, id := range []string{"forged-pending", "forged-executing"} {
		r, _ := q.Get(id)
		if r.State == Done {
			t.Errorf("%s: an unsigned result was adopted: %s", id, r.State)
		}
		for _, e := range h.entriesFor(id) {
			if e.Event == "executed" {
				t.Errorf("%s: logged as executed from an unsigned result", id)
			}
		}
		if res, err := q.Result(id); err == nil && res.Status == task.StatusSuccess {
			t.Errorf("%s: the unsigned success is still the task's result", id)
		}
	}
	if n := h.runs("movie.mkv"); n != 0 {
		t.Errorf("device ran %d times", n)
	}
	h.events()
}
