package natsqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
)

// publish is what the executor knows when it writes a task's view.
type publish struct {
	// done is the decision just applied: it is cleared from the view.
	done *applied
	// queued is when the submission was stored (the view keeps the first).
	queued *time.Time
	// seen is the task's entry as the bucket's watch delivered it: its
	// revision is tried first, which saves reading the view again (a
	// newer one fails the compare-and-set, and is read then).
	seen jetstream.KeyValueEntry
	// fresh says the task was just made here: no view is expected, so
	// Create is tried first (one that exists fails it, and is read then).
	fresh bool
	// approved is the record and result of an approval just applied here
	// (what the local queue's Decide returned, under its lock): when the
	// record is final and recorded the preview this executor published for
	// the pending task, the view is made of them and that preview
	// (shownPreview) without reading the task or building its preview
	// again.
	approved *approval.Record
	result   *task.Result
}

type applied struct {
	id      string
	refusal *Refusal
}

// shownPreview is what the executor last published of a pending task's
// preview. It is kept in memory, never read back from the bucket (which
// others may write), so that the view of a task it has just carried out
// shows the preview that was approved without building it again: the
// record's preview_hash, which the local queue set when it approved, binds
// it.
type shownPreview struct {
	hash       string
	preview    preview.HTTPPreview
	leaseValid bool
	leaseError string
	warnings   []string
}

// queuedAt is when the server stored the submission m (nil if its
// metadata says nothing).
func queuedAt(m jetstream.Msg) *time.Time {
	md, err := m.Metadata()
	if err != nil || md.Timestamp.IsZero() {
		return nil
	}
	t := md.Timestamp.UTC()
	return &t
}

// view builds the task's view from the local queue: its record, its
// preview (from shown for a task just approved, see publish.approved) and
// its signed result once final.
func (e *Executor) view(ctx context.Context, id string, p publish) (TaskView, bool) {
	if rec := p.approved; rec != nil && rec.TaskID == id && rec.State.Final() {
		if s, ok := e.shown[id]; ok && rec.PreviewHash != "" && rec.PreviewHash == s.hash {
			v := TaskView{Record: *rec, Preview: s.preview, PreviewHash: s.hash, LeaseValid: s.leaseValid,
				LeaseError: s.leaseError, Warnings: s.warnings, Result: p.result}
			return e.own(v, p), true
		}
	}
	av, err := e.o.Queue.Preview(ctx, id)
	if err != nil && !errors.Is(err, approval.ErrDamaged) {
		e.o.Log.Warn("queue: view", "task_id", id, "err", err)
		return TaskView{}, false
	}
	v := TaskView{Record: av.Record, Preview: av.Preview, PreviewHash: av.BindingHash, LeaseValid: av.LeaseValid,
		LeaseError: av.LeaseError, Warnings: av.Warnings, Problem: av.Problem}
	if v.Record.State.Final() {
		v.Result, _ = e.o.Queue.Result(id)
	}
	return e.own(v, p), true
}

// own completes a view with what names its executor.
func (e *Executor) own(v TaskView, p publish) TaskView {
	v.Executor, v.ExecutorID, v.RecordHash, v.QueuedAt = e.o.Host, e.id, recordHash(v.Record), p.queued
	return v
}

// publishView writes the task's current view to the bucket with a
// compare-and-set, keeping an operator's decision that is not yet applied
// (p.done is the one just applied: it is cleared) and the time the task was
// first queued. It reports the view.
func (e *Executor) publishView(ctx context.Context, id string, p publish) (TaskView, bool) {
	v, ok := e.view(ctx, id, p)
	if !ok {
		return v, false
	}
	key := TaskKey(id)
	ent := p.seen
	for try := range 20 {
		var err error
		switch {
		case try == 0 && (ent != nil || p.fresh):
			// the revision known (or none expected): written without a read
		default:
			if ent, err = e.kv.Get(ctx, key); errors.Is(err, jetstream.ErrKeyNotFound) {
				ent = nil
			} else if err != nil {
				e.o.Log.Warn("queue: view", "task_id", id, "err", shown(err))
				return v, false
			}
		}
		var rev uint64
		if ent != nil {
			rev = ent.Revision()
			var old TaskView
			if json.Unmarshal(ent.Value(), &old) == nil {
				if old.ExecutorID != "" && old.ExecutorID != e.id {
					// the same task_id taken by two executors at once: the
					// first view stays, this one's task is not shown
					e.o.Log.Warn("queue: view: the task_id is another executor's", "task_id", id,
						"executor", old.ExecutorID)
					return v, false
				}
				if same := e.merge(&v, old, p.done); same {
					e.published[id] = v.RecordHash
					return old, true
				}
			}
		}
		b, _ := json.Marshal(v)
		if bytes.Contains(b, []byte("\x00")) {
			return v, false // never: JSON escapes NUL
		}
		if rev == 0 {
			_, err = e.kv.Create(ctx, key, b)
		} else {
			_, err = e.kv.Update(ctx, key, b, rev)
		}
		if err == nil {
			e.published[id] = v.RecordHash
			e.remember(v)
			return v, true
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) {
			e.o.Log.Warn("queue: view", "task_id", id, "err", shown(err))
			return v, false
		}
		// an operator decided meanwhile, or the view was not the one
		// known: read it and merge again
	}
	return v, false
}

// merge carries into v what the bucket's view old holds that the local
// queue does not: an operator's decision not yet applied (cleared when it
// is done, the one just applied), the last refusal, and when the task was
// first queued. same says old already shows v: nothing to write.
func (e *Executor) merge(v *TaskView, old TaskView, done *applied) (same bool) {
	v.Decision, v.Refused = old.Decision, old.Refused
	if old.QueuedAt != nil {
		v.QueuedAt = old.QueuedAt // the first submission's, not a resend's
	}
	if done != nil && old.Decision != nil && old.Decision.ID == done.id {
		v.Decision = nil
		if done.refusal != nil {
			v.Refused = done.refusal
		}
	}
	if v.Decision != nil && v.Record.State != approval.Pending {
		// the record answers the waiting decision: it was applied
		// before a crash kept it from being cleared, or the task
		// was decided here meanwhile (expiry, a local decision)
		if v.Record.DecidedBy != v.Decision.By {
			v.Refused = &Refusal{DecisionID: v.Decision.ID, By: v.Decision.By, Code: "refused",
				Message: "already " + string(v.Record.State) + " by " + v.Record.DecidedBy}
		}
		v.Decision = nil
	}
	return old.RecordHash == v.RecordHash && sameDecision(old, *v) && done == nil && old.ExecutorID == v.ExecutorID
}

// remember keeps the preview of a pending task as published (see
// shownPreview), and forgets it once the task is final.
func (e *Executor) remember(v TaskView) {
	id := v.Record.TaskID
	if v.Record.State != approval.Pending || v.PreviewHash == "" || v.Problem != "" {
		delete(e.shown, id)
		return
	}
	e.shown[id] = shownPreview{hash: v.PreviewHash, preview: v.Preview, leaseValid: v.LeaseValid,
		leaseError: v.LeaseError, warnings: v.Warnings}
}

func sameDecision(a, b TaskView) bool {
	ja, _ := json.Marshal([]any{a.Decision, a.Refused})
	jb, _ := json.Marshal([]any{b.Decision, b.Refused})
	return bytes.Equal(ja, jb)
}
