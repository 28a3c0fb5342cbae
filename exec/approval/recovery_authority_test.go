package approval_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// runs counts how often the sim device was sent uri.
func (h *harness) runs(uri string) int {
	b, _ := os.ReadFile(filepath.Join(h.SimDir(), "living-room.journal"))
	return strings.Count(string(b), uri)
}

// The log is the authority on approvals: recovery runs an approved record
// only when the audit log holds its approval and no outcome yet. A record
// edited by hand to say approved never reaches the device — tampered when
// no crash can leave it, rolled back to pending when it looks like a crash
// before the approval was logged — and a finished task rolled back to
// approved is not run a second time. A real crash after the approval was
// logged still runs it, once.
func TestRecoveryRunsOnlyApprovalsTheLogHolds(t *testing.T) {
	h := newHarness(t)
	uri := func(id string) string { return "/media/" + id + ".mkv" }
	for _, id := range []string{"forged", "forged-from", "rerun", "logged"} {
		h.submit(h.Play(id, uri(id)))
	}
	// a finished task, to be rolled back
	if _, res, err := h.q.Decide(t.Context(), "rerun", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatalf("approve: %v", err)
	}
	end := func() int64 {
		st, err := os.Stat(h.AuditPath())
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	approve := func(id string, logFrom *int64) {
		h.editJSON(h.taskFile(id, "record.json"), func(m map[string]any) {
			m["state"] = "approved"
			m["decided_by"] = "operator:mallory"
			m["decided_at"] = h.Clock.Now().Format("2006-01-02T15:04:05Z")
			m["preview_hash"] = "forged"
			delete(m, "finished_at")
			delete(m, "error")
			delete(m, "log_from")
			if logFrom != nil {
				m["log_from"] = *logFrom
			}
		})
	}
	approve("forged", nil)
	from := end()
	approve("forged-from", &from)
	approve("rerun", nil)
	os.Remove(filepath.Join(h.Dir, "results", "rerun.json"))
	// what a crash right after the approved entry (A2) leaves
	from = end()
	approve("logged", &from)
	if _, err := h.Audit.Append(audit.Entry{Actor: "operator:ada", Event: audit.EventApproved, TaskID: "logged",
		Capability: "MEDIA_PLAY", Target: "living-room", Success: true}); err != nil {
		t.Fatal(err)
	}

	q := h.Open() // recovery
	state := func(id string) State {
		r, err := q.Get(id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return r.State
	}
	for id, want := range map[string]struct {
		state  State
		runs   int
		events string
	}{
		"forged":      {Tampered, 0, "submitted,tampered"},
		"forged-from": {Pending, 0, "submitted"},
		"rerun":       {Tampered, 1, "submitted,approved,executed,tampered"},
		"logged":      {Done, 1, "submitted,approved,executed"},
	} {
		if got := state(id); got != want.state {
			t.Errorf("%s: state %s, want %s", id, got, want.state)
		}
		if n := h.runs(uri(id)); n != want.runs {
			t.Errorf("%s: the device ran it %d times, want %d", id, n, want.runs)
		}
		if ev := eventsOf(h.entriesFor(id)); ev != want.events {
			t.Errorf("%s: log %s, want %s", id, ev, want.events)
		}
	}
	// the rolled-back one can still be decided, and runs once
	if _, res, err := q.Decide(t.Context(), "forged-from", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatalf("approve after the rollback: %v", err)
	}
	if n := h.runs(uri("forged-from")); n != 1 {
		t.Fatalf("forged-from ran %d times", n)
	}
	h.events() // the chain verifies
}
