package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
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
}

// Queue is the approval queue. It is safe for concurrent use by goroutines
// and by several Vigil processes on the same home.
type Queue struct {
	o  Options
	st store
}

// Open builds a queue and reconciles what a crash may have left behind.
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
	q := &Queue{o: o, st: store{dir: o.Dir}}
	if err := q.Reconcile(ctx); err != nil {
		return nil, err
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
		return q.submitMedia(m, source)
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
	if _, err := q.o.Audit.Append(audit.Entry{Actor: orUnknown(agent), Event: audit.EventRejected, TaskID: taskID,
		Capability: capID, TokenJTI: jti, ErrorCode: string(te.Code),
		Details: audit.Details(map[string]any{"reason": te.Message, "source": source})}); err != nil {
		return Outcome{}, err
	}
	q.o.Log.Info("task rejected", "task_id", taskID, "code", te.Code)
	return Outcome{TaskID: taskID, State: rejected, Error: te}, nil
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

func (q *Queue) submitMedia(m *task.Manifest, source string) (Outcome, error) {
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
	if existing, err := q.st.load(m.TaskID); err == nil {
		if existing.RequestHash != p.RequestHash {
			return q.reject(m.TaskID, m.CapabilityID, p.Claims.Subject, p.Claims.ID, task.Errorf(task.ExecutionFailed,
				"task_id: %q was already submitted with different inputs; use a new task_id", m.TaskID), source)
		}
		// the same task again: idempotent, report where it is
		return Outcome{TaskID: m.TaskID, State: string(existing.State), Error: existing.Error}, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Outcome{}, err
	}
	if res, err := q.o.Results.Load(m.TaskID); err == nil {
		return Outcome{TaskID: m.TaskID, State: stateOfResult(res), Result: res}, nil
	}
	now := q.o.Now().UTC()
	rec := Record{
		TaskID: m.TaskID, CapabilityID: m.CapabilityID, State: Pending,
		Agent: p.Claims.Subject, TokenJTI: p.Claims.ID, Caps: p.Claims.Caps, Device: p.Action.Device,
		Source: source, SubmittedAt: now, ExpiresAt: now.Add(q.o.Timeout), RequestHash: p.RequestHash,
		PlanHash: p.PlanHash,
	}
	if p.Claims.ExpiresAt != nil {
		rec.LeaseExpires = p.Claims.ExpiresAt.UTC()
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return Outcome{}, err
	}
	if err := atomicfile.Write(q.st.manifestPath(m.TaskID), raw, 0o600); err != nil {
		return Outcome{}, err
	}
	if err := q.st.save(rec); err != nil {
		return Outcome{}, err
	}
	if _, err := q.o.Audit.Append(audit.Entry{Actor: rec.Agent, Event: audit.EventSubmitted, TaskID: rec.TaskID,
		Capability: rec.CapabilityID, Target: rec.Device, TokenJTI: rec.TokenJTI, Success: true,
		Details: audit.Details(map[string]any{"source": source, "approval_deadline": rec.ExpiresAt.Format(time.RFC3339),
			"plan_hash": p.PlanHash})}); err != nil {
		return Outcome{}, err
	}
	return Outcome{TaskID: m.TaskID, State: string(Pending)}, nil
}

func stateOfResult(r *task.Result) string {
	if r.Status == task.StatusSuccess {
		return string(Done)
	}
	return string(Failed)
}

// runSearch runs a non-mutating SEARCH_* task at submission: lease checks,
// then the scope executor, once per task_id (a repeat returns the stored,
// byte-identical result).
func (q *Queue) runSearch(ctx context.Context, m *task.Manifest, source string) (Outcome, error) {
	claims, err := q.o.Leases.Check(m.Lease, lease.Request{TaskID: m.TaskID, CapabilityID: m.CapabilityID})
	if err != nil {
		agent, jti := q.agentOf(m.Lease)
		return q.reject(m.TaskID, m.CapabilityID, agent, jti, asTaskError(err), source)
	}
	rh, err := m.RequestHash()
	if err != nil {
		return Outcome{}, err
	}
	var target string
	var in struct {
		TargetScope string `json:"target_scope"`
	}
	_ = json.Unmarshal(m.Inputs, &in)
	target = in.TargetScope
	res, fresh, err := q.o.Results.Do(m.TaskID, rh, func() (*task.Result, error) {
		out, terr := scope.Execute(ctx, q.o.Scopes, m.TaskID, m.CapabilityID, m.Inputs, q.o.ScopeLimits)
		r := &task.Result{TaskID: m.TaskID, CapabilityID: m.CapabilityID, RequestHash: rh,
			ExecutedAt: task.FormatTime(q.o.Now()), Output: json.RawMessage("{}")}
		if terr != nil {
			r.Status, r.Error = task.StatusFailure, terr
		} else {
			b, err := json.Marshal(out)
			if err != nil {
				return nil, err
			}
			r.Status, r.Output = task.StatusSuccess, b
		}
		if err := q.o.Signer.Sign(r); err != nil {
			return nil, err
		}
		return r, nil
	})
	if err != nil {
		return q.reject(m.TaskID, m.CapabilityID, claims.Subject, claims.ID, asTaskError(err), source)
	}
	if fresh {
		e := audit.Entry{Actor: claims.Subject, Event: audit.EventSearched, TaskID: m.TaskID, Capability: m.CapabilityID,
			Target: preview.MaskString(target), TokenJTI: claims.ID, Success: res.Status == task.StatusSuccess,
			Details: audit.Details(map[string]any{"source": source})}
		if res.Error != nil {
			e.ErrorCode = string(res.Error.Code)
		}
		if _, err := q.o.Audit.Append(e); err != nil {
			return Outcome{}, err
		}
	}
	return Outcome{TaskID: m.TaskID, State: stateOfResult(res), Result: res}, nil
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
	if !ok || len(s) > task.MaxTaskIDLen {
		return ""
	}
	return preview.MaskString(s)
}

// Get returns one task's record (expiring it first if its time is up).
func (q *Queue) Get(id string) (Record, error) {
	if err := task.ValidateTaskID(id); err != nil {
		return Record{}, err
	}
	if err := q.expireIfDue(id); err != nil && !errors.Is(err, ErrNotFound) {
		return Record{}, err
	}
	return q.st.load(id)
}

// List returns every task, oldest first, after expiring overdue ones.
func (q *Queue) List() ([]Record, error) {
	ids, err := q.st.ids()
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(ids))
	for _, id := range ids {
		if err := q.expireIfDue(id); err != nil {
			return nil, err
		}
		r, err := q.st.load(id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].SubmittedAt.Equal(out[j].SubmittedAt) {
			return out[i].SubmittedAt.Before(out[j].SubmittedAt)
		}
		return out[i].TaskID < out[j].TaskID
	})
	return out, nil
}

