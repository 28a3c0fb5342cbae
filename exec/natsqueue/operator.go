package natsqueue

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
)

// DefaultOutcomeWait is how long an operator's decision waits for the
// executor to apply it. The decision itself is in the bucket; only the
// waiting stops (the executor applies it when it is back).
const DefaultOutcomeWait = time.Minute

// retryWatch is how long a watch that ended waits before it starts over.
const retryWatch = time.Second

// maxFinishedKept bounds the final tasks an operator screen keeps records
// of (the bucket keeps every task for TaskMaxAge; a screen lists the newest).
const maxFinishedKept = 1000

// OperatorTasks is an operator screen's side of the shared queue, an
// approval.Decider (what the Approvals pane runs on): the records of
// every task, kept current by one watch of the bucket (no polling), the
// masked previews and signed results read fresh from the bucket, and
// decisions made with the compare-and-set and waited on until the executor
// applied them.
type OperatorTasks struct {
	c *Client
	// OutcomeWait bounds the wait for the executor to apply a decision
	// (DefaultOutcomeWait when 0).
	OutcomeWait time.Duration
	now         func() time.Time

	mu     sync.Mutex
	recs   map[string]approval.Record
	subs   map[*changeSub]bool // the Changes calls being followed
	w      jetstream.KeyWatcher
	closed bool
	life   context.Context // the watches' context, ended by Close
	end    context.CancelFunc

	restart chan struct{} // Restart asks for a new watch now (holds at most one)
	quit    chan struct{} // closed by Close
	done    chan struct{} // closed when follow returned
}

// NewOperatorTasks reads every task's view once (so the first screen is
// complete) and then follows the bucket until Close.
func NewOperatorTasks(ctx context.Context, c *Client, now func() time.Time) (*OperatorTasks, error) {
	if now == nil {
		now = time.Now
	}
	o := &OperatorTasks{c: c, now: now, recs: map[string]approval.Record{}, subs: map[*changeSub]bool{},
		restart: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	// the watch lives until Close, not as long as ctx (which bounds only
	// the start): a watch's context ending ends the watch
	o.life, o.end = context.WithCancel(context.WithoutCancel(ctx))
	w, err := c.kv.Watch(o.life, "task.>", jetstream.IgnoreDeletes())
	if err != nil {
		o.end()
		return nil, fmt.Errorf("nats watch: %w", shown(err))
	}
	if err := o.initial(ctx, w); err != nil {
		_ = w.Stop()
		o.end()
		return nil, err
	}
	o.w = w
	go o.follow(w)
	return o, nil
}

// initial takes the bucket's current values, up to the watch's marker.
func (o *OperatorTasks) initial(ctx context.Context, w jetstream.KeyWatcher) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ent, ok := <-w.Updates():
			if !ok {
				return errors.New("nats watch ended")
			}
			if ent == nil {
				return nil
			}
			o.take(ent)
		}
	}
}

// follow applies each change and tells the screen which task it was; when
// the watch ends without Close (the connection closed) it starts a new one
// and tells the screen to reload everything.
func (o *OperatorTasks) follow(w jetstream.KeyWatcher) {
	defer close(o.done)
	for {
		for ent := range w.Updates() {
			if ent == nil {
				o.signal("", true) // a new watch's values are all in
				continue
			}
			if id := o.take(ent); id != "" {
				o.signal(id, false)
			}
		}
		for {
			select {
			case <-o.quit:
				return
			case <-o.restart:
			case <-time.After(retryWatch):
			}
			nw, err := o.c.kv.Watch(o.life, "task.>", jetstream.IgnoreDeletes())
			if err != nil {
				continue
			}
			o.mu.Lock()
			if o.closed {
				o.mu.Unlock()
				_ = nw.Stop()
				return
			}
			o.w, w = nw, nw
			o.mu.Unlock()
			break
		}
	}
}

