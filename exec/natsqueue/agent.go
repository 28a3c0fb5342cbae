package natsqueue

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
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

// readWait bounds one read of a task's view through approval.Reader's
// methods, which take no context.
const readWait = 10 * time.Second

// ErrUnverified is a result in the bucket that does not verify with the
// operator key the agent holds.
var ErrUnverified = errors.New("the result does not verify with the operator key; it was altered or is not this executor's")

// AgentTasks is an agent's side of the shared queue, an approval.Submitter
// (what exec/mcpserver's task tools run on): submit a manifest and take the
// executor's verdict, read a task's view and its signed result, and follow
// the bucket for changes.
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
	if err := answers(raw, v); err != nil {
		return approval.Outcome{}, err
	}
	if err := a.check(v.Result); err != nil {
		return approval.Outcome{}, err
	}
	return approval.Outcome{TaskID: v.TaskID, State: v.State, Error: v.Error, Result: v.Result}, nil
}

// Task reads a task's view with its signed result (nil until the task is
// final and its result stored). A task the bucket does not hold is
// approval.ErrNotFound, as the local queue says it.
func (a AgentTasks) Task(ctx context.Context, id string) (approval.Record, *task.Result, error) {
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
	if v.Result != nil {
		// a signed result copied from another task's view verifies, but
		// is not this task's answer
		if err := approval.ResultAnswers(id, v.Record, v.Result); err != nil {
			return v.Record, nil, err
		}
	}
	return v.Record, v.Result, nil
}

// answers refuses a verdict that is not the answer to the manifest raw: one
// naming another task, or carrying another task's result (anyone who may
// write the bucket could put one under the manifest's key).
func answers(raw []byte, v Verdict) error {
	var m struct {
		TaskID string `json:"task_id"`
	}
	if json.Unmarshal(raw, &m) != nil || task.ValidateTaskID(m.TaskID) != nil {
		return nil // the executor rejected it; its verdict says why
	}
	if v.TaskID != "" && v.TaskID != m.TaskID {
		return fmt.Errorf("task %s: %w: the verdict names task %q", m.TaskID, task.ErrNotThisTask, v.TaskID)
	}
	if v.Result != nil {
		return approval.ResultAnswers(m.TaskID, approval.Record{}, v.Result)
	}
	return nil
}

// Get reads the task's record from its view (approval.Reader).
func (a AgentTasks) Get(id string) (approval.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readWait)
	defer cancel()
	rec, _, err := a.Task(ctx, id)
	if errors.Is(err, ErrUnverified) || errors.Is(err, task.ErrNotThisTask) {
		err = nil // the record is the bucket's; only the result is refused (Result says so)
	}
	return rec, err
}

// Result reads the task's signed result from its view, checked with
// OperatorKey when set (approval.Reader): task.ErrNotFound until there is
// one, ErrUnverified for one that does not verify, task.ErrNotThisTask for
// one that answers another task or request.
func (a AgentTasks) Result(id string) (*task.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readWait)
	defer cancel()
	_, res, err := a.Task(ctx, id)
	switch {
	case errors.Is(err, approval.ErrNotFound):
		return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
	case err != nil:
		return nil, err
	case res == nil:
		return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
	}
	return res, nil
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

// TaskChanges signals each change of one task's key after the watch
// started (`vigil result --wait`: one key, not the bucket).
func (a AgentTasks) TaskChanges(ctx context.Context, id string) (<-chan struct{}, func(), error) {
	w, err := a.Client.kv.Watch(ctx, TaskKey(id), jetstream.UpdatesOnly())
	if err != nil {
		return nil, nil, fmt.Errorf("nats watch: %w", shown(err))
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

// Changes follows the bucket's task keys from now until ctx ends
// (approval.Reader): each update names its task. A watch that ended (the
// connection was lost) is started again after a pause and says All, since
// updates in between were not seen.
func (a AgentTasks) Changes(ctx context.Context) (<-chan approval.Change, error) {
	w, err := a.Client.kv.Watch(ctx, "task.>", jetstream.UpdatesOnly(), jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("nats watch: %w", shown(err))
	}
	sub := newChangeSub()
	out := make(chan approval.Change)
	go func() {
		for {
			forward(ctx, w, sub)
			_ = w.Stop()
			if ctx.Err() != nil {
				return
			}
			sub.add(approval.Change{All: true})
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryWatch):
			}
			if w, err = a.Client.kv.Watch(ctx, "task.>", jetstream.UpdatesOnly(), jetstream.IgnoreDeletes()); err != nil {
				w = nil // tried again after the next pause
			}
		}
	}()
	go sub.deliver(ctx, nil, out)
	return out, nil
}

// forward adds the task each update of w names to sub, until the watch or
// ctx ends; a nil w ends at once.
func forward(ctx context.Context, w jetstream.KeyWatcher, sub *changeSub) {
	if w == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ent, ok := <-w.Updates():
			if !ok {
				return
			}
			if ent == nil {
				continue
			}
			if id, ok := taskIDOfKey(ent.Key()); ok {
				sub.add(approval.Change{IDs: []string{id}})
			}
		}
	}
}

var _ approval.Submitter = AgentTasks{}
