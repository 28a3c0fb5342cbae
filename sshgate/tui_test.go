package sshgate

import (
	"context"
	"errors"
	"testing"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// The screen's decisions go through operatorQueue: whatever surface the
// pane names, each is recorded over SSH with the operator's key, so a home
// that requires an operator key takes it, and MayDecide agrees beforehand.
func TestOperatorQueueStampsSSHAndTheKey(t *testing.T) {
	env := approvaltest.New(t)
	env.RequireOperatorKey = true
	env.Queue = env.Open()
	env.Submit(env.Play("tv", "/media/tv.mkv"))
	v, err := env.Queue.Preview(context.Background(), "tv")
	if err != nil {
		t.Fatal(err)
	}
	tui := approval.Decision{Approve: true, By: "operator:ada", Via: approval.ViaTUI, PreviewHash: v.BindingHash}
	if err := env.Queue.MayDecide(tui); !errors.Is(err, approval.ErrOperatorKeyRequired) {
		t.Fatalf("the bare queue takes a TUI decision: %v", err)
	}
	q := operatorQueue{Decider: env.Queue, key: "SHA256:adaskey"}
	if err := q.MayDecide(tui); err != nil || !q.RequiresOperatorKey() {
		t.Fatalf("MayDecide %v, requires %v", err, q.RequiresOperatorKey())
	}
	rec, _, err := q.Decide(context.Background(), "tv", tui)
	if err != nil {
		t.Fatal(err)
	}
	if rec.DecidedBy != "operator:ada" || rec.DecidedVia != approval.ViaSSH || rec.DecidedKey != "SHA256:adaskey" {
		t.Fatalf("record: by %q via %q key %q", rec.DecidedBy, rec.DecidedVia, rec.DecidedKey)
	}
}
