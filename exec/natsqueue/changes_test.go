package natsqueue_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
)

// nextChange waits for a change naming id (or All) on ch.
func nextChange(t *testing.T, ch <-chan approval.Change, id string) approval.Change {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("changes closed")
			}
			if c.All || slices.Contains(c.IDs, id) {
				return c
			}
		case <-deadline:
			t.Fatalf("no change for %s", id)
		}
	}
}

// TestAgentTasksAsAReader: the agent's side answers as the local queue
// does through approval.Reader (a pending task has no result yet, an
// unknown one is ErrNotFound), and its Changes name the task an operator
// decided, so a waiting call filters the bucket's changes for its own.
func TestAgentTasksAsAReader(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var a approval.Submitter = natsqueue.AgentTasks{Client: r.c, OperatorKey: r.operatorKey()}
	changes, err := a.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := a.Submit(ctx, r.env.Play("rd-1", "/media/rd-1.mkv"), "mcp:test"); err != nil || out.State != "pending" {
		t.Fatalf("submit: %+v %v", out, err)
	}
	nextChange(t, changes, "rd-1")
	if rec, err := a.Get("rd-1"); err != nil || rec.State != approval.Pending {
		t.Fatalf("get: %+v %v", rec, err)
	}
	if _, err := a.Result("rd-1"); !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("result of a pending task: %v", err)
	}
	if _, err := a.Get("rd-none"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	v, _, err := r.c.Get(ctx, "rd-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Decide(ctx, "rd-1", decision("operator:alice@a", true, v.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	for {
		nextChange(t, changes, "rd-1")
		res, err := a.Result("rd-1")
		if errors.Is(err, task.ErrNotFound) {
			continue // the decision, then the outcome
		}
		if err != nil || res.Status != task.StatusSuccess {
			t.Fatalf("result: %+v %v", res, err)
		}
		break
	}
	cancel()
	for range changes { // closes when ctx ends
	}
}

// TestOperatorTasksChangesForEachReader: every Changes call hears every
// change from when it was made; one whose ctx ended is closed, and none
// can be made after Close.
func TestOperatorTasksChangesForEachReader(t *testing.T) {
	r := newRig(t)
	o := r.operator()
	var d approval.Decider = o
	ctx1, cancel1 := context.WithCancel(context.Background())
	c1, err := d.Changes(ctx1)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := d.Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.submit("each-1")
	nextChange(t, c1, "each-1")
	nextChange(t, c2, "each-1")
	cancel1()
	for range c1 {
	}
	o.Close()
	for range c2 { // Close ends every reader
	}
	if _, err := d.Changes(context.Background()); err == nil {
		t.Fatal("Changes after Close")
	}
}
