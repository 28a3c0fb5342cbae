package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
)

type harness struct {
	*approvaltest.Env
	q *Queue
}

func newHarness(t *testing.T) *harness {
	e := approvaltest.New(t)
	return &harness{Env: e, q: e.Queue}
}

func (h *harness) play(id string) []byte     { return h.Play(id, "/media/movie.mkv") }
func (h *harness) submit(raw []byte) Outcome { return h.Submit(raw) }
func (h *harness) events() []string          { return h.Events() }
func (h *harness) manifest(id, capID string, in map[string]any, ttl time.Duration, caps ...string) []byte {
	return h.Manifest(id, capID, in, ttl, caps...)
}

func (h *harness) simState() media.SimState {
	h.T.Helper()
	var st media.SimState
	b, err := os.ReadFile(filepath.Join(h.SimDir(), "living-room.json"))
	if errors.Is(err, os.ErrNotExist) {
		return media.SimState{State: "idle"}
	}
	if err != nil {
		h.T.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		h.T.Fatal(err)
	}
	return st
}

func TestSubmitPreviewApproveExecutes(t *testing.T) {
	h := newHarness(t)
	if out := h.submit(h.play("t1")); out.State != "pending" {
		t.Fatalf("submit: %+v", out)
	}
	if st := h.simState(); st.State != "idle" {
		t.Fatalf("the device changed before any approval: %+v", st)
	}
	v, err := h.q.Preview(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if v.Preview.Method != "SIM" || v.Preview.URL != "sim://living-room" || !v.LeaseValid {
		t.Fatalf("preview: %+v", v)
	}
	if !strings.HasPrefix(v.Preview.EstimatedEffect, "now: idle → Play /media/movie.mkv on living-room") {
		t.Fatalf("effect = %q", v.Preview.EstimatedEffect)
	}
	rec, res, err := h.q.Decide(context.Background(), "t1", Decision{Approve: true, By: "operator:ada", PreviewHash: v.BindingHash})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != Done || res == nil || res.Status != task.StatusSuccess || res.ContentHashBefore == res.ContentHashAfter {
		t.Fatalf("approve: %+v %+v", rec, res)
	}
	if st := h.simState(); st.State != "playing" || st.MediaURI != "/media/movie.mkv" {
		t.Fatalf("device did not play: %+v", st)
	}
	if got, want := strings.Join(h.events(), ","), "submitted,approved,executed"; got != want {
		t.Fatalf("audit events %s, want %s", got, want)
	}
	// a second submission of the same task returns its state, runs nothing
	if out := h.submit(h.play("t1")); out.State != "done" {
		t.Fatalf("resubmit: %+v", out)
	}
	if _, _, err := h.q.Decide(context.Background(), "t1", Decision{Approve: true, By: "operator:bob"}); !isDecided(err, Done) {
		t.Fatalf("second approval: %v", err)
	}
}

func isDecided(err error, s State) bool {
	var de *DecidedError
	return errors.As(err, &de) && de.State == s
}

func TestDenyIsFinalAndMasked(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("t2"))
	rec, res, err := h.q.Decide(context.Background(), "t2", Decision{By: "operator:ada", Reason: "card 4111 1111 1111 1111 is mine"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != Denied || res.Error == nil || res.Error.Code != task.ApprovalDenied {
		t.Fatalf("deny: %+v %+v", rec, res)
	}
	b, _ := os.ReadFile(h.AuditPath())
	if strings.Contains(string(b), "4111 1111 1111 1111") || !strings.Contains(string(b), "****-****-****-1111") {
		t.Fatalf("denial reason not masked in the audit log:\n%s", b)
	}
	if st := h.simState(); st.State != "idle" {
		t.Fatalf("a denied task touched the device: %+v", st)
	}
}

func TestFirstDecisionWinsAcrossGoroutines(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("race"))
	var wg sync.WaitGroup
	var wins, lost atomic.Int32
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, err := h.q.Decide(context.Background(), "race", Decision{Approve: i%2 == 0, By: fmt.Sprintf("operator:%d", i), Reason: "no"})
			var de *DecidedError
			switch {
			case err == nil:
				wins.Add(1)
			case errors.As(err, &de):
				lost.Add(1)
			default:
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if wins.Load() != 1 || lost.Load() != 19 {
		t.Fatalf("wins %d lost %d", wins.Load(), lost.Load())
	}
	decisions := 0
	for _, e := range h.events() {
		if e == audit.EventApproved || e == audit.EventDenied {
			decisions++
		}
	}
	if decisions != 1 {
		t.Fatalf("%d decisions recorded", decisions)
	}
}

func TestExpiryIsATimeoutNotADenial(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("slow"))
	h.Clock.Advance(10*time.Minute + time.Second)
	r, err := h.q.Get("slow")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != Expired || r.Error.Code != task.ApprovalTimeout {
		t.Fatalf("record: %+v", r)
	}
	res, err := h.Results.Load("slow")
	if err != nil || res.Error.Code != task.ApprovalTimeout {
		t.Fatalf("result: %+v %v", res, err)
	}
	if _, _, err := h.q.Decide(context.Background(), "slow", Decision{Approve: true, By: "operator:ada"}); !isDecided(err, Expired) {
		t.Fatalf("approve after expiry: %v", err)
	}
	ev := strings.Join(h.events(), ",")
	if ev != "submitted,expired" {
		t.Fatalf("audit: %s", ev)
	}
}

// An approval at the deadline's instant loses to the timeout.
func TestExpiryAgainstApprovalAtTheSameInstant(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("edge"))
	h.Clock.Advance(10 * time.Minute)
	if _, _, err := h.q.Decide(context.Background(), "edge", Decision{Approve: true, By: "operator:ada"}); !isDecided(err, Expired) {
		t.Fatalf("approval at the deadline: %v", err)
	}
	if st := h.simState(); st.State != "idle" {
		t.Fatal("an expired task ran")
	}
}

