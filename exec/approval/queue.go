package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/crashpoint"
	"github.com/vigil-dev/vigil/preview"
)

// DefaultTimeout is how long a task waits for a decision (seed 003: 10 minutes).
const DefaultTimeout = 10 * time.Minute

// Options wire a Queue to the rest of the engine.
type Options struct {
	Dir         string // tasks/
	Inbox       string // inbox/
	Executor    *media.Executor
	Devices     []config.DeviceConfig
	Leases      *lease.Verifier
	Results     *task.Store
	Signer      *task.Signer
	Audit       *audit.Log
	Scopes      []config.ScopeConfig
	ScopeLimits scope.Limits
	Timeout     time.Duration
	Now         func() time.Time
	Log         *slog.Logger
	// RequireOperatorKey refuses decisions but an SSH operator's (with a
	// key), a shared queue operator's and a rule's: [decisions]
	// require_operator_key.
	RequireOperatorKey bool
	// Rules decide a new task at submission when one allows or denies it;
	// nil: the person decides every task.
	Rules Rules
}

// Queue is the approval queue. It is safe for concurrent use by goroutines
// and by several Vigil processes on the same home.
type Queue struct {
	o   Options
	st  store
	idx index
	// rebuilt says why this queue rebuilt the task index (nil: it did not).
	rebuilt error
	// shown keeps the submitted entries listings have checked records against.
	shown *entryCache
}

