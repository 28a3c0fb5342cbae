package natsqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/grants"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/crashpoint"
)

// SubmitSource is the Source of a task that came over the shared queue.
const SubmitSource = "queue"

// SourceHeader carries an MCP client's source ("mcp:<name>") with a
// submission; anything else, or anything that is not display-safe, is
// recorded as SubmitSource.
const SourceHeader = "Vigil-Source"

// submitSource is the Source recorded for a submission: the agent's MCP
// source when it is one and passes the display rules, else SubmitSource.
func submitSource(m jetstream.Msg) string {
	h := m.Headers()
	if h == nil {
		return SubmitSource
	}
	src := h.Get(SourceHeader)
	if !strings.HasPrefix(src, "mcp:") || task.CheckText(src, 100) != nil {
		return SubmitSource
	}
	return src
}

// AckWait is how soon a submission a crashed executor took is delivered
// again.
const AckWait = 6 * time.Second

// MaxOperatorBytes bounds a decision's operator name.
const MaxOperatorBytes = 200

// ExecutorOptions wire the executor to one home.
type ExecutorOptions struct {
	JS        jetstream.JetStream
	Queue     *approval.Queue // the authority: every check and transition is its own
	AuditPath string          // the log whose lines are published to VIGIL_AUDIT
	Host      string          // named in every view, for operators
	// Devices are the ids of the devices this executor serves (its
	// config's [[devices]]): it takes only their submissions, and those
	// that name no device unless another executor takes those.
	Devices []string
	// ID tells this executor from another with the same devices, across
	// restarts (the id of its result-signing key): its own consumer left by
	// an earlier device list is replaced, another's is a conflict; its
	// audit log is published to AuditSubjectFor(ID) (the consumer's name
	// when empty).
	ID   string
	Poll time.Duration // how often local changes (expiry, local decisions) are published; 1 s when 0
	Log  *slog.Logger
	// Layout makes the streams and the bucket when they are missing
	// ([queue] replicas).
	Layout Layout
	// Grants mints the lease of a manifest an agent sent on its own
	// subject without one (grant.go); nil: such a manifest is refused
	// INVALID_LEASE. Audit is the home's log its lease_issued and
	// refusals go to (nil: AuditPath is opened when the first is
	// written), Now its clock (nil: the system's).
	Grants *grants.Grants
	Audit  *audit.Log
	Now    func() time.Time
}

// Executor takes submissions from the work queue, publishes task views, and
// applies operators' decisions through the local queue.
type Executor struct {
	o          ExecutorOptions
	kv         jetstream.KeyValue
	consumer   string                  // this executor's consumer on VIGIL_SUBMIT
	id         string                  // ExecutorOptions.ID (the consumer's name if empty): every view it publishes names it
	cons       jetstream.Consumer      // once claimed
	published  map[string]string       // task id → record hash last seen in the bucket
	shown      map[string]shownPreview // pending task id → the preview this executor published
	syncedSize int64                   // the audit log's size at the last complete sync (-1: none yet)
	changes    *audit.Follower         // the audit log from syncedSize on: the tasks that changed since
	fullAt     time.Time               // when sync last read every task
	audit      *auditFollower
	reconnect  chan struct{} // Reconnected's signal to the loop (holds at most one)
	auditWake  chan struct{} // the loop's signal to the audit publisher (holds at most one)
}

// NewExecutor creates the streams and bucket if they are missing, and
// upgrades an earlier release's submit stream.
func NewExecutor(ctx context.Context, o ExecutorOptions) (*Executor, error) {
	if o.JS == nil || o.Queue == nil || o.AuditPath == "" || len(o.Devices) == 0 {
		return nil, errors.New("natsqueue: JS, Queue, AuditPath and Devices are required")
	}

	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	kv, err := o.Layout.setup(ctx, o.JS, true, o.Log)
	if err != nil {
		return nil, err
	}
	consumer := ExecutorConsumerName(o.Devices)
	auditID := o.ID
	if auditID == "" {
		auditID = consumer
	}
	return &Executor{o: o, kv: kv, consumer: consumer, id: auditID, published: map[string]string{}, shown: map[string]shownPreview{},
		syncedSize: -1,
		audit:      &auditFollower{js: o.JS, path: o.AuditPath, subject: AuditSubjectFor(auditID), executor: auditID},
		reconnect:  make(chan struct{}, 1), auditWake: make(chan struct{}, 1)}, nil
}