func TestLeaseExpiringWhilePendingExpiresTheTask(t *testing.T) {
	h := newHarness(t)
	raw := h.manifest("short", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, time.Minute)
	h.submit(raw)
	h.Clock.Advance(2 * time.Minute)
	rec, res, err := h.q.Decide(context.Background(), "short", Decision{Approve: true, By: "operator:ada"})
	if !isDecided(err, Expired) {
		t.Fatalf("approving after the lease expired: %v", err)
	}
	if rec.State != Expired || res == nil || res.Error.Code != task.LeaseExpired || rec.DecidedBy != "" {
		t.Fatalf("got %+v %+v", rec, res)
	}
	if st := h.simState(); st.State != "idle" {
		t.Fatal("a task with an expired lease ran")
	}
}

func TestApprovalBindsToThePreviewSeen(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("bind"))
	_, _, err := h.q.Decide(context.Background(), "bind", Decision{Approve: true, By: "operator:ada", PreviewHash: "0123"})
	if !errors.Is(err, ErrPreviewChanged) {
		t.Fatalf("stale preview hash accepted: %v", err)
	}
	if r, _ := h.q.Get("bind"); r.State != Pending {
		t.Fatalf("a refused approval changed state: %s", r.State)
	}
}

func TestRejections(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name string
		raw  []byte
		code task.Code
	}{
		{"garbage", []byte("{not json"), task.ExecutionFailed},
		{"unknown capability", h.manifest("u1", "MEDIA_EJECT", map[string]any{"target_device": "living-room"}, time.Hour), task.UnsupportedCapability},
		{"device not allowlisted", h.manifest("u2", "MEDIA_STOP", map[string]any{"target_device": "garage"}, time.Hour), task.ExecutionFailed},
		{"capability outside the lease", h.manifest("u3", "MEDIA_STOP", map[string]any{"target_device": "living-room"}, time.Hour, "MEDIA_PLAY"), task.UnsupportedCapability},
		{"search phrase as media", h.manifest("u4", "MEDIA_PLAY", map[string]any{"media_uri": "something relaxing", "target_device": "living-room"}, time.Hour), task.ExecutionFailed},
	}
	for _, c := range cases {
		out := h.submit(c.raw)
		if out.State != "rejected" || out.Error == nil || out.Error.Code != c.code {
			t.Errorf("%s: %+v", c.name, out)
		}
	}
	for _, e := range h.events() {
		if e != audit.EventRejected {
			t.Fatalf("unexpected audit event %s", e)
		}
	}
	// the same task_id with other inputs is refused
	h.submit(h.play("dup"))
	other := h.manifest("dup", "MEDIA_PLAY", map[string]any{"media_uri": "/media/other.mkv", "target_device": "living-room"}, time.Hour)
	if out := h.submit(other); out.State != "rejected" {
		t.Fatalf("task_id reuse: %+v", out)
	}
}

func TestInboxPicksUpAndRejects(t *testing.T) {
	h := newHarness(t)
	newDir := h.q.InboxNew()
	os.MkdirAll(newDir, 0o700)
	os.WriteFile(filepath.Join(newDir, "a.json"), h.play("inbox-ok"), 0o600)
	os.WriteFile(filepath.Join(newDir, "b.json"), []byte(`{"task_id":"bad"}`), 0o600)
	outs, err := h.q.SweepInbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0].State != "pending" || outs[1].State != "rejected" {
		t.Fatalf("outcomes: %+v", outs)
	}
	reason, err := os.ReadFile(filepath.Join(h.InboxDir(), "rejected", "b.json.reason.json"))
	if err != nil || !strings.Contains(string(reason), "capability_id") {
		t.Fatalf("rejection file: %s %v", reason, err)
	}
	if left, _ := os.ReadDir(newDir); len(left) != 0 {
		t.Fatalf("inbox not emptied: %v", left)
	}
	if r, _ := h.q.Get("inbox-ok"); r.Source != "inbox" || r.State != Pending {
		t.Fatalf("record: %+v", r)
	}
}

