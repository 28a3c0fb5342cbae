package approval

import (
	"context"
	"errors"
	"fmt"

	"github.com/vigil-dev/vigil/exec/task"
)

// The task contract: what a screen or an agent's tool needs from a queue,
// whichever carries it — this home's *Queue or the shared queue's sides in
// exec/natsqueue. Consumers hold these, never a transport.

// Reader reads tasks and says when they change.
type Reader interface {
	// Get reads one task's record (ErrNotFound when there is none).
	Get(id string) (Record, error)
	// Result reads a final task's signed result (task.ErrNotFound when none).
	Result(id string) (*task.Result, error)
	// Changes follows the queue until ctx ends, when the channel closes.
	Changes(ctx context.Context) (<-chan Change, error)
}

// Decider is a person's side: list, preview, decide.
type Decider interface {
	Reader
	// Pending lists the tasks waiting for a decision, oldest first.
	Pending() ([]Record, error)
	// Decided lists at most limit final tasks, newest first.
	Decided(limit int) ([]Record, error)
	// Tasks reads the records of ids; an id with no record is left out.
	Tasks(ids []string) []Record
	// Preview reads a task's masked preview and the hash an approval names.
	Preview(ctx context.Context, id string) (View, error)
	// Decide records a decision. An approval names the preview hash the
	// person saw and is refused with ErrPreviewChanged when the request no
	// longer produces it; a decision that came second is a *DecidedError or
	// a *LostError.
	Decide(ctx context.Context, id string, d Decision) (Record, *task.Result, error)
}

// Submitter is an agent's side: submit, then read and follow.
type Submitter interface {
	Reader
	// Submit hands a manifest to the queue and returns its verdict.
	Submit(ctx context.Context, raw []byte, source string) (Outcome, error)
}

// Change says which tasks may have changed. All: changes may have been
// missed (the log was cut or replaced, events were lost, a watch started
// over), so a reader reloads everything. Err is something the feed could not
// do (an inbox sweep that failed); the feed goes on.
type Change struct {
	IDs []string
	All bool
	Err error
}

// ErrDisconnected is a queue whose connection is lost (the shared queue's
// server): nothing was sent, and the same call may work once it is back.
var ErrDisconnected = errors.New("the connection to the queue is lost")

// LostError is a decision that came second on a queue decided by
// compare-and-set (the shared queue): another operator's decision won.
type LostError struct {
	TaskID string
	State  State
	By     string
}

func (e *LostError) Error() string {
	if e.State == Pending {
		return fmt.Sprintf("task %s already decided by %s (the executor is applying it)", e.TaskID, e.By)
	}
	return fmt.Sprintf("task %s already %s by %s", e.TaskID, e.State, e.By)
}

var (
	_ Decider   = (*Queue)(nil)
	_ Submitter = (*Queue)(nil)
)
