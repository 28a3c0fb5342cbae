package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
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

// The submitted entry cut from the log's end, with the head moved back so
// the log still verifies and can grow: the task cannot be decided as if it
// had been submitted — the decision finds no submitted entry where the
// record says and the task is tampered; nothing runs.
func TestSubmittedEntryCutWithTheHeadIsTampering(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("first"))
	h.submit(h.play("cut"))
	b, err := os.ReadFile(h.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if !strings.Contains(lines[len(lines)-1], `"task_id":"cut"`) {
		t.Fatalf("last line: %s", lines[len(lines)-1])
	}
	kept := strings.Join(lines[:len(lines)-1], "")
	os.WriteFile(h.AuditPath(), []byte(kept), 0o600)
	var last audit.Entry
	json.Unmarshal([]byte(strings.TrimSpace(lines[len(lines)-2])), &last)
	head, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash, "size": len(kept)})
	os.WriteFile(audit.HeadPath(h.AuditPath()), head, 0o600)
	if rep, err := audit.Verify(h.AuditPath()); err != nil || !rep.OK {
		t.Fatalf("setup: %v %s", err, rep)
	}
	q := h.Open()
	_, _, err = q.Decide(context.Background(), "cut", Decision{Approve: true, By: "operator:ada"})
	if !errors.Is(err, ErrTampered) {
		t.Fatalf("approve: %v", err)
	}
	if n := h.runs("movie.mkv"); n != 0 {
		t.Fatalf("ran %d times", n)
	}
}
