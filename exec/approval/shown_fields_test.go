package approval_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/internal/flock"
)

// The deadline a person sees and the one that decides come from what was
// recorded at submission, not from record.json's editable expires_at: an
// edited deadline neither keeps the task approvable after the real one nor
// keeps it from expiring (Get is what `vigil serve` expires tasks with).
func TestEditedDeadlineDoesNotExtendIt(t *testing.T) {
	for _, field := range []string{"expires_at", "lease_expires"} {
		h := newHarness(t)
		h.submit(h.play("late"))
		later := h.Clock.Now().Add(24 * time.Hour).Format(time.RFC3339Nano)
		h.editJSON(h.taskFile("late", "record.json"), func(r map[string]any) {
			r[field] = later
			if field == "lease_expires" { // the approval timeout moved too, so only the lease could stop it
				r["expires_at"] = later
			}
		})
		h.Clock.Advance(31 * time.Minute) // past both true deadlines (timeout 10m, lease 30m)
		r, _ := h.q.Get("late")
		if r.State == Pending {
			at, _ := r.Deadline()
			t.Errorf("%s edited: Get after the true deadline still says pending until %s", field, at)
		}
		pend, _ := h.q.Pending()
		for _, p := range pend {
			if p.TaskID == "late" && p.State == Pending {
				t.Errorf("%s edited: listed as pending after the true deadline", field)
			}
		}
		rec, _, err := h.q.Decide(context.Background(), "late", Decision{Approve: true, By: "operator:ada"})
		if err == nil || rec.State == Done || h.runs("movie.mkv") != 0 {
			t.Errorf("%s edited: approve after the true deadline: state %s, err %v, runs %d", field, rec.State, err, h.runs("movie.mkv"))
		}
	}
}

// Decide's approval (not only a task sitting in the list) uses the true
// deadline: the edit is found by the decision itself, with the record
// reloaded under the lock.
func TestEditedDeadlineFoundByTheDecision(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("dl"))
	h.Clock.Advance(11 * time.Minute) // past the 10m timeout, inside the 30m lease
	h.editJSON(h.taskFile("dl", "record.json"), func(r map[string]any) {
		r["expires_at"] = h.Clock.Now().Add(time.Hour).Format(time.RFC3339Nano)
	})
	rec, _, err := h.q.Decide(context.Background(), "dl", Decision{Approve: true, By: "operator:ada"})
	if err == nil || rec.State == Done || h.runs("movie.mkv") != 0 {
		t.Fatalf("approve after the true deadline: state %s, err %v", rec.State, err)
	}
}

// A lease past its exp is never approved, whatever leeway the verifier
// allows for clock skew: the deadline has none.
func TestLeasePastExpNotApprovedWithinLeeway(t *testing.T) {
	h := newHarness(t)
	h.Leeway = 5 * time.Minute
	h.q = h.Open()
	h.Queue = h.q
	h.submit(h.Manifest("lw", "MEDIA_PLAY", map[string]any{"media_uri": "/media/movie.mkv", "target_device": "living-room"}, 3*time.Minute))
	h.editJSON(h.taskFile("lw", "record.json"), func(r map[string]any) {
		r["lease_expires"] = h.Clock.Now().Add(time.Hour).Format(time.RFC3339Nano)
	})
	h.Clock.Advance(4 * time.Minute) // past exp, within the leeway
	rec, _, err := h.q.Decide(context.Background(), "lw", Decision{Approve: true, By: "operator:ada"})
	if err == nil || rec.State == Done || h.runs("movie.mkv") != 0 {
		t.Fatalf("approve of a lease past its exp: state %s, err %v", rec.State, err)
	}
}

