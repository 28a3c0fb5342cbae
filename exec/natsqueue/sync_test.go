package natsqueue_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// waitState waits (10 s at most) until the bucket's view of id is in state.
func (r *rig) waitState(id string, state approval.State) natsqueue.TaskView {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := r.kv.Watch(ctx, natsqueue.TaskKey(id))
	if err != nil {
		r.t.Fatal(err)
	}
	defer w.Stop()
	var v natsqueue.TaskView
	for {
		select {
		case <-ctx.Done():
			r.t.Fatalf("%s: the view says %q, want %q", id, v.Record.State, state)
		case ent := <-w.Updates():
			if ent == nil {
				continue
			}
			if json.Unmarshal(ent.Value(), &v) == nil && v.Record.State == state {
				return v
			}
		}
	}
}

// TestLocalChangesArePublished: what happens on the executor's host
// without the shared queue — a local submission, a local decision, a
// deadline passed — reaches the bucket by the executor's sync passes
// (which read the open tasks and those the audit log names).
func TestLocalChangesArePublished(t *testing.T) {
	r := newRig(t)
	r.submit("sync-expire") // through the queue: pending
	r.env.Submit(r.env.Play("sync-local", "/media/sync-local.mkv"))
	v := r.waitState("sync-local", approval.Pending)
	if _, _, err := r.env.Queue.Decide(context.Background(), "sync-local", approval.Decision{Approve: true,
		By: "operator:local", Via: approval.ViaCLI, PreviewHash: v.PreviewHash}); err != nil {
		t.Fatal(err)
	}
	if done := r.waitState("sync-local", approval.Done); done.Result == nil {
		t.Fatal("the local decision's view has no result")
	}
	// past the deadline: the next pass (the log grew) expires it
	r.env.Clock.Advance(11 * time.Minute)
	r.env.Submit(r.env.Play("sync-later", "/media/sync-later.mkv"))
	r.waitState("sync-expire", approval.Expired)
	r.waitState("sync-later", approval.Pending)
}