// take keeps the record a view carries and returns its task id ("" for a
// value that is not a task's view).
func (o *OperatorTasks) take(ent jetstream.KeyValueEntry) string {
	var v TaskView
	if ent.Operation() != jetstream.KeyValuePut || json.Unmarshal(ent.Value(), &v) != nil ||
		task.ValidateTaskID(v.Record.TaskID) != nil || TaskKey(v.Record.TaskID) != ent.Key() {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.recs[v.Record.TaskID] = v.ShownRecord()
	if len(o.recs) > maxFinishedKept*2 {
		o.pruneLocked()
	}
	return v.Record.TaskID
}

// pruneLocked forgets the oldest final tasks beyond maxFinishedKept.
func (o *OperatorTasks) pruneLocked() {
	var final []approval.Record
	for _, r := range o.recs {
		if r.State.Final() {
			final = append(final, r)
		}
	}
	sortNewestFirst(final)
	for _, r := range final[min(len(final), maxFinishedKept):] {
		delete(o.recs, r.TaskID)
	}
}

// signal notes the changed id (or that everything may have changed) for
// every reader of Changes; changes pile up while a reader is busy and go
// as one.
func (o *OperatorTasks) signal(id string, all bool) {
	c := approval.Change{All: all}
	if !all {
		c.IDs = []string{id}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for s := range o.subs {
		s.add(c)
	}
}

// Restart starts the watch over at once (the screen is then told that
// everything may have changed). The TUI calls it when its connection is
// back after a loss: a watch's consumer that did not survive a server
// restart is otherwise only found by its missing heartbeats, many seconds
// later.
func (o *OperatorTasks) Restart() {
	o.mu.Lock()
	w, closed := o.w, o.closed
	o.mu.Unlock()
	if closed {
		return
	}
	select {
	case o.restart <- struct{}{}:
	default:
	}
	_ = w.Stop()
}

// Changes signals the tasks that changed from now on (approval.Reader):
// their ids, or All when everything may have (the watch started over). It
// closes when ctx ends or on Close.
func (o *OperatorTasks) Changes(ctx context.Context) (<-chan approval.Change, error) {
	s := newChangeSub()
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errClosed
	}
	o.subs[s] = true
	o.mu.Unlock()
	out := make(chan approval.Change)
	go func() {
		s.deliver(ctx, o.quit, out)
		o.mu.Lock()
		delete(o.subs, s)
		o.mu.Unlock()
	}()
	return out, nil
}

// errClosed is Changes after Close.
var errClosed = errors.New("natsqueue: the operator's tasks are closed")

// Close stops following the bucket.
func (o *OperatorTasks) Close() {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.closed = true
	close(o.quit)
	w := o.w
	o.mu.Unlock()
	_ = w.Stop()
	o.end()
	<-o.done
}

// Refresh reads again what the watch may have missed (a watch that
// stalled across a server restart until its heartbeats told it): the
// bucket's task keys (their names only), then the view of each task not
// known yet or not final. The screen calls it on its full reloads (once a
// minute), never faster.
func (o *OperatorTasks) Refresh(ctx context.Context) error {
	l, err := o.c.kv.ListKeysFiltered(ctx, "task.>")
	if err != nil {
		return fmt.Errorf("nats keys: %w", shown(err))
	}
	defer func() { _ = l.Stop() }()
	var stale []string
	for key := range l.Keys() {
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(key, "task."))
		if err != nil {
			continue
		}
		id := string(raw)
		o.mu.Lock()
		r, ok := o.recs[id]
		o.mu.Unlock()
		if !ok || !r.State.Final() {
			stale = append(stale, id)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, id := range stale {
		v, _, err := o.c.Get(ctx, id)
		if errors.Is(err, ErrNoTask) {
			continue
		}
		if err != nil {
			return err
		}
		if v.Record.TaskID == id && task.ValidateTaskID(id) == nil {
			o.keep(v.ShownRecord())
		}
	}
	return nil
}

// Pending lists the tasks waiting for a decision, oldest first (a task
// whose decision the executor is applying is still pending).
func (o *OperatorTasks) Pending() ([]approval.Record, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []approval.Record
	for _, r := range o.recs {
		if r.State == approval.Pending || r.State == approval.Damaged {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].SubmittedAt.Equal(out[j].SubmittedAt) {
			return out[i].SubmittedAt.Before(out[j].SubmittedAt)
		}
		return out[i].TaskID < out[j].TaskID
	})
	return out, nil
}

// Decided lists at most limit final tasks, newest first.
func (o *OperatorTasks) Decided(limit int) ([]approval.Record, error) {
	o.mu.Lock()
	var out []approval.Record
	for _, r := range o.recs {
		if r.State.Final() {
			out = append(out, r)
		}
	}
	o.mu.Unlock()
	sortNewestFirst(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func sortNewestFirst(recs []approval.Record) {
	sort.SliceStable(recs, func(i, j int) bool {
		if a, b := recs[i].LastChange(), recs[j].LastChange(); !a.Equal(b) {
			return a.After(b)
		}
		return recs[i].TaskID < recs[j].TaskID
	})
}

// Get is a task's record as last published.
func (o *OperatorTasks) Get(id string) (approval.Record, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.recs[id]
	if !ok {
		return approval.Record{}, fmt.Errorf("%w: %s", approval.ErrNotFound, id)
	}
	return r, nil
}

// Tasks are the records of ids the bucket holds.
func (o *OperatorTasks) Tasks(ids []string) []approval.Record {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []approval.Record
	for _, id := range ids {
		if r, ok := o.recs[id]; ok {
			out = append(out, r)
		}
	}
	return out
}

// Preview reads the task's view from the bucket now (not the watch's copy):
// what an approval names is what the executor published last.
func (o *OperatorTasks) Preview(ctx context.Context, id string) (approval.View, error) {
	v, _, err := o.c.Get(ctx, id)
	if errors.Is(err, ErrNoTask) {
		return approval.View{}, fmt.Errorf("%w: %s", approval.ErrNotFound, id)
	}
	if err != nil {
		return approval.View{}, err
	}
	if v.Record.TaskID != id {
		return approval.View{}, fmt.Errorf("task %s: the shared queue's view names another task", id)
	}
	return v.ApprovalView(), nil
}

// Result is the signed result in the task's view (task.ErrNotFound until
// there is one). It is not checked here: the screen checks it with the
// executor's key when it holds a copy, and says so when it does not.
func (o *OperatorTasks) Result(id string) (*task.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, _, err := o.c.Get(ctx, id)
	if errors.Is(err, ErrNoTask) {
		return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	if v.Result == nil {
		return nil, fmt.Errorf("%w: %s", task.ErrNotFound, id)
	}
	if err := approval.ResultAnswers(id, v.Record, v.Result); err != nil {
		return nil, err
	}
	return v.Result, nil
}

// SweepInbox has nothing to sweep: agents submit to the executor.
func (o *OperatorTasks) SweepInbox(context.Context) ([]approval.Outcome, error) { return nil, nil }

// Decide makes the decision with a compare-and-set carrying the preview
// hash the person saw, then waits for the executor to apply it. A decision
// another operator made first is a *LostError naming them; an approval of
// a preview that changed (in the bucket, or found by the executor) is
// approval.ErrPreviewChanged.
func (o *OperatorTasks) Decide(ctx context.Context, id string, d approval.Decision) (approval.Record, *task.Result, error) {
	if err := task.ValidateTaskID(id); err != nil {
		return approval.Record{}, nil, err
	}
	if !d.Approve {
		if err := task.CheckText(d.Reason, approval.MaxReasonBytes); err != nil {
			return approval.Record{}, nil, fmt.Errorf("%w: %v", approval.ErrBadReason, err)
		}
	}
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	nd := Decision{ID: hex.EncodeToString(nonce[:]), Approve: d.Approve, By: d.By, PreviewHash: d.PreviewHash,
		At: o.now().UTC()}
	if !d.Approve {
		// masked here, as the local queue masks it: the bucket never holds
		// what the executor would not log
		nd.Reason = preview.MaskString(d.Reason)
	}
	if _, err := o.c.Decide(ctx, id, nd); err != nil {
		if errors.Is(err, ErrNoTask) {
			err = fmt.Errorf("%w: %s", approval.ErrNotFound, id)
		}
		return approval.Record{}, nil, err
	}
	wait := o.OutcomeWait
	if wait <= 0 {
		wait = DefaultOutcomeWait
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	v, err := o.c.Outcome(wctx, id, nd.ID)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return approval.Record{}, nil, fmt.Errorf("the decision on %s is in the shared queue, but the executor has not "+
			"applied it within %s (is `vigil serve` running?); it will when it is back", id, wait)
	}
	if err != nil {
		return approval.Record{}, nil, err
	}
	if v.Refused != nil && v.Refused.DecisionID == nd.ID && v.Record.State == approval.Pending {
		if v.Refused.Code == "preview_changed" {
			return v.Record, nil, approval.ErrPreviewChanged
		}
		return v.Record, nil, fmt.Errorf("the executor refused the decision: %s", v.Refused.Shown())
	}
	if v.Record.DecidedBy != nd.By || (v.Record.State == approval.Denied) == nd.Approve {
		return v.Record, v.Result, &LostError{TaskID: id, State: v.Record.State, By: v.Winner()}
	}
	o.keep(v.ShownRecord())
	return v.ShownRecord(), v.Result, nil
}

// keep records what the decision's outcome says (the watch brings the
// same; this makes the screen's next read agree at once).
func (o *OperatorTasks) keep(r approval.Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.recs[r.TaskID] = r
}

var _ approval.Decider = (*OperatorTasks)(nil)