// Run works until ctx ends. One goroutine does every transition, so a
// submission, a decision and a sync pass never race each other here (the
// local queue's locks still guard against other processes on the host).
func (e *Executor) Run(ctx context.Context) error {
	err := e.run(ctx)
	if ctx.Err() != nil {
		return nil // stopped, not failed
	}
	return err
}

// Claim creates or updates this executor's consumer, filtered on its
// devices. A device another executor serves is a *ClaimError: `vigil
// serve` calls it before it reports running, so that mistake stops it at
// start. Run claims if Claim was not called.
func (e *Executor) Claim(ctx context.Context) error {
	cons, err := claim(ctx, e.o.JS, e.consumer, e.o.ID, e.o.Host, e.o.Devices, e.o.Log)
	if err != nil {
		return err
	}
	e.cons = cons
	return nil
}

// Consumer is the name of this executor's consumer on VIGIL_SUBMIT.
func (e *Executor) Consumer() string { return e.consumer }

// ID is the executor's id as its views and audit subject name it.
func (e *Executor) ID() string { return e.id }

// Reconnected tells a running executor that its connection came back
// (call it from the connection's reconnect handler): after a server restart
// the bucket's watch is gone, which the loop would otherwise find only by
// missed heartbeats, many seconds later (measured: a decision applied
// 18.7 s after the restart). The loop then follows submissions and
// decisions anew; the watch's replay of every task's latest view is
// applied as at start, and the local queue answers a decision it already
// applied with its stored outcome.
func (e *Executor) Reconnected() {
	select {
	case e.reconnect <- struct{}{}:
	default:
	}
}

func (e *Executor) run(ctx context.Context) error {
	if e.cons == nil {
		if err := e.Claim(ctx); err != nil {
			return err
		}
	}
	// the log's changes wake the audit publisher; without a watch it
	// publishes after each transition (and each Poll at the latest)
	var logChanged <-chan struct{}
	if w, err := audit.Watch(e.o.AuditPath); err != nil {
		e.o.Log.Warn("queue: audit log not watched, published each poll", "err", err)
	} else {
		defer w.Close()
		logChanged = w.C()
	}
	actx, stop := context.WithCancel(ctx)
	var publisher sync.WaitGroup
	defer func() { stop(); publisher.Wait() }()
	for first := true; ; first = false {
		again, err := e.follow(ctx, first, func() {
			publisher.Go(func() { e.publishAudit(actx, logChanged) })
		})
		if err != nil || !again {
			return err
		}
		e.o.Log.Info("queue: connection back: submissions and decisions followed anew")
	}
}

// follow takes submissions and decisions until ctx ends or the connection
// comes back (again: follow anew). first says the audit follower starts
// too: once it knows where the stream ends, started runs its publisher.
func (e *Executor) follow(ctx context.Context, first bool, started func()) (again bool, err error) {
	subs := make(chan jetstream.Msg)
	// a delivery nobody will read (this follow returned) is let go: the
	// submission comes back after AckWait
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	cc, err := e.cons.Consume(func(m jetstream.Msg) {
		select {
		case subs <- m:
		case <-fctx.Done():
		}
	})
	if err != nil {
		return false, fmt.Errorf("nats consume: %w", shown(err))
	}
	defer cc.Stop()
	w, err := e.kv.Watch(ctx, "task.>")
	if err != nil {
		return false, fmt.Errorf("nats watch: %w", shown(err))
	}
	defer w.Stop()
	if first {
		if err := e.audit.start(ctx); err != nil {
			return false, err
		}
		started()
	}
	e.sync(ctx)
	tick := time.NewTicker(e.o.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case <-e.reconnect:
			return true, nil
		case m := <-subs:
			e.submit(ctx, m)
		case ent, ok := <-w.Updates():
			if !ok {
				return false, errors.New("nats watch ended")
			}
			if ent != nil && ent.Operation() == jetstream.KeyValuePut {
				e.applyEntry(ctx, ent)
			}
		case <-tick.C:
			e.sync(ctx)
		}
		e.wakeAudit()
	}
}