// Open builds a queue and reconciles what a crash may have left behind: the
// open tasks the index lists (see index.go), never the finished history. A
// task that cannot be repaired is logged and left as it is: it never stops
// the queue from opening (Reconcile reports it).
func Open(ctx context.Context, o Options) (*Queue, error) {
	if o.Executor == nil || o.Leases == nil || o.Results == nil || o.Signer == nil || o.Audit == nil {
		return nil, errors.New("approval: Executor, Leases, Results, Signer and Audit are required")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	q := &Queue{o: o, st: store{dir: o.Dir}, idx: index{dir: filepath.Join(o.Dir, indexDir)}, shown: &entryCache{}}
	if err := q.Reconcile(ctx); err != nil {
		q.o.Log.Warn("reconcile left tasks unrepaired", "err", err)
	}
	return q, nil
}

// Outcome is what a submission led to. State is pending, rejected, or — for
// tasks that run at once (searches) — done or failed with their Result.
type Outcome struct {
	TaskID string       `json:"task_id"`
	State  string       `json:"state"`
	Error  *task.Error  `json:"error,omitempty"`
	Result *task.Result `json:"result,omitempty"`
}

const rejected = "rejected"

func asTaskError(err error) *task.Error {
	var te *task.Error
	if errors.As(err, &te) {
		return &task.Error{Code: te.Code, Message: preview.MaskString(te.Message)}
	}
	return &task.Error{Code: task.ExecutionFailed, Message: preview.MaskString(err.Error())}
}

// Submit validates a manifest and its lease. A media task becomes pending; a
// search task runs at once and its signed result is stored; anything else is
// rejected with its reason. Every outcome is audited.
func (q *Queue) Submit(ctx context.Context, raw []byte, source string) (Outcome, error) {
	m, err := task.ParseManifest(raw)
	if err != nil {
		return q.reject(peekTaskID(raw), "", "", "", asTaskError(err), source)
	}
	switch {
	case media.Supports(m.CapabilityID):
		return q.submitMedia(ctx, m, source)
	default:
		if _, ok := scope.KindFor(m.CapabilityID); ok {
			return q.runSearch(ctx, m, source)
		}
	}
	// an unknown capability: the lease still decides first (seed 000 §2 order)
	if _, err := q.o.Leases.Check(m.Lease, lease.Request{TaskID: m.TaskID, CapabilityID: m.CapabilityID}); err != nil {
		return q.reject(m.TaskID, m.CapabilityID, "", "", asTaskError(err), source)
	}
	return q.reject(m.TaskID, m.CapabilityID, "", "", task.Errorf(task.UnsupportedCapability,
		"capability check failed: %s is not a capability Vigil executes", m.CapabilityID), source)
}

func (q *Queue) reject(taskID, capID, agent, jti string, te *task.Error, source string) (Outcome, error) {
	e := audit.Entry{Actor: orUnknown(agent), Event: audit.EventRejected, TaskID: taskID,
		Capability: capID, TokenJTI: jti, ErrorCode: string(te.Code),
		Details: audit.Details(map[string]any{"reason": te.Message, "source": source})}
	if taskID != "" && q.taken(taskID) {
		// A task_id is one request: a refused submission reusing the id of
		// an existing task stays out of that task's audit trail.
		e.TaskID = ""
		e.Details = audit.Details(map[string]any{"reason": te.Message, "source": source, "reused_task_id": taskID})
	}
	if _, err := q.o.Audit.Append(e); err != nil {
		return Outcome{}, err
	}
	q.o.Log.Info("task rejected", "task_id", taskID, "code", te.Code)
	return Outcome{TaskID: taskID, State: rejected, Error: te}, nil
}

// taken reports whether task_id already names a task (media record, search
// claim or stored result).
func (q *Queue) taken(id string) bool {
	if task.ValidateTaskID(id) != nil {
		return false
	}
	for _, p := range []string{q.st.recordPath(id), q.st.searchPath(id), q.o.Results.Path(id)} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

func orUnknown(agent string) string {
	if agent == "" {
		return "agent:unknown"
	}
	return agent
}

// agentOf reads the lease's subject without trusting it, for audit lines of
// rejections; checked claims are used everywhere else.
func (q *Queue) agentOf(token string) (string, string) {
	c, err := q.o.Leases.Verify(token)
	if err != nil {
		return "", ""
	}
	return c.Subject, c.ID
}

// checkShownInputs refuses a target_device Vigil would display with
// control or invisible characters (the lease's claims are checked by the
// lease package). The message names the field and the rule, not the value.
func checkShownInputs(m *task.Manifest) *task.Error {
	var in map[string]json.RawMessage
	if json.Unmarshal(m.Inputs, &in) != nil {
		return nil // the input rules report it
	}
	var dev string
	if raw, ok := in["target_device"]; ok && json.Unmarshal(raw, &dev) == nil {
		if err := task.CheckDisplay(dev); err != nil {
			return task.Errorf(task.ExecutionFailed, "manifest: inputs.target_device: %v", err)
		}
	}
	return nil
}

// conflict is the rejection of a manifest that reuses a task_id for
// another request. what names the difference.
func conflict(id, what string) *task.Error {
	return task.Errorf(task.ExecutionFailed,
		"task_id: %q already names another request (%s); a task_id is one request, use a new one", id, what)
}

// sameRequest compares a stored task with a new submission: the same
// capability, inputs (which include the device) and lease subject. A lease
// re-issued with a new jti for the same request is the same request: the
// stored answer comes back and the new lease is not used.
func sameRequest(id, capID, requestHash, agent string, m *task.Manifest, rh, sub string) *task.Error {
	switch {
	case capID != m.CapabilityID:
		return conflict(id, fmt.Sprintf("it is a %s task, this manifest asks for %s", capID, m.CapabilityID))
	case requestHash != rh:
		return conflict(id, "the same capability with other inputs or another device")
	case agent != "" && agent != sub:
		return conflict(id, "it was submitted under another lease subject")
	}
	return nil
}

func (q *Queue) submitMedia(ctx context.Context, m *task.Manifest, source string) (Outcome, error) {
	if te := checkShownInputs(m); te != nil {
		agent, jti := q.agentOf(m.Lease)
		return q.reject(m.TaskID, m.CapabilityID, agent, jti, te, source)
	}
	p, err := q.o.Executor.Prepare(m)
	if err != nil {
		agent, jti := q.agentOf(m.Lease)
		return q.reject(m.TaskID, m.CapabilityID, agent, jti, asTaskError(err), source)
	}
	unlock, err := q.st.lock(m.TaskID)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	existing, err := q.st.load(m.TaskID)
	switch {
	case errors.Is(err, ErrDamaged):
		return q.reject(m.TaskID, m.CapabilityID, p.Claims.Subject, p.Claims.ID,
			conflict(m.TaskID, "an existing task whose record is damaged"), source)
	case err == nil:
		if te := sameRequest(m.TaskID, existing.CapabilityID, existing.RequestHash, existing.Agent, m, p.RequestHash, p.Claims.Subject); te != nil {
			return q.reject(m.TaskID, m.CapabilityID, p.Claims.Subject, p.Claims.ID, te, source)
		}
		// the same task again: idempotent, report where it is
		out := Outcome{TaskID: m.TaskID, State: string(existing.State), Error: existing.Error}
		if existing.State.Final() {
			out.Result, _ = q.resultFor(&existing)
		}
		return out, nil
	case !errors.Is(err, ErrNotFound):
		return Outcome{}, err
	}
	if claim, err := q.st.loadSearch(m.TaskID); err == nil {
		return q.reject(m.TaskID, m.CapabilityID, p.Claims.Subject, p.Claims.ID,
			conflict(m.TaskID, fmt.Sprintf("it is a %s task, this manifest asks for %s", claim.CapabilityID, m.CapabilityID)), source)
	}
	if res, err := q.o.Results.Load(m.TaskID); err == nil {
		if te := sameRequest(m.TaskID, res.CapabilityID, res.RequestHash, "", m, p.RequestHash, p.Claims.Subject); te != nil {
			return q.reject(m.TaskID, m.CapabilityID, p.Claims.Subject, p.Claims.ID, te, source)
		}
		return Outcome{TaskID: m.TaskID, State: stateOfResult(res), Result: res}, nil
	} else if !errors.Is(err, task.ErrNotFound) {
		return Outcome{}, err
	}
	// the verifier's leeway let a lease already past its exp through; the
	// deadline has no leeway, so such a task could never be approved
	if exp := p.Claims.ExpiresAt; exp != nil && !q.o.Now().Before(exp.Time) {
		return q.reject(m.TaskID, m.CapabilityID, p.Claims.Subject, p.Claims.ID, task.Errorf(task.LeaseExpired,
			"expiry check failed: the lease expired at %s, before it could wait for a decision", exp.UTC().Format(time.RFC3339)), source)
	}
	d := q.ruleDecision(m, p)
	out, err := q.createPending(m, p, source, d)
	if err != nil || d == nil {
		return out, err
	}
	return q.applyRule(ctx, m.TaskID, *d)
}

// createPending makes a new pending task durable: manifest, record (with
// log_from), the audit log's submitted entry, then the record again with
// that entry's place. See the crash table in the package doc.
func (q *Queue) createPending(m *task.Manifest, p *media.Prepared, source string, rule *Decision) (Outcome, error) {
	// the submission is audited: on a log that cannot take its entry
	// nothing is written (saveFrom checks again before the record)
	if err := q.o.Audit.CheckEnd(); err != nil {
		return Outcome{}, err
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return Outcome{}, err
	}
	now := q.o.Now().UTC()
	rec := Record{
		TaskID: m.TaskID, CapabilityID: m.CapabilityID, State: Pending,
		Agent: p.Claims.Subject, TokenJTI: p.Claims.ID, Caps: p.Claims.Caps, Device: p.Action.Device,
		Source: source, SubmittedAt: now, ExpiresAt: now.Add(q.o.Timeout), RequestHash: p.RequestHash,
		PlanHash: p.PlanHash, ManifestHash: sha256Hex(raw),
	}
	if rule != nil {
		rec.DecidingRule = rule.By
	}
	if p.Claims.ExpiresAt != nil {
		rec.LeaseExpires = p.Claims.ExpiresAt.UTC()
	}
	if err := atomicfile.Write(q.st.manifestPath(m.TaskID), raw, 0o600); err != nil {
		return Outcome{}, err
	}
	crashpoint.Hit("submit.manifest")
	// the index lists the task before its record makes it one, so a crash
	// from here on leaves a task the next open finds
	if err := q.idx.mark(m.TaskID); err != nil {
		return Outcome{}, err
	}
	crashpoint.Hit("submit.index")
	if err := q.saveFrom(&rec); err != nil {
		return Outcome{}, err
	}
	crashpoint.Hit("submit.record")
	if err := q.logSubmitted(&rec, false); err != nil {
		return Outcome{}, err
	}
	return Outcome{TaskID: m.TaskID, State: string(Pending)}, nil
}

// saveFrom saves r with LogFrom set to the log's end now: the transition's
// audit entry is still to come, and will be found at or after that offset.
// It begins every transition, so it first checks that the log can take that
// entry: on a cut or altered log nothing moves (decisions fail closed) until
// `vigil audit seal` records the break.
func (q *Queue) saveFrom(r *Record) error {
	if err := q.o.Audit.CheckEnd(); err != nil {
		return err
	}
	from, err := q.logEnd()
	if err != nil {
		return err
	}
	r.LogFrom = &from
	return q.st.save(*r)
}

// logSubmitted appends the submitted entry (or, in recovery, finds the one a
// crash left unrecorded) and saves where it is.
func (q *Queue) logSubmitted(r *Record, recovering bool) error {
	from := int64(0)
	if r.LogFrom != nil {
		from = *r.LogFrom
	}
	e, off, ok := audit.Entry{}, int64(0), false
	if recovering {
		var err error
		if e, off, ok, err = q.findLogged(r.TaskID, from, audit.EventSubmitted); err != nil {
			return err
		}
	}
	if !ok {
		details := map[string]any{"source": r.Source, "approval_deadline": r.ExpiresAt.Format(time.RFC3339),
			"plan_hash": r.PlanHash, "manifest_hash": r.ManifestHash, "request_hash": r.RequestHash, "caps": r.Caps}
		if !r.LeaseExpires.IsZero() {
			// the lease's exp (whole seconds), so the deadline a person sees is
			// held to the log, not to record.json (shownMismatch)
			details["lease_expires"] = r.LeaseExpires.UTC().Format(time.RFC3339)
		}
		if recovering {
			details["reconciled"] = true
		}
		var err error
		e, err = q.o.Audit.Append(audit.Entry{Actor: r.Agent, Event: audit.EventSubmitted, TaskID: r.TaskID,
			Capability: r.CapabilityID, Target: r.Device, TokenJTI: r.TokenJTI, Success: true,
			Details: audit.Details(details)})
		if err != nil {
			return err
		}
		crashpoint.Hit("submit.audit")
		if _, off, ok, err = q.findLogged(r.TaskID, from, audit.EventSubmitted); err != nil {
			return err
		}
	}
	r.SubmittedSeq, r.LogFrom = &e.Seq, nil
	if ok {
		r.SubmittedOffset = &off
	}
	if err := q.st.save(*r); err != nil {
		return err
	}
	crashpoint.Hit("submit.done")
	return nil
}

// peekTaskID pulls task_id out of a manifest that failed validation, so the
// rejection can still say which task it was (masked, bounded).
func peekTaskID(raw []byte) string {
	var v struct {
		TaskID any `json:"task_id"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	s, ok := v.TaskID.(string)
	if !ok || task.ValidateTaskID(s) != nil {
		return ""
	}
	return preview.MaskString(s)
}

// Get returns one task's record, after finishing what a crash left undone
// and expiring it if its deadline passed. A finished record's decided_by is
// held to the audit log (checkDecidedBy). A damaged record comes back in
// State Damaged with an error wrapping ErrDamaged.
func (q *Queue) Get(id string) (Record, error) {
	if err := task.ValidateTaskID(id); err != nil {
		return Record{}, err
	}
	q.maintain(context.Background(), id)
	r, err := q.st.load(id)
	if err == nil {
		q.checkDecidedBy(&r)
		q.checkShown(&r)
	}
	return r, err
}

// List returns every task ever stored, oldest first, after repairing and
// expiring what is due. It reads every record: the finished history is read
// only when asked for like this; the queue's own work uses Pending. A
// damaged record is listed in State Damaged; it never hides the others.
func (q *Queue) List() ([]Record, error) {
	ids, err := q.st.ids()
	if err != nil {
		return nil, err
	}
	return q.listed(ids), nil
}

// Tasks returns the records of the given tasks, oldest first, after the
// same repairs as List; ids with no task are left out. A screen that learnt
// which tasks changed reloads only those.
func (q *Queue) Tasks(ids []string) []Record {
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if task.ValidateTaskID(id) == nil {
			valid = append(valid, id)
		}
	}
	return q.listed(valid)
}

// listed reads the records of ids for a listing, repairing what is due.
func (q *Queue) listed(ids []string) []Record {
	out := make([]Record, 0, len(ids))
	for _, id := range ids {
		q.maintain(context.Background(), id)
		r, err := q.st.load(id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil && !errors.Is(err, ErrDamaged):
			r = Record{TaskID: id, State: Damaged, Damage: "record.json cannot be read: " + errReason(err)}
		case err == nil && r.State == Pending:
			if why := q.manifestProblem(&r); why != "" {
				r.State, r.Damage = Damaged, why
			} else {
				q.checkShown(&r)
			}
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].SubmittedAt.Equal(out[j].SubmittedAt) {
			return out[i].SubmittedAt.Before(out[j].SubmittedAt)
		}
		return out[i].TaskID < out[j].TaskID
	})
	return out
}

// manifestProblem says, for a listing, why a pending task's manifest cannot
// be run (missing, unreadable, not the bytes submitted); a decision on it
// marks it tampered.
func (q *Queue) manifestProblem(r *Record) string {
	b, err := q.st.readManifest(r.TaskID)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "manifest.json is missing"
	case err != nil:
		return "manifest.json cannot be read: " + errReason(err)
	case r.ManifestHash != "" && sha256Hex(b) != r.ManifestHash:
		return fmt.Sprintf("manifest.json changed after submission (recorded sha256:%s, now sha256:%s)", r.ManifestHash, sha256Hex(b))
	}
	return ""
}

// Pending returns the tasks waiting for a decision, and damaged tasks (State
// Damaged, with the reason) so a person sees them. It reads only the tasks
// the index lists as open, each from its own record.
func (q *Queue) Pending() ([]Record, error) {
	ids, err := q.openTaskIDs()
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, r := range q.listed(ids) {
		if r.State == Pending || r.State == Damaged {
			out = append(out, r)
		}
	}
	return out, nil
}

// TasksDir is the folder holding one folder per task.
func (q *Queue) TasksDir() string { return q.o.Dir }

// OpenTasksDir is the index folder holding one marker per open task (named
// by its id): a marker appears when a task is submitted and goes when it is
// finished, so a screen watching it learns which tasks arrived and left.
func (q *Queue) OpenTasksDir() string { return q.idx.openDir() }

// IndexRebuilt says why this queue had to rebuild its task index from the
// records (missing: a home from before the index; damaged: what was wrong),
// or nil when it did not.
func (q *Queue) IndexRebuilt() error { return q.rebuilt }

// RebuildIndex makes the task index again from every record, for an
// operator who doubts it (a marker deleted by hand hides an open task from
// the listings, never from a decision). It returns the number of open tasks.
func (q *Queue) RebuildIndex() (int, error) { return q.rebuildIndex() }

// maintain repairs, expires or retires one task when that is due and its
// lock is free. Problems are logged: a listing never fails because of one task.
func (q *Queue) maintain(ctx context.Context, id string) {
	if err := q.reconcileOne(ctx, id); err != nil && !errors.Is(err, ErrDamaged) {
		q.o.Log.Warn("repair failed", "task_id", id, "err", err)
	}
}

// due reports whether a record needs work: an interrupted transition, or a
// pending task past its deadline.
func (q *Queue) due(r *Record) bool {
	if r.LogFrom != nil || r.State == Approved || r.State == Executing {
		return true
	}
	if r.State == Pending {
		if at, _ := r.Deadline(); !q.o.Now().Before(at) {
			return true
		}
		// a result stored for a pending task (a crash in a version that
		// stored results before records): settle from it
		_, err := os.Lstat(q.o.Results.Path(r.TaskID))
		return err == nil
	}
	return false
}

// expireLocked turns a pending task past its deadline into an expiry: an
// APPROVAL_TIMEOUT, or LEASE_EXPIRED when the lease ran out first. Either is
// recorded as such, never as a person's denial.
func (q *Queue) expireLocked(r *Record) (bool, error) {
	at, kind := r.Deadline()
	if r.State != Pending || q.o.Now().Before(at) {
		return false, nil
	}
	te := task.Errorf(task.ApprovalTimeout, "no decision within %s (deadline %s)", q.o.Timeout, at.Format(time.RFC3339))
	if kind == DeadlineLease {
		te = task.Errorf(task.LeaseExpired, "expiry check failed: the lease expired at %s before a decision", at.Format(time.RFC3339))
	}
	err := q.finish(r, "expire", Expired, te, audit.Entry{Actor: "vigil", Event: audit.EventExpired,
		Details: audit.Details(map[string]any{"deadline": at.Format(time.RFC3339), "deadline_kind": kind})})
	return err == nil, err
}

// finish ends a task without running it (denied, expired, tampered, failed
// before or without a device result): the record first (final state, with
// log_from), then the signed failure result, then the audit entry, then the
// record without log_from. op names the crash points (op.record, op.result,
// op.audit, op.done). e carries actor, event and details; the task's fields
// are filled in.
func (q *Queue) finish(r *Record, op string, s State, te *task.Error, e audit.Entry) error {
	now := q.o.Now().UTC()
	r.State, r.Error, r.FinishedAt = s, te, &now
	if err := q.saveFrom(r); err != nil {
		return err
	}
	crashpoint.Hit(op + ".record")
	return q.completeFinish(r, op, &e)
}

// completeFinish does finish's steps after the record: store the result if
// it is not, log the event if it is not logged since log_from, clear
// log_from. Recovery calls it with e nil (a reconciled entry is made).
func (q *Queue) completeFinish(r *Record, op string, e *audit.Entry) error {
	te := r.Error
	if te == nil {
		te = task.Errorf(task.ExecutionFailed, "%s", r.State)
	}
	_, _, err := q.o.Results.Do(r.TaskID, r.RequestHash, func() (*task.Result, error) {
		res := &task.Result{TaskID: r.TaskID, CapabilityID: r.CapabilityID, Status: task.StatusFailure,
			Output: json.RawMessage("{}"), Error: te, ExecutedAt: task.FormatTime(q.o.Now()), RequestHash: r.RequestHash}
		if err := q.o.Signer.Sign(res); err != nil {
			return nil, err
		}
		return res, nil
	})
	if err != nil {
		return err
	}
	crashpoint.Hit(op + ".result")
	event := eventOf(r.State)
	logged := false
	if e == nil && r.LogFrom != nil {
		if _, _, logged, err = q.findLogged(r.TaskID, q.scanFrom(r), event); err != nil {
			return err
		}
	}
	if !logged {
		if e == nil {
			actor := "vigil"
			if r.State == Denied && r.DecidedBy != "" {
				actor = r.DecidedBy
			}
			d := map[string]any{"reconciled": true, "message": te.Message}
			if r.State == Denied {
				d["reason"] = r.Reason
			}
			e = &audit.Entry{Actor: actor, Event: event, Details: audit.Details(d)}
		}
		e.TaskID, e.Capability, e.Target, e.TokenJTI, e.ErrorCode = r.TaskID, r.CapabilityID, r.Device, r.TokenJTI, string(te.Code)
		if _, err := q.o.Audit.Append(*e); err != nil {
			return err
		}
		crashpoint.Hit(op + ".audit")
	}
	r.LogFrom = nil
	if err := q.st.save(*r); err != nil {
		return err
	}
	crashpoint.Hit(op + ".done")
	q.retireQuietly(*r)
	return nil
}

// eventOf is the audit event that records a task entering state s.
func eventOf(s State) string {
	switch s {
	case Denied:
		return audit.EventDenied
	case Expired:
		return audit.EventExpired
	case Tampered:
		return eventTampered
	case Done:
		return audit.EventExecuted
	case Approved:
		return audit.EventApproved
	case Pending:
		return audit.EventSubmitted
	}
	return audit.EventFailed
}

// Timeout is the approval deadline's length.
func (q *Queue) Timeout() time.Duration { return q.o.Timeout }

// Decided returns tasks in a final state, most recently finished first, at
// most limit of them. With a limit only the tail of the index's finished
// list is read (and those records); limit <= 0 reads every record.
func (q *Queue) Decided(limit int) ([]Record, error) {
	var recs []Record
	if limit <= 0 {
		all, err := q.List()
		if err != nil {
			return nil, err
		}
		recs = all
	} else {
		if _, err := q.openTaskIDs(); err != nil { // builds the index if it must
			return nil, err
		}
		// a few more than asked: finishing order across processes is only
		// nearly the order of their finished_at
		ids, err := q.idx.recentFinished(limit + 32)
		if err != nil {
			return nil, err
		}
		recs = q.listed(ids)
	}
	var out []Record
	for _, r := range recs {
		if r.State.Final() {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return when(out[i]).After(when(out[j])) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		q.checkShown(&out[i]) // who asked is what the log says, in the history too
	}
	return out, nil
}
