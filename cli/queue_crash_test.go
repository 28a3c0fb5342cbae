package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/internal/crashpoint"
)

// waitKilled waits for a served child SIGKILLed at a crash point.
func waitKilled(t *testing.T, sc *servedChild, point string) {
	t.Helper()
	select {
	case <-sc.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("serve was not killed at %s\n%s", point, sc.stderr.String())
	}
	if !killed(sc.waitErr) {
		t.Fatalf("serve ended without being killed at %s: %v\n%s", point, sc.waitErr, sc.stderr.String())
	}
}

// TestQueueExecutorKilledAroundExecution SIGKILLs the executor (`vigil
// serve` on the shared queue) before, during and after an execution, and
// right after a submission and a decision reach its local queue, restarts
// it, and checks that each task reached the device exactly once and that
// the waiting agent and operator got their answers.
func TestQueueExecutorKilledAroundExecution(t *testing.T) {
	r := newNatsRig(t)
	cases := []struct {
		point  string
		state  approval.State
		status string // the operator's printed result
		exit   int
	}{
		{"approve.record", approval.Done, "SUCCESS", 0},  // before: the approval never reached the log; re-applied from the bucket
		{"result.ran", approval.Failed, "FAILURE", 1},    // during: the device acted, nothing stored — never re-run
		{"execute.done", approval.Done, "SUCCESS", 0},    // after: recorded, not yet published
		{"queue.decided", approval.Done, "SUCCESS", 0},   // the decision applied, its view not published
		{"queue.submitted", approval.Done, "SUCCESS", 0}, // the task made, its verdict not published
	}
	for _, c := range cases {
		id := "kill-" + strings.ReplaceAll(c.point, ".", "-")
		ex := r.startExecutor(crashpoint.Env + "=" + c.point)
		var subOut runOut
		subDone := make(chan struct{})
		go func() {
			defer close(subDone)
			subOut = r.run(r.agent, "agent", "submit", r.manifest(id, time.Hour, ""))
		}()
		if c.point == "queue.submitted" {
			waitKilled(t, ex, c.point)
			ex = r.startExecutor()
		}
		<-subDone
		if subOut.code != 0 || !strings.Contains(subOut.out, `"pending"`) {
			t.Fatalf("%s: submit exit %d\n%s%s", c.point, subOut.code, subOut.out, subOut.err)
		}
		var apOut runOut
		apDone := make(chan struct{})
		go func() { defer close(apDone); apOut = r.run(r.ops["alice"], "alice", "approve", id, "--yes") }()
		if c.point != "queue.submitted" {
			waitKilled(t, ex, c.point)
			ex = r.startExecutor()
		}
		<-apDone
		if apOut.code != c.exit {
			t.Fatalf("%s: approve exit %d, want %d\n%s%s\nserve:\n%s", c.point, apOut.code, c.exit, apOut.out, apOut.err, ex.stderr.String())
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(apOut.out), &res); err != nil || res["status"] != c.status {
			t.Fatalf("%s: approve printed %s", c.point, apOut.out)
		}
		if code := ex.stop(t); code != 0 {
			t.Fatalf("%s: serve exit %d\n%s", c.point, code, ex.stderr.String())
		}
		recs := r.exec.checkInvariants(c.point)
		if recs[id].State != c.state || r.journalRuns(id) != 1 {
			t.Fatalf("%s: state %s, device runs %d; want %s, exactly 1", c.point, recs[id].State, r.journalRuns(id), c.state)
		}
	}
}