func TestReconcileAfterCrash(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("was-approved"))
	h.submit(h.play("was-executing"))
	// simulate crashes by writing the records a killed process leaves behind
	for id, st := range map[string]State{"was-approved": Approved, "was-executing": Executing} {
		p := filepath.Join(h.TasksDir(), id, "record.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r Record
		json.Unmarshal(b, &r)
		now := h.Clock.Now()
		r.State, r.DecidedBy, r.DecidedAt, r.PreviewHash = st, "operator:ada", &now, "h"
		fi, _ := os.Stat(h.AuditPath())
		from := fi.Size()
		r.LogFrom = &from
		b, _ = json.Marshal(r)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if st == Approved { // killed after the approval reached the log (A2)
			if _, err := h.Audit.Append(audit.Entry{Actor: "operator:ada", Event: audit.EventApproved, TaskID: id,
				Capability: "MEDIA_PLAY", Success: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	q2 := h.Open() // a restart reconciles
	a, _ := q2.Get("was-approved")
	e, _ := q2.Get("was-executing")
	if a.State != Done {
		t.Fatalf("approved task not run on restart: %+v", a)
	}
	if e.State != Failed || e.Error == nil || !strings.Contains(e.Error.Message, "interrupted") {
		t.Fatalf("interrupted execution: %+v", e)
	}
}

// No audit, no action: when the approval cannot be written to the audit log
// the task stays pending, nothing runs, and no later process runs it either.
func TestApprovalNeedsTheAuditLog(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("unaudited"))
	f, _ := os.OpenFile(h.AuditPath(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("garbage\n")
	f.Close()
	if _, _, err := h.q.Decide(context.Background(), "unaudited", Decision{Approve: true, By: "operator:ada"}); err == nil {
		t.Fatal("approval succeeded without an audit entry")
	}
	h.Open() // another process opens the queue and reconciles
	if r, _ := h.q.Get("unaudited"); r.State != Pending {
		t.Fatalf("state %s", r.State)
	}
	if st := h.simState(); st.State != "idle" {
		t.Fatalf("the device ran an unaudited approval: %+v", st)
	}
}

// A result stored before a crash left the record pending is settled on open.
func TestReconcileSettlesFromAStoredResult(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("half-denied"))
	h.submit(h.play("other"))
	if _, _, err := h.q.Decide(context.Background(), "half-denied", Decision{By: "operator:ada", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	// roll the record back to pending, as a crash before its save would leave it
	p := filepath.Join(h.TasksDir(), "half-denied", "record.json")
	b, _ := os.ReadFile(p)
	var r Record
	json.Unmarshal(b, &r)
	r.State, r.Error = Pending, nil
	b, _ = json.Marshal(r)
	os.WriteFile(p, b, 0o600)
	q := h.Open()
	if got, _ := q.Get("half-denied"); got.State != Denied {
		t.Fatalf("state %s", got.State)
	}
	if _, _, err := q.Decide(context.Background(), "half-denied", Decision{Approve: true, By: "operator:bob"}); !isDecided(err, Denied) {
		t.Fatalf("approve after a denial: %v", err)
	}
	if st := h.simState(); st.State != "idle" {
		t.Fatal("a denied task ran")
	}
}

// Four queues (as four processes would) sweep one inbox at once: every file
// is handled exactly once and no sweep fails.
func TestConcurrentSweepsHandleEachFileOnce(t *testing.T) {
	h := newHarness(t)
	dir := h.q.InboxNew()
	os.MkdirAll(dir, 0o700)
	for i := 0; i < 40; i++ {
		raw := h.play(fmt.Sprintf("in-%02d", i))
		if i%4 == 0 {
			raw = []byte(fmt.Sprintf(`{"task_id":"bad-%02d"}`, i))
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("in-%02d.json", i)), raw, 0o600)
	}
	queues := []*Queue{h.q, h.Open(), h.Open(), h.Open()}
	var wg sync.WaitGroup
	var handled atomic.Int32
	for _, q := range queues {
		wg.Add(1)
		go func(q *Queue) {
			defer wg.Done()
			outs, err := q.SweepInbox(context.Background())
			if err != nil {
				t.Error(err)
			}
			handled.Add(int32(len(outs)))
		}(q)
	}
	wg.Wait()
	if handled.Load() != 40 {
		t.Fatalf("%d outcomes for 40 files", handled.Load())
	}
	counts := map[string]int{}
	for _, e := range h.events() {
		counts[e]++
	}
	if counts["submitted"] != 30 || counts["rejected"] != 10 {
		t.Fatalf("audit counts %v", counts)
	}
}
