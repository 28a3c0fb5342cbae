package mcpserver

import (
	"context"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// Tasks is the approval queue the task tools run on: this home's
// approval.Queue (LocalTasks), or the queue shared over NATS JetStream
// (natsqueue.AgentTasks) when [queue] url is set. The tools answer the same
// either way; only where the task lives differs.
type Tasks interface {
	// Submit hands a manifest to the queue and returns its verdict: a
	// rejection, a search's signed result, or a pending media task.
	Submit(ctx context.Context, raw []byte, source string) (approval.Outcome, error)
	// Status reads a task's record and, once it is final, its signed result
	// (nil while it is being stored). A task the queue does not know is
	// approval.ErrNotFound.
	Status(ctx context.Context, id string) (TaskStatus, error)
	// Changes signals (best effort) when the task may have changed, so a
	// waiting call answers at once; a nil channel means poll only. stop
	// releases what it holds.
	Changes(ctx context.Context, id string) (changes <-chan struct{}, stop func(), err error)
}

// TaskStatus is one read of a task.
type TaskStatus struct {
	Record approval.Record
	Result *task.Result
}

// LocalTasks is Tasks on this home's queue.
type LocalTasks struct{ Queue *approval.Queue }

// Submit runs the local queue's submit.
func (l LocalTasks) Submit(ctx context.Context, raw []byte, source string) (approval.Outcome, error) {
	return l.Queue.Submit(ctx, raw, source)
}

// Status reads the record (the queue's Get also expires a task past its
// deadline) and the stored result of a final one.
func (l LocalTasks) Status(_ context.Context, id string) (TaskStatus, error) {
	rec, err := l.Queue.Get(id)
	if err != nil {
		return TaskStatus{Record: rec}, err
	}
	st := TaskStatus{Record: rec}
	if rec.State.Final() {
		if res, err := l.Queue.Result(id); err == nil {
			st.Result = res
		}
	}
	return st, nil
}

// Changes: the local queue is polled.
func (LocalTasks) Changes(context.Context, string) (<-chan struct{}, func(), error) {
	return nil, func() {}, nil
}
