package natsqueue

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// DefaultVerdictWait is how long an agent waits for the executor's verdict
// on a submission. The submission itself is durable in JetStream; only the
// waiting stops (and a resend of the same bytes is deduplicated).
const DefaultVerdictWait = 2 * time.Minute

// ErrNoVerdict is a submission the executor has not answered in time.
var ErrNoVerdict = errors.New("submitted to the shared queue, but no executor has taken it: the " +
	"executor serving its target_device is not running, or no executor's [[devices]] lists that device " +
	"(it waits in the stream until one does); submitting the same manifest again waits again")

// ErrUnverified is a result in the bucket that does not verify with the
// operator key the agent holds.
var ErrUnverified = errors.New("the result does not verify with the operator key; it was altered or is not this executor's")

// AgentTasks is an agent's side of the shared queue in the shape of the
// MCP server's Tasks (exec/mcpserver): submit a manifest and take the
// executor's verdict, read a task's view and its signed result, and follow
// the task's key for changes.
type AgentTasks struct {
	Client *Client
	// VerdictWait bounds the wait for a submission's verdict
	// (DefaultVerdictWait when 0).
	VerdictWait time.Duration
	// OperatorKey, when set, is the executor's operator public key: a
	// result in a view that does not verify with it is refused (anyone who
	// may write the bucket could put one there). Nil passes results on
	// unchecked (`vigil result verify` checks one later).
	OperatorKey ed25519.PublicKey
}

// Submit publishes the manifest and waits for the executor's verdict, in
// the local queue's Outcome shape.
func (a AgentTasks) Submit(ctx context.Context, raw []byte, source string) (approval.Outcome, error) {
	digest, err := a.Client.PublishFrom(ctx, raw, source)
	if err != nil {
		return approval.Outcome{}, err
	}
	wait := a.VerdictWait
	if wait <= 0 {
		wait = DefaultVerdictWait
	}
	vctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	v, err := a.Client.Verdict(vctx, digest)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return approval.Outcome{}, ErrNoVerdict
	}
	if err != nil {
		return approval.Outcome{}, err
	}
	if err := a.check(v.Result); err != nil {
		return approval.Outcome{}, err
	}
	return approval.Outcome{TaskID: v.TaskID, State: v.State, Error: v.Error, Result: v.Result}, nil
}

// Result is a task's view with its signed result (nil until the task is
// final and its result stored). A task the bucket does not hold is
// approval.ErrNotFound, as the local queue says it.
func (a AgentTasks) Result(ctx context.Context, id string) (approval.Record, *task.Result, error) {
	if err := task.ValidateTaskID(id); err != nil {
		return approval.Record{}, nil, err
	}
	v, _, err := a.Client.Get(ctx, id)
	if errors.Is(err, ErrNoTask) {
		return approval.Record{}, nil, fmt.Errorf("%w: %s", approval.ErrNotFound, id)
	}
	if err != nil {
		return approval.Record{}, nil, err
	}
	if v.Record.TaskID != id {
		return approval.Record{}, nil, fmt.Errorf("task %s: the shared queue's view names another task", id)
	}
	if err := a.check(v.Result); err != nil {
		return v.Record, nil, err
	}
	return v.Record, v.Result, nil
}

func (a AgentTasks) check(res *task.Result) error {
	if res == nil || a.OperatorKey == nil {
		return nil
	}
	if err := task.Verify(res, a.OperatorKey); err != nil {
		return fmt.Errorf("task %s: %w (%v)", res.TaskID, ErrUnverified, err)
	}
	return nil
}

// Changes signals each change of the task's key after the watch started.
func (a AgentTasks) Changes(ctx context.Context, id string) (<-chan struct{}, func(), error) {
	w, err := a.Client.kv.Watch(ctx, TaskKey(id), jetstream.UpdatesOnly())
	if err != nil {
		return nil, nil, fmt.Errorf("nats watch: %w", err)
	}
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case _, ok := <-w.Updates():
				if !ok {
					return
				}
				select {
				case ch <- struct{}{}:
				default: // one signal pending is enough: the reader reads the latest
				}
			}
		}
	}()
	return ch, func() { close(done); _ = w.Stop() }, nil
}
