package approvalspane

import (
	"context"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// Source is what the pane needs from a queue: this home's (*approval.Queue,
// through Local) or the shared queue's operator side (natsqueue.OperatorTasks).
// The pane's gate — the grace after a change, the preview re-read before an
// approval, the preview hash a decision names, masked text only — is the
// same over either; a Source only reads and decides.
type Source interface {
	// Pending lists the tasks waiting for a decision, oldest first.
	Pending() ([]approval.Record, error)
	// Decided lists at most limit final tasks, newest first.
	Decided(limit int) ([]approval.Record, error)
	// Get reads one task's record.
	Get(id string) (approval.Record, error)
	// Tasks reads the records of ids; an id with no record is left out.
	Tasks(ids []string) []approval.Record
	// Preview reads a task's masked preview and the hash an approval names.
	Preview(ctx context.Context, id string) (approval.View, error)
	// Decide records a decision; an approval names the preview hash the
	// person saw and is refused with approval.ErrPreviewChanged when the
	// request no longer produces it.
	Decide(ctx context.Context, id string, d approval.Decision) (approval.Record, *task.Result, error)
	// Result reads a task's signed result (task.ErrNotFound when none).
	Result(id string) (*task.Result, error)
	// SweepInbox takes in what arrived outside the queue and returns the
	// tasks it made (the local inbox; nothing for the shared queue).
	SweepInbox(ctx context.Context) ([]approval.Outcome, error)
}

// Follower is a Source that says which tasks changed (the shared queue's
// bucket watch). The pane reloads the tasks each change names; a nil
// change (the watch started over, changes may have been missed) reloads
// everything. The channel closes when the source is closed.
type Follower interface {
	Changes() <-chan []string
}

// Refresher is a Source that keeps a copy it can read again in full (the
// shared queue's records, kept by a watch): the pane's full reloads — at
// the start, every five minutes and when a Follower says everything may have
// changed — refresh it first.
type Refresher interface {
	Refresh(ctx context.Context) error
}

// The local queue is a Source as it is; its changes are followed with
// fsnotify by the pane (Options.Queue).
var _ Source = (*approval.Queue)(nil)
