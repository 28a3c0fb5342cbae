package cli

import (
	"testing"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// The sentence follows the record's state: an expired or tampered task was
// never approved and never ran, whatever its result's error says.
func TestDecidedLineStates(t *testing.T) {
	failed := &task.Result{TaskID: "t1", Status: task.StatusFailure, Signature: &task.Signature{},
		Error: &task.Error{Code: task.ApprovalTimeout, Message: "no decision in time"}}
	cases := []struct {
		rec  approval.Record
		want string
	}{
		{approval.Record{TaskID: "t1", State: approval.Expired}, "t1 expired before anyone decided (signed result saved)"},
		{approval.Record{TaskID: "t1", State: approval.Tampered, DecidedBy: "operator:ada"},
			"t1 was not run: its stored request was altered after it was submitted (signed result saved)"},
		{approval.Record{TaskID: "t1\x1b[2J", State: approval.Failed, DecidedBy: "rule:kp", DecidedVia: approval.ViaRule},
			`t1\x1b[2J approved by rule kp and executed: FAILURE, APPROVAL_TIMEOUT: no decision in time (signed result saved)`},
	}
	for _, c := range cases {
		if got := decidedLine(c.rec, failed); got != c.want {
			t.Errorf("%s: %q, want %q", c.rec.State, got, c.want)
		}
	}
}
