package approval_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// A manifest edited after submission is tampering even when record.json is
// edited to match and made to look like a crash before its submitted entry
// was logged (log_from moved past that entry): recovery must not log a
// second submitted entry carrying the edited hashes, which would make the
// edited request pass every check and run. A negative log_from does not
// wedge the task either.
func TestEditedRecordCannotRelogItsSubmission(t *testing.T) {
	h := newHarness(t)
	h.submit(h.Play("swap", "/media/movie.mkv"))
	h.submit(h.Play("negative", "/media/negative.mkv"))
	mp := h.taskFile("swap", "manifest.json")
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	evil := []byte(strings.Replace(string(b), "/media/movie.mkv", "/media/evil.mkv", 1))
	if err := os.WriteFile(mp, evil, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := task.ParseManifest(evil)
	if err != nil {
		t.Fatal(err)
	}
	rh, _ := m.RequestHash()
	fi, _ := os.Stat(h.AuditPath())
	h.editJSON(h.taskFile("swap", "record.json"), func(r map[string]any) {
		r["manifest_hash"] = sha(evil)
		r["request_hash"] = rh
		delete(r, "plan_hash")
		delete(r, "submitted_seq")
		delete(r, "submitted_offset")
		r["log_from"] = fi.Size()
	})
	h.editJSON(h.taskFile("negative", "record.json"), func(r map[string]any) { r["log_from"] = -5 })

	q := h.Open() // recovery
	_, _, err = q.Decide(context.Background(), "swap", Decision{Approve: true, By: "operator:ada"})
	r, _ := q.Get("swap")
	if !errors.Is(err, ErrTampered) && !isDecided(err, Tampered) || r.State != Tampered {
		t.Errorf("approve of an edited request: %v, state %s", err, r.State)
	}
	if n := h.runs("evil.mkv"); n != 0 {
		t.Errorf("the edited request reached the device %d times", n)
	}
	if ev := eventsOf(h.entriesFor("swap")); ev != "submitted,tampered" {
		t.Errorf("log: %s", ev)
	}
	if _, res, err := q.Decide(context.Background(), "negative", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Errorf("approve with a negative log_from: %v", err)
	}
	if ev := eventsOf(h.entriesFor("negative")); ev != "submitted,approved,executed" {
		t.Errorf("negative: log %s", ev)
	}
}