// Pending returns the tasks waiting for a decision.
func (q *Queue) Pending() ([]Record, error) {
	all, err := q.List()
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, r := range all {
		if r.State == Pending {
			out = append(out, r)
		}
	}
	return out, nil
}

// Result returns a task's signed result.
func (q *Queue) Result(id string) (*task.Result, error) { return q.o.Results.Load(id) }

func (q *Queue) expireIfDue(id string) error {
	r, err := q.st.load(id)
	if err != nil || r.State != Pending || q.o.Now().Before(r.ExpiresAt) {
		return err
	}
	unlock, err := q.st.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	r, err = q.st.load(id)
	if err != nil {
		return err
	}
	_, err = q.expireLocked(&r)
	return err
}

// expireLocked turns an overdue pending task into an APPROVAL_TIMEOUT — a
// timeout, recorded as such, never as a person's denial.
func (q *Queue) expireLocked(r *Record) (bool, error) {
	if r.State != Pending || q.o.Now().Before(r.ExpiresAt) {
		return false, nil
	}
	te := task.Errorf(task.ApprovalTimeout, "no decision within %s (deadline %s)", q.o.Timeout, r.ExpiresAt.Format(time.RFC3339))
	err := q.finishWithoutRunning(r, Expired, te, audit.Entry{Actor: "vigil", Event: audit.EventExpired,
		Details: audit.Details(map[string]any{"deadline": r.ExpiresAt.Format(time.RFC3339)})})
	return err == nil, err
}

// finishWithoutRunning stores a signed failure result, audits the outcome
// (e carries actor, event and details; the task's fields are filled in) and
// saves the final state, in that order: the result is the durable decision,
// and settleLocked repairs a crash between the steps.
func (q *Queue) finishWithoutRunning(r *Record, s State, te *task.Error, e audit.Entry) error {
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
	e.TaskID, e.Capability, e.Target, e.TokenJTI, e.ErrorCode = r.TaskID, r.CapabilityID, r.Device, r.TokenJTI, string(te.Code)
	if _, err := q.o.Audit.Append(e); err != nil {
		return err
	}
	r.State, r.Error = s, te
	return q.st.save(*r)
}

// Timeout is the approval deadline's length.
func (q *Queue) Timeout() time.Duration { return q.o.Timeout }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// Decided returns tasks in a final state, most recently finished first, at
// most limit of them (limit <= 0: all).
func (q *Queue) Decided(limit int) ([]Record, error) {
	all, err := q.List()
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, r := range all {
		if r.State.Final() {
			out = append(out, r)
		}
	}
	when := func(r Record) time.Time {
		switch {
		case r.FinishedAt != nil:
			return *r.FinishedAt
		case r.DecidedAt != nil:
			return *r.DecidedAt
		}
		return r.SubmittedAt
	}
	sort.SliceStable(out, func(i, j int) bool { return when(out[i]).After(when(out[j])) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
