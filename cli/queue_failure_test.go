package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// background runs vigil and delivers its outcome later.
func (r *natsRig) background(home, user string, args ...string) <-chan runOut {
	ch := make(chan runOut, 1)
	go func() { ch <- r.run(home, user, args...) }()
	return ch
}

// decisionWaits waits until an operator's decision on id waits in the
// tasks bucket for the executor to apply it, and returns the task's view.
func (r *natsRig) decisionWaits(id string) natsqueue.TaskView {
	r.t.Helper()
	_, _, c := r.client("bob")
	var v natsqueue.TaskView
	testwait.For(r.t, 60*time.Second, func() error {
		var err error
		if v, _, err = c.Get(context.Background(), id); err != nil || v.Decision == nil {
			return fmt.Errorf("no decision on %s waits in the bucket (%v)", id, err)
		}
		return nil
	})
	return v
}

func recv(t *testing.T, ch <-chan runOut, what string) runOut {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(90 * time.Second):
		t.Fatalf("%s did not finish", what)
		return runOut{}
	}
}

// TestQueueExecutorDownTasksWaitDeadlinesHold: with the executor stopped,
// a submission waits in the stream and an approval waits in the bucket;
// when the executor is back both are carried out — except the approval of
// a task whose deadline passed meanwhile, which expires and never runs.
func TestQueueExecutorDownTasksWaitDeadlinesHold(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	r.submit("down-wait", time.Hour)
	r.submit("down-dead", 4*time.Second) // the lease's exp is the deadline
	if code := ex.stop(t); code != 0 {
		t.Fatalf("serve exit %d", code)
	}
	later := r.background(r.agent, "agent", "submit", r.manifest("down-later", time.Hour, ""))
	wait := r.background(r.ops["alice"], "alice", "approve", "down-wait", "--yes")
	dead := r.background(r.ops["bob"], "bob", "approve", "down-dead", "--yes")
	r.decisionWaits("down-wait")
	// the executor is still down when down-dead's deadline passes (the
	// executor reads the real clock: this wait is the scenario); bob's
	// approval may or may not reach the bucket before it
	_, _, c := r.client("bob")
	v, _, err := c.Get(context.Background(), "down-dead")
	if err != nil {
		t.Fatal(err)
	}
	deadline, _ := v.Record.Deadline()
	testwait.Until(t, 30*time.Second, "down-dead's deadline", func() bool { return time.Now().After(deadline) })
	select {
	case o := <-later:
		t.Fatalf("submit answered with no executor: %+v", o)
	default:
	}
	ex = r.startExecutor()
	defer ex.stop(t)
	if o := recv(t, later, "submit"); o.code != 0 || !strings.Contains(o.out, `"pending"`) {
		t.Fatalf("submit after the executor came back: exit %d\n%s%s", o.code, o.out, o.err)
	}
	if o := recv(t, wait, "approve"); o.code != 0 || !strings.Contains(o.out, `"SUCCESS"`) {
		t.Fatalf("approve after the executor came back: exit %d\n%s%s", o.code, o.out, o.err)
	}
	if o := recv(t, dead, "approve past the deadline"); o.code != 1 || !strings.Contains(o.err, "expired") {
		t.Fatalf("approve of an overdue task: exit %d\n%s%s", o.code, o.out, o.err)
	}
	recs := r.exec.checkInvariants("down")
	if recs["down-dead"].State != approval.Expired || r.journalRuns("down-dead") != 0 {
		t.Fatalf("down-dead: %s, device runs %d", recs["down-dead"].State, r.journalRuns("down-dead"))
	}
	if recs["down-wait"].State != approval.Done || r.journalRuns("down-wait") != 1 {
		t.Fatalf("down-wait: %s, device runs %d", recs["down-wait"].State, r.journalRuns("down-wait"))
	}
	if recs["down-later"].State != approval.Pending {
		t.Fatalf("down-later: %s", recs["down-later"].State)
	}
}