// publishAudit publishes the audit log's new lines to VIGIL_AUDIT until
// ctx ends, woken by the log's changes, by the loop after each transition
// (wakeAudit) and each Poll. It runs beside the loop, so that a decision
// or a submission does not wait for the lines of the one before to reach
// the stream; the lines still go one at a time, in order.
func (e *Executor) publishAudit(ctx context.Context, logChanged <-chan struct{}) {
	tick := time.NewTicker(e.o.Poll)
	defer tick.Stop()
	for {
		err := e.audit.publish(ctx)
		if err != nil && ctx.Err() == nil {
			e.o.Log.Warn("queue: audit stream", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-e.auditWake:
		case <-tick.C:
		case _, ok := <-logChanged:
			if !ok {
				logChanged = nil // the watch ended: the tick and the loop still wake it
			}
		}
	}
}

// wakeAudit tells the audit publisher the log may have grown.
func (e *Executor) wakeAudit() {
	select {
	case e.auditWake <- struct{}{}:
	default: // one wake-up pending is enough: it reads to the log's end
	}
}

// submit runs one manifest through the local queue, publishes the task's
// view and the verdict, then acknowledges. A crash before the ack means a
// redelivery, and the local queue answers a resent request with the stored
// outcome: nothing is made or run twice.
func (e *Executor) submit(ctx context.Context, m jetstream.Msg) {
	// a submission left unacknowledged by a crash comes back after
	// AckWait; a long one (a search runs at once) says it is in progress
	working := make(chan struct{})
	defer close(working)
	go func() {
		t := time.NewTicker(AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-working:
				return
			case <-t.C:
				_ = m.InProgress()
			}
		}
	}()
	raw := m.Data()
	digest := Digest(raw)
	if v, ok := e.othersTask(ctx, raw); ok {
		e.answer(ctx, m, digest, v)
		return
	}
	raw, refused, err := e.grantLease(m, raw)
	if err != nil {
		e.o.Log.Warn("queue: lease under a grant", "err", err)
		_ = m.NakWithDelay(5 * time.Second)
		return
	}
	if refused != nil {
		e.answer(ctx, m, digest, *refused)
		return
	}
	out, err := e.o.Queue.Submit(context.WithoutCancel(ctx), raw, submitSource(m))
	if err != nil {
		e.o.Log.Warn("queue: submit", "err", err)
		_ = m.NakWithDelay(5 * time.Second)
		return
	}
	v := Verdict{TaskID: out.TaskID, State: out.State, Error: out.Error, Result: out.Result}
	if out.TaskID != "" && out.State != "rejected" && out.Result == nil {
		if tv, ok := e.publishView(ctx, out.TaskID, publish{queued: queuedAt(m), fresh: true}); ok {
			at, kind := tv.Record.Deadline()
			v.PreviewHash, v.ExpiresAt, v.DeadlineKind = tv.PreviewHash, &at, kind
		}
	}
	crashpoint.Hit("queue.submitted")
	e.answer(ctx, m, digest, v)
}

