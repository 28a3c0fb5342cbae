package natsqueue_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
)

func (r *rig) operatorKey() ed25519.PublicKey {
	r.t.Helper()
	pub, err := task.LoadPublicKey(filepath.Join(r.env.Dir, "keys", lease.OperatorPubFile))
	if err != nil {
		r.t.Fatal(err)
	}
	return pub
}

// TestAgentTasksSubmitWaitResult: an agent submits through AgentTasks, is
// told the task is pending, is woken by the key's watch when an operator's
// decision was applied, and reads the executor's signed result.
func TestAgentTasksSubmitWaitResult(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := natsqueue.AgentTasks{Client: r.c, OperatorKey: r.operatorKey()}
	out, err := a.Submit(ctx, r.env.Play("ag-1", "/media/ag-1.mkv"), "mcp:test")
	if err != nil || out.State != "pending" || out.TaskID != "ag-1" || out.Result != nil {
		t.Fatalf("submit: %+v %v", out, err)
	}
	rec, res, err := a.Task(ctx, "ag-1")
	if err != nil || rec.State != approval.Pending || res != nil {
		t.Fatalf("pending: %+v %v %v", rec, res, err)
	}
	if rec.Source != "mcp:test" { // recorded as a local MCP submit is
		t.Fatalf("source %q, want mcp:test", rec.Source)
	}
	changes, stop, err := a.TaskChanges(ctx, "ag-1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	v, _, err := r.c.Get(ctx, "ag-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Decide(ctx, "ag-1", decision("operator:alice@a", true, v.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case <-changes:
		case <-ctx.Done():
			t.Fatal("no change signalled before the result")
		}
		if rec, res, err = a.Task(ctx, "ag-1"); err != nil {
			t.Fatal(err)
		}
		if res != nil {
			break
		}
	}
	if rec.State != approval.Done || res.Status != task.StatusSuccess || r.runs("ag-1") != 1 {
		t.Fatalf("result: %s %+v runs=%d", rec.State, res, r.runs("ag-1"))
	}
	// a rejection is the local queue's verdict, and an unknown task is
	// approval.ErrNotFound as locally
	out, err = a.Submit(ctx, []byte(`{"task_id":"ag-bad","capability_id":"MEDIA_PLAY","lease":"x","inputs":{}}`), "mcp:test")
	if err != nil || out.State != "rejected" || out.Error == nil || out.Error.Code != task.InvalidLease {
		t.Fatalf("rejection: %+v %v", out, err)
	}
	if _, _, err := a.Task(ctx, "ag-none"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
}

// TestAgentTasksRefusesAForgedResult: whoever may write the bucket can put
// a result there; an agent holding the operator key refuses one the
// executor did not sign.
func TestAgentTasksRefusesAForgedResult(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.submit("ag-forged")
	v, rev, err := r.c.Get(ctx, "ag-forged")
	if err != nil {
		t.Fatal(err)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	forged := &task.Result{TaskID: "ag-forged", CapabilityID: "MEDIA_PLAY", Status: task.StatusSuccess,
		ExecutedAt: time.Now().UTC().Format(time.RFC3339), RequestHash: v.Record.RequestHash}
	if err := task.NewSigner(other).Sign(forged); err != nil {
		t.Fatal(err)
	}
	v.Record.State, v.Result = approval.Done, forged
	b, _ := json.Marshal(v)
	if _, err := r.kv.Update(ctx, natsqueue.TaskKey("ag-forged"), b, rev); err != nil {
		t.Fatal(err)
	}
	a := natsqueue.AgentTasks{Client: r.c, OperatorKey: r.operatorKey()}
	if _, res, err := a.Task(ctx, "ag-forged"); !errors.Is(err, natsqueue.ErrUnverified) || res != nil {
		t.Fatalf("forged result passed: %+v %v", res, err)
	}
	a.OperatorKey = nil // no key to check with: passed on, unchecked
	if _, res, err := a.Task(ctx, "ag-forged"); err != nil || res == nil {
		t.Fatalf("without a key: %+v %v", res, err)
	}
}

// TestAgentTasksSourceIsCheckedByTheExecutor: a source that is not an MCP
// source, or is not display-safe, is recorded as "queue".
func TestAgentTasksSourceIsCheckedByTheExecutor(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := natsqueue.AgentTasks{Client: r.c}
	for i, src := range []string{"cli", "mcp:\x1b[2Jforged", ""} {
		id := fmt.Sprintf("src-%d", i)
		if out, err := a.Submit(ctx, r.env.Play(id, "/media/"+id+".mkv"), src); err != nil || out.State != "pending" {
			t.Fatalf("submit %q: %+v %v", src, out, err)
		}
		rec, _, err := a.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Source != natsqueue.SubmitSource {
			t.Errorf("source %q recorded as %q, want %q", src, rec.Source, natsqueue.SubmitSource)
		}
	}
}
