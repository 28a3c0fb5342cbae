package natsqueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
)

// operator is an operator screen's side of the rig's queue, on its own
// connection.
func (r *rig) operator() *natsqueue.OperatorTasks {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := natsqueue.NewClient(ctx, r.connect())
	if err != nil {
		r.t.Fatal(err)
	}
	o, err := natsqueue.NewOperatorTasks(ctx, c, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(o.Close)
	return o
}

// opChanges follows o's changes as the Approvals pane reads them: the ids,
// or nil when everything may have changed.
func opChanges(t testing.TB, o *natsqueue.OperatorTasks) <-chan []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := o.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan []string)
	go func() {
		defer close(out)
		for c := range ch {
			ids := c.IDs
			if c.All {
				ids = nil
			}
			select {
			case out <- ids:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// waitChange waits until the operator is told that id changed (or that
// everything may have).
func waitChange(t *testing.T, changes <-chan []string, id string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ids, ok := <-changes:
			if !ok {
				t.Fatal("changes closed")
			}
			if ids == nil || slices.Contains(ids, id) {
				return
			}
		case <-deadline:
			t.Fatalf("no change for %s", id)
		}
	}
}

// TestOperatorTasksFollowsAndDecides: a task submitted after the screen
// opened is announced by the bucket's watch and listed pending; its
// preview is the executor's; an approval naming that preview runs it once,
// recorded as this operator, and the task moves to the decided list.
func TestOperatorTasksFollowsAndDecides(t *testing.T) {
	r := newRig(t)
	r.submit("op-before")
	o := r.operator()
	changes := opChanges(t, o)
	if recs, _ := o.Pending(); len(recs) != 1 || recs[0].TaskID != "op-before" {
		t.Fatalf("pending at start: %+v", recs)
	}
	v := r.submit("op-1")
	waitChange(t, changes, "op-1")
	recs, _ := o.Pending()
	if len(recs) != 2 || !slices.ContainsFunc(recs, func(r approval.Record) bool { return r.TaskID == "op-1" }) {
		t.Fatalf("pending after the submit: %+v", recs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pv, err := o.Preview(ctx, "op-1")
	if err != nil || pv.BindingHash != v.PreviewHash || !strings.Contains(pv.Preview.Raw+pv.Preview.EstimatedEffect, "/media/op-1.mkv") {
		t.Fatalf("preview %+v %v", pv, err)
	}
	rec, res, err := o.Decide(ctx, "op-1", approval.Decision{Approve: true, By: "operator:ada@laptop", PreviewHash: pv.BindingHash, Via: "tui"})
	if err != nil || rec.State != approval.Done || res == nil || res.Status != task.StatusSuccess {
		t.Fatalf("decide: %s %+v %v", rec.State, res, err)
	}
	if rec.DecidedBy != "operator:ada@laptop" || r.runs("op-1") != 1 {
		t.Fatalf("decided by %q, runs %d", rec.DecidedBy, r.runs("op-1"))
	}
	if got, err := o.Result("op-1"); err != nil || got.Signature == nil {
		t.Fatalf("result %+v %v", got, err)
	}
	if _, err := o.Result("op-before"); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("a pending task's result: %v", err)
	}
	dec, _ := o.Decided(10)
	if len(dec) != 1 || dec[0].TaskID != "op-1" {
		t.Fatalf("decided: %+v", dec)
	}
	if recs, _ := o.Pending(); len(recs) != 1 {
		t.Fatalf("pending after the decision: %+v", recs)
	}
}

// TestOperatorTasksLosesToAnotherOperator: the decision another operator
// put first wins; this operator is told who, and nothing runs twice.
func TestOperatorTasksLosesToAnotherOperator(t *testing.T) {
	r := newRig(t)
	v := r.submit("op-lost")
	o := r.operator()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.c.Decide(ctx, "op-lost", decision("operator:bob@desk", true, v.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	_, _, err := o.Decide(ctx, "op-lost", approval.Decision{Approve: false, By: "operator:ada@laptop", Reason: "no"})
	var lost *natsqueue.LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "task op-lost already") ||
		!strings.Contains(err.Error(), "by operator:bob@desk") {
		t.Fatalf("second decision: %v", err)
	}
	if out, err := r.c.Outcome(ctx, "op-lost", ""); err != nil || out.Record.DecidedBy != "operator:bob@desk" || r.runs("op-lost") != 1 {
		t.Fatalf("outcome %+v %v runs %d", out.Record, err, r.runs("op-lost"))
	}
}

// TestOperatorTasksRefusesAChangedPreview: an approval naming a preview
// hash that is not the published one changes nothing.
func TestOperatorTasksRefusesAChangedPreview(t *testing.T) {
	r := newRig(t)
	r.submit("op-stale")
	o := r.operator()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, err := o.Decide(ctx, "op-stale", approval.Decision{Approve: true, By: "operator:ada@laptop", PreviewHash: "sha256:" + strings.Repeat("0", 64)})
	if !errors.Is(err, approval.ErrPreviewChanged) {
		t.Fatalf("stale approval: %v", err)
	}
	if rec, _ := o.Get("op-stale"); rec.State != approval.Pending || r.runs("op-stale") != 0 {
		t.Fatalf("after a refused approval: %s, runs %d", rec.State, r.runs("op-stale"))
	}
}

// TestOperatorTasksDenialIsMasked: a reason holding a secret reaches the
// bucket (and the executor's log) masked.
func TestOperatorTasksDenialIsMasked(t *testing.T) {
	r := newRig(t)
	r.submit("op-deny")
	o := r.operator()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret := "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	rec, _, err := o.Decide(ctx, "op-deny", approval.Decision{By: "operator:ada@laptop", Reason: "key " + secret + " leaked"})
	if err != nil || rec.State != approval.Denied || strings.Contains(rec.Reason, secret) || rec.Reason == "" {
		t.Fatalf("deny: %s %q %v", rec.State, rec.Reason, err)
	}
}

// TestOperatorTasksRefreshReadsWhatTheWatchMissed: with the watch stopped
// (as one stalled across a server restart is), a refresh still finds the
// tasks submitted meanwhile and the decisions made on the ones it knew.
func TestOperatorTasksRefreshReadsWhatTheWatchMissed(t *testing.T) {
	r := newRig(t)
	v := r.submit("rf-1")
	o := r.operator()
	o.Close()
	r.submit("rf-2")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.c.Decide(ctx, "rf-1", decision("operator:bob@desk", true, v.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Outcome(ctx, "rf-1", ""); err != nil {
		t.Fatal(err)
	}
	if recs, _ := o.Pending(); len(recs) != 1 || recs[0].TaskID != "rf-1" {
		t.Fatalf("before the refresh: %+v", recs)
	}
	if err := o.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	recs, _ := o.Pending()
	dec, _ := o.Decided(10)
	if len(recs) != 1 || recs[0].TaskID != "rf-2" || len(dec) != 1 || dec[0].TaskID != "rf-1" || dec[0].DecidedBy != "operator:bob@desk" {
		t.Fatalf("after the refresh: pending %+v, decided %+v", recs, dec)
	}
}

// TestOperatorTasksExecutorRefusesAChangedPreview: the bucket's view names
// a preview the executor's request no longer produces (the view was
// rewritten); the approval naming it passes the compare-and-set but the
// executor refuses it, and the operator is told the preview changed.
func TestOperatorTasksExecutorRefusesAChangedPreview(t *testing.T) {
	r := newRig(t)
	r.submit("op-rewritten")
	o := r.operator()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ent, err := r.kv.Get(ctx, natsqueue.TaskKey("op-rewritten"))
	if err != nil {
		t.Fatal(err)
	}
	var v natsqueue.TaskView
	if err := json.Unmarshal(ent.Value(), &v); err != nil {
		t.Fatal(err)
	}
	v.PreviewHash = "sha256:" + strings.Repeat("2", 64)
	b, _ := json.Marshal(v)
	if _, err := r.kv.Update(ctx, natsqueue.TaskKey("op-rewritten"), b, ent.Revision()); err != nil {
		t.Fatal(err)
	}
	pv, err := o.Preview(ctx, "op-rewritten")
	if err != nil || pv.BindingHash != v.PreviewHash {
		t.Fatalf("preview %s %v", pv.BindingHash, err)
	}
	_, _, err = o.Decide(ctx, "op-rewritten", approval.Decision{Approve: true, By: "operator:ada@laptop", PreviewHash: pv.BindingHash})
	if !errors.Is(err, approval.ErrPreviewChanged) {
		t.Fatalf("approval of a rewritten view: %v", err)
	}
	if r.runs("op-rewritten") != 0 {
		t.Fatal("it ran")
	}
}

// TestOperatorTasksWatchOutlivesItsStart: the context that bounded the
// start (ended when NewOperatorTasks returned) does not end the watch: an
// idle screen hears nothing (a watch started over would replay every task
// and say everything changed), and a new task comes as its own change.
func TestOperatorTasksWatchOutlivesItsStart(t *testing.T) {
	r := newRig(t)
	r.submit("idle-1")
	o := r.operator()
	changes := opChanges(t, o)
	select {
	case ids := <-changes:
		t.Fatalf("an idle bucket changed: %q", ids)
	case <-time.After(2500 * time.Millisecond): // past retryWatch, twice
	}
	r.submit("idle-2")
	select {
	case ids := <-changes:
		if len(ids) == 0 || slices.ContainsFunc(ids, func(id string) bool { return id != "idle-2" }) {
			t.Fatalf("change %q, want idle-2's alone", ids)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no change for idle-2")
	}
}

// TestOperatorTasksRestart: a restarted watch tells the screen everything
// may have changed, and follows the bucket as before.
func TestOperatorTasksRestart(t *testing.T) {
	r := newRig(t)
	r.submit("rst-1")
	o := r.operator()
	changes := opChanges(t, o)
	o.Restart()
	// the new watch replays the bucket (its tasks may come as changes of
	// their own first), then says everything may have changed
	deadline := time.After(30 * time.Second)
	for all := false; !all; {
		select {
		case ids := <-changes:
			if ids != nil && !slices.Equal(ids, []string{"rst-1"}) {
				t.Fatalf("after a restart: %q", ids)
			}
			all = ids == nil
		case <-deadline:
			t.Fatal("a restart did not say everything may have changed")
		}
	}
	r.submit("rst-2")
	waitChange(t, changes, "rst-2")
	if recs, _ := o.Pending(); len(recs) != 2 {
		t.Fatalf("pending: %+v", recs)
	}
}

// TestOperatorAgeCountsFromTheAgentsSubmission: the executor's clock (the
// local queue's SubmittedAt) says it took the task an hour from now — as a
// submission that waited for a stopped executor would; the operator's
// records, preview and `pending` count the task's age from when the server
// stored the agent's submission.
func TestOperatorAgeCountsFromTheAgentsSubmission(t *testing.T) {
	r := newRig(t)
	r.env.Clock.Advance(time.Since(r.env.Clock.Now()) + time.Hour)
	t0 := time.Now()
	r.submit("age-1")
	t1 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, _, err := r.c.Get(ctx, "age-1")
	if err != nil {
		t.Fatal(err)
	}
	if raw.Record.SubmittedAt.Before(t1.Add(59 * time.Minute)) {
		t.Fatalf("the executor's record says %s: the rig's clock was not ahead", raw.Record.SubmittedAt)
	}
	within := func(what string, at time.Time) {
		t.Helper()
		// the server's timestamp, on this host's clock
		if at.Before(t0.Add(-time.Second)) || at.After(t1.Add(time.Second)) {
			t.Fatalf("%s: submitted %s, want between %s and %s", what, at, t0, t1)
		}
	}
	if raw.QueuedAt == nil {
		t.Fatal("the view carries no queued_at")
	}
	within("view", *raw.QueuedAt)
	o := r.operator()
	recs, err := o.Pending()
	if err != nil || len(recs) != 1 {
		t.Fatalf("pending %v %v", recs, err)
	}
	within("pending", recs[0].SubmittedAt)
	pv, err := o.Preview(ctx, "age-1")
	if err != nil {
		t.Fatal(err)
	}
	within("preview", pv.Record.SubmittedAt)
	// a decision republishes the view: the time the agent submitted stays
	rec, _, err := o.Decide(ctx, "age-1", approval.Decision{Approve: false, By: "operator:op@h", Reason: "no"})
	if err != nil {
		t.Fatal(err)
	}
	within("decided", rec.SubmittedAt)
	after, _, err := r.c.Get(ctx, "age-1")
	if err != nil || after.QueuedAt == nil || !after.QueuedAt.Equal(*raw.QueuedAt) {
		t.Fatalf("after the decision: queued_at %v, want %v (%v)", after.QueuedAt, raw.QueuedAt, err)
	}
}