// answer publishes the verdict, then acknowledges the submission.
func (e *Executor) answer(ctx context.Context, m jetstream.Msg, digest string, v Verdict) {
	b, _ := json.Marshal(v)
	if _, err := e.kv.Put(ctx, VerdictKey(digest), b); err != nil {
		e.o.Log.Warn("queue: verdict", "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	if err := m.DoubleAck(ctx); err != nil {
		e.o.Log.Warn("queue: ack", "err", err)
	}
}

// othersTask rejects a manifest whose task_id another executor's task
// already has in the bucket: a task_id is one request across the shared
// queue as it is in one home, and the view's key is the id alone.
func (e *Executor) othersTask(ctx context.Context, raw []byte) (Verdict, bool) {
	var m struct {
		TaskID string `json:"task_id"`
	}
	if json.Unmarshal(raw, &m) != nil || task.ValidateTaskID(m.TaskID) != nil {
		return Verdict{}, false
	}
	ent, err := e.kv.Get(ctx, TaskKey(m.TaskID))
	if err != nil {
		return Verdict{}, false
	}
	var v TaskView
	if json.Unmarshal(ent.Value(), &v) != nil || v.ExecutorID == "" || v.ExecutorID == e.id {
		return Verdict{}, false
	}
	e.o.Log.Warn("queue: a task_id another executor has", "task_id", m.TaskID, "executor", v.ExecutorID)
	return Verdict{TaskID: m.TaskID, State: "rejected", Error: task.Errorf(task.ExecutionFailed,
		"task_id: %q already names a request on another executor (%s); a task_id is one request, use a new one",
		m.TaskID, v.ExecutorID)}, true
}

// applyEntry applies the decision a view carries, if any.
func (e *Executor) applyEntry(ctx context.Context, ent jetstream.KeyValueEntry) {
	var v TaskView
	if json.Unmarshal(ent.Value(), &v) != nil || v.Decision == nil {
		return
	}
	if err := task.ValidateTaskID(v.Record.TaskID); err != nil || TaskKey(v.Record.TaskID) != ent.Key() {
		return // not a view an executor published
	}
	if v.ExecutorID != e.id {
		// another executor's task; a view an earlier release published
		// names none, and is this one's only if its local queue has it
		if v.ExecutorID != "" {
			return
		}
		if _, err := e.o.Queue.Get(v.Record.TaskID); err != nil {
			return
		}
	}
	e.apply(ctx, ent, v.Record.TaskID, *v.Decision)
}

// apply runs one operator decision through the local queue, which checks
// the deadline, the preview hash and tampering and executes at most once,
// then publishes the outcome (clearing the decision). ent is the view that
// carried the decision.
func (e *Executor) apply(ctx context.Context, ent jetstream.KeyValueEntry, id string, d Decision) {
	ref := &Refusal{DecisionID: d.ID, By: d.By, Code: "refused"}
	switch {
	case !strings.HasPrefix(d.By, "operator:") || task.CheckText(d.By, MaxOperatorBytes) != nil:
		ref.Message = "the decision does not name an operator (operator:<user>@<host>)"
	case task.CheckText(d.Reason, approval.MaxReasonBytes) != nil:
		ref.Message = "the reason is not acceptable text"
	case d.Approve && d.PreviewHash == "":
		ref.Message = "an approval must carry the preview_hash the operator saw"
	case !d.Approve && strings.TrimSpace(d.Reason) == "":
		ref.Message = "a denial needs a reason"
	default:
		ref = nil
	}
	var approved *approval.Record
	var result *task.Result
	if ref == nil {
		rec, res, err := e.o.Queue.Decide(context.WithoutCancel(ctx), id, approval.Decision{Approve: d.Approve, By: d.By,
			Reason: d.Reason, PreviewHash: d.PreviewHash, Via: approval.ViaQueue})
		var de *approval.DecidedError
		switch {
		case err == nil:
			if d.Approve {
				approved, result = &rec, res
			}
		case errors.As(err, &de), errors.Is(err, approval.ErrTampered):
			// the record says what happened; the view carries it
		case errors.Is(err, approval.ErrPreviewChanged):
			ref = &Refusal{DecisionID: d.ID, By: d.By, Code: "preview_changed", Message: shownText(err.Error())}
		default:
			ref = &Refusal{DecisionID: d.ID, By: d.By, Code: "refused", Message: shownText(err.Error())}
		}
		crashpoint.Hit("queue.decided")
	}
	e.publishView(ctx, id, publish{done: &applied{id: d.ID, refusal: ref}, seen: ent, approved: approved, result: result})
}