// TestQueueServerRestartedMidFlow restarts nats-server between a
// submission and its decision and again with a decision waiting: nothing
// is lost, nothing is done twice, an operator's watch reconnects and
// catches up, and a copy of the audit stream verifies against the
// executor's signed checkpoint (a tampered copy does not).
func TestQueueServerRestartedMidFlow(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	_, js, c := r.client("bob")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w, err := c.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	seen := map[string]approval.State{}
	follow := func(id string, st approval.State) {
		t.Helper()
		for seen[id] != st {
			select {
			case ent := <-w.Updates():
				if ent == nil || ent.Operation() != jetstream.KeyValuePut {
					continue
				}
				var v natsqueue.TaskView
				if json.Unmarshal(ent.Value(), &v) == nil {
					seen[v.Record.TaskID] = v.Record.State
				}
			case <-ctx.Done():
				t.Fatalf("the operator's watch never saw %s %s (saw %v)", id, st, seen)
			}
		}
	}

	r.submit("restart-1", time.Hour)
	follow("restart-1", approval.Pending)
	r.restartServer(time.Second)
	r.submit("restart-2", time.Hour) // the executor reconnected and consumes again
	follow("restart-2", approval.Pending)
	r.must(0, r.ops["alice"], "alice", "approve", "restart-1", "--yes")
	follow("restart-1", approval.Done)

	// a decision waiting in the bucket across a restart
	if code := ex.stop(t); code != 0 {
		t.Fatalf("serve exit %d", code)
	}
	ap := r.background(r.ops["alice"], "alice", "deny", "restart-2", "--reason", "not today")
	r.decisionWaits("restart-2")
	// and the deny waits for the outcome, watching the task's key
	testwait.Until(t, 30*time.Second, "the deny's watch on restart-2", r.watching("restart-2"))
	r.restartServer(time.Second)
	r.startExecutor()
	t0 := time.Now()
	if o := recv(t, ap, "deny across a restart"); o.code != 0 || !strings.Contains(o.out, "APPROVAL_DENIED") {
		t.Fatalf("deny: exit %d\n%s%s", o.code, o.out, o.err)
	}
	t.Logf("deny answered %s after the restart", time.Since(t0))
	follow("restart-2", approval.Denied)
	recs := r.exec.checkInvariants("restart")
	if recs["restart-1"].State != approval.Done || r.journalRuns("restart-1") != 1 || recs["restart-2"].State != approval.Denied {
		t.Fatalf("after restarts: %s (runs %d), %s", recs["restart-1"].State, r.journalRuns("restart-1"), recs["restart-2"].State)
	}

	// the audit stream's copy verifies against the executor's checkpoint
	logBytes := func() []byte { b, _ := os.ReadFile(filepath.Join(r.exec.home, "audit.log")); return b }
	var pulled bytes.Buffer
	testwait.For(t, 30*time.Second, func() error {
		pulled.Reset()
		if _, err := natsqueue.PullAudit(ctx, js, &pulled); err != nil {
			return err
		}
		if !bytes.Equal(pulled.Bytes(), logBytes()) {
			return fmt.Errorf("the audit stream never caught up: %d bytes pulled, the log has %d", pulled.Len(), len(logBytes()))
		}
		return nil
	})
	cp := r.must(0, r.exec.home, "executor", "audit", "checkpoint").out
	cpFile := filepath.Join(t.TempDir(), "executor.checkpoint")
	os.WriteFile(cpFile, []byte(cp), 0o600)
	copyDir := t.TempDir()
	if out, code := runQueueCmd(t, r.ops["bob"], "bob", "queue", "audit-pull", copyDir); code != 0 || !strings.Contains(out, "entries copied") {
		t.Fatalf("queue audit-pull: exit %d\n%s", code, out)
	}
	key := filepath.Join(r.exec.home, "keys", "operator.pub.pem")
	r.must(0, copyDir, "bob", "audit", "verify", "--checkpoint", cpFile, "--key", key)
	copied, _ := os.ReadFile(filepath.Join(copyDir, "audit.log"))
	forged := bytes.Replace(copied, []byte("not today"), []byte("not todaY"), 1)
	if bytes.Equal(forged, copied) {
		t.Fatal("the copy lacks the denial")
	}
	os.WriteFile(filepath.Join(copyDir, "audit.log"), forged, 0o600)
	r.must(1, copyDir, "bob", "audit", "verify", "--checkpoint", cpFile, "--key", key)
}

// runQueueCmd runs vigil in-process with `vigil queue` registered, as the
// NATS user.
func runQueueCmd(t *testing.T, home, user string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &out
	app.In = strings.NewReader("")
	env := map[string]string{"VIGIL_TEST_NATS_USER": user, "VIGIL_TEST_NATS_PASSWORD": natsPassword(user)}
	app.Getenv = func(k string) string { return env[k] }
	app.Cwd = home
	root := NewRootCmd(app)
	if !hasCommand(root, "queue") {
		root.AddCommand(newQueueCmd(app))
	}
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	if err != nil {
		out.WriteString("vigil: " + err.Error())
	}
	return out.String(), ExitCode(err)
}

func hasCommand(root *cobra.Command, name string) bool {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}
