package approval_test

import (
	"context"
	"os"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// log_from only ever narrows recovery's search for an entry; a log_from
// edited past the entry (or past the log's end) must not make recovery
// write a second decision or a second executed entry for a finished task.
func TestLogFromPastTheEntryLogsNothingTwice(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("ran"))
	h.submit(h.play("said-no"))
	h.submit(h.play("was-running"))
	ctx := context.Background()
	if _, res, err := h.q.Decide(ctx, "ran", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatal(err)
	}
	if _, _, err := h.q.Decide(ctx, "said-no", Decision{By: "operator:ada", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if _, res, err := h.q.Decide(ctx, "was-running", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatal(err)
	}
	fi, _ := os.Stat(h.AuditPath())
	past := fi.Size() + 4096
	for _, id := range []string{"ran", "said-no", "was-running"} {
		h.editJSON(h.taskFile(id, "record.json"), func(m map[string]any) {
			m["log_from"] = past
			if id == "was-running" { // executing with its result stored: E3/E4
				m["state"] = "executing"
				delete(m, "finished_at")
			}
		})
	}
	q := h.Open() // recovery
	for id, want := range map[string]string{
		"ran":         "submitted,approved,executed",
		"said-no":     "submitted,denied",
		"was-running": "submitted,approved,executed",
	} {
		if ev := eventsOf(h.entriesFor(id)); ev != want {
			t.Errorf("%s: log %s, want %s", id, ev, want)
		}
		if r, _ := q.Get(id); r.LogFrom != nil || !r.State.Final() {
			t.Errorf("%s: left %s with log_from", id, r.State)
		}
	}
	if n := h.runs("movie.mkv"); n != 2 {
		t.Errorf("device ran %d times, want 2", n)
	}
}