// Who asked is what the submitted entry says: an edited agent (or another
// field the person is shown) is tampering, and no screen shows the edit.
func TestEditedAgentIsTampered(t *testing.T) {
	for _, field := range []string{"agent", "token_jti", "device", "source", "caps"} {
		h := newHarness(t)
		h.submit(h.play("who"))
		h.editJSON(h.taskFile("who", "record.json"), func(r map[string]any) {
			r[field] = "agent:trusted"
			if field == "caps" {
				r[field] = []any{"MEDIA_PLAY", "MEDIA_STOP"}
			}
		})
		r, _ := h.q.Get("who")
		if r.State == Pending || r.Agent == "agent:trusted" || r.TokenJTI == "agent:trusted" || r.Device == "agent:trusted" ||
			r.Source == "agent:trusted" || len(r.Caps) != 1 {
			t.Errorf("%s edited: Get shows %s agent %q jti %q device %q source %q caps %v", field, r.State, r.Agent, r.TokenJTI,
				r.Device, r.Source, r.Caps)
		}
		_, _, err := h.q.Decide(context.Background(), "who", Decision{Approve: true, By: "operator:ada"})
		var de *DecidedError
		if !errors.Is(err, ErrTampered) && !(errors.As(err, &de) && de.State == Tampered) {
			t.Errorf("%s edited: approve: %v", field, err)
		}
		if h.runs("movie.mkv") != 0 {
			t.Errorf("%s edited: the task ran", field)
		}
	}
}

// A tamper message says what differs: never "recorded X, now X".
func TestTamperMessageSaysWhatDiffers(t *testing.T) {
	same := regexp.MustCompile(`recorded (sha256:[0-9a-f]+), now (sha256:[0-9a-f]+)`)
	for _, field := range []string{"capability_id", "agent"} {
		h := newHarness(t)
		h.submit(h.play("msg"))
		h.editJSON(h.taskFile("msg", "record.json"), func(r map[string]any) {
			if field == "capability_id" {
				r[field] = "MEDIA_PAUSE"
			} else {
				r[field] = "agent:other"
			}
		})
		_, _, err := h.q.Decide(context.Background(), "msg", Decision{Approve: true, By: "operator:ada"})
		if err == nil {
			t.Fatalf("%s edited: approved", field)
		}
		if m := same.FindStringSubmatch(err.Error()); m != nil && m[1] == m[2] {
			t.Errorf("%s edited: the message repeats one hash: %v", field, err)
		}
		if !strings.Contains(err.Error(), field) && !strings.Contains(err.Error(), strings.TrimSuffix(field, "_id")) {
			t.Errorf("%s edited: the message does not name what differs: %v", field, err)
		}
		if r, _ := h.q.Get("msg"); r.Error == nil || same.MatchString(r.Error.Message) && strings.Count(r.Error.Message, r.RequestHash) > 1 {
			t.Errorf("%s edited: the result's message: %+v", field, r.Error)
		}
	}
}

// A finished task's agent edited in record.json is shown as the log has it,
// in Get and in the decided list, with the edit named.
func TestEditedAgentOfAFinishedTaskShownFromTheLog(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("old"))
	if _, _, err := h.q.Decide(context.Background(), "old", Decision{Approve: true, By: "operator:ada"}); err != nil {
		t.Fatal(err)
	}
	h.editJSON(h.taskFile("old", "record.json"), func(r map[string]any) { r["agent"] = "agent:trusted" })
	r, _ := h.q.Get("old")
	if r.Agent != "agent:planner" || !strings.Contains(r.Damage, "agent:trusted") {
		t.Errorf("Get: agent %q, damage %q", r.Agent, r.Damage)
	}
	dec, _ := h.q.Decided(10)
	if len(dec) != 1 || dec[0].Agent != "agent:planner" || dec[0].State != Done {
		t.Errorf("Decided: %+v", dec)
	}
}

// A listing whose repair cannot mark an edited record tampered (another
// process holds its lock) still never shows the edit as the task's: the
// task is shown Damaged, with the log's agent.
func TestEditedAgentWithBusyLockShownDamaged(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("busy"))
	h.editJSON(h.taskFile("busy", "record.json"), func(r map[string]any) { r["agent"] = "agent:trusted" })
	unlock, err := flock.Lock(h.taskFile("busy", "lock"))
	if err != nil {
		t.Fatal(err)
	}
	pend, _ := h.q.Pending()
	unlock()
	if len(pend) != 1 || pend[0].State != Damaged || pend[0].Agent != "agent:planner" || !strings.Contains(pend[0].Damage, "agent") {
		t.Fatalf("listing with the lock busy: %+v", pend)
	}
	if r, _ := h.q.Get("busy"); r.State != Tampered || r.Agent != "agent:planner" {
		t.Fatalf("Get once the lock is free: %s %q", r.State, r.Agent)
	}
}
