package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/crashpoint"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// View is what a person reviews: the task, the masked preview of the exact
// request (its effect including the device's state now, where readable) and
// the hash an approval binds to.
type View struct {
	Record  Record              `json:"task"`
	Preview preview.HTTPPreview `json:"preview"`
	// BindingHash is the hash of the masked preview without the device's
	// live state (which changes while mpv plays); an approval records it and
	// is refused if the request to send no longer produces it.
	BindingHash string `json:"preview_hash"`
	LeaseValid  bool   `json:"lease_valid"`
	LeaseError  string `json:"lease_error,omitempty"`
	// Problem, when set, says why the task cannot run as shown: its stored
	// request no longer hashes to what was submitted (a decision marks it
	// tampered).
	Problem string `json:"problem,omitempty"`
	// Warnings are what a person must be told about the media URI before
	// trusting how it reads (hidden characters, a non-ASCII host and its
	// punycode, a look-alike host); already safe to show.
	Warnings []string `json:"warnings,omitempty"`
}

// plan re-plans a task's request from its manifest without a lease check, so
// the person can see even a task whose lease has lapsed.
func (q *Queue) plan(m *task.Manifest) (media.Plan, media.Driver, error) {
	ids := make([]string, len(q.o.Devices))
	for i, d := range q.o.Devices {
		ids[i] = d.ID
	}
	a, err := media.ParseInputs(m.CapabilityID, m.Inputs, ids)
	if err != nil {
		return media.Plan{}, nil, err
	}
	drv, ok := q.o.Executor.Driver(a.Device)
	if !ok {
		return media.Plan{}, nil, task.Errorf(task.ExecutionFailed, "target_device: %q is not allowlisted", a.Device)
	}
	p, err := drv.Plan(a)
	return p, drv, err
}

func toRequest(p media.Plan) preview.Request {
	return preview.Request{Method: p.Method, URL: p.URL, Headers: p.Headers, Body: p.Body}
}

// BindingHash is the masked preview's hash without live device state.
func BindingHash(p media.Plan) string { return preview.Build(toRequest(p), p.Effect).Hash() }

// Preview builds the masked preview of a task's request from the manifest
// stored now. A damaged task comes back with its Record (State Damaged and
// the reason) and an error wrapping ErrDamaged.
func (q *Queue) Preview(ctx context.Context, id string) (View, error) {
	r, err := q.Get(id)
	if err != nil {
		return View{Record: r}, err
	}
	m, _, err := q.st.loadManifest(id)
	if err != nil {
		why := "manifest.json cannot be read"
		if errors.Is(err, os.ErrNotExist) {
			why = "manifest.json is missing"
		} else if errors.Is(err, task.ErrNotAFile) {
			why = "manifest.json cannot be read: " + errReason(err)
		} else if raw, rerr := q.st.readManifest(id); rerr == nil {
			why = "manifest.json no longer parses (its bytes are the ones submitted)"
			if h := sha256Hex(raw); h != r.ManifestHash {
				why = fmt.Sprintf("manifest.json no longer parses (recorded sha256:%s, now sha256:%s)", r.ManifestHash, h)
			}
		}
		r.State, r.Damage = Damaged, why
		return View{Record: r}, fmt.Errorf("task %s: %w: %s", id, ErrDamaged, why)
	}
	p, drv, err := q.plan(m)
	if err != nil {
		return View{Record: r}, err
	}
	effect := p.Effect
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if st, err := drv.State(sctx); err == nil {
		if now := DescribeState(st); now != "" {
			effect = "now: " + now + " → " + p.Effect
		}
	} else {
		effect = "now: unknown (" + err.Error() + ") → " + p.Effect
	}
	v := View{Record: r, Preview: preview.Build(toRequest(p), effect), BindingHash: BindingHash(p), LeaseValid: true}
	if _, err := q.o.Executor.Prepare(m); err != nil {
		v.LeaseValid, v.LeaseError = false, preview.MaskString(err.Error())
	}
	var in struct {
		MediaURI string `json:"media_uri"`
	}
	if json.Unmarshal(m.Inputs, &in) == nil && in.MediaURI != "" {
		for _, w := range safetext.URLWarnings(preview.MaskString(in.MediaURI)) {
			v.Warnings = append(v.Warnings, "media_uri "+w)
		}
	}
	if !r.State.Final() {
		if _, t, err := q.checkStored(&r); err == nil && t != nil {
			v.Problem = t.message()
		}
	}
	return v, nil
}

// DescribeState turns a driver's State bytes into a phrase for a person
// ("paused at 12:31 of a.mp3"); the media package reads every driver's shape
// (the simulator's, mpv's and Home Assistant's). Unknown shapes give "".
func DescribeState(b []byte) string { return media.DescribeState(b) }

// MaxReasonBytes bounds a denial's reason.
const MaxReasonBytes = 2000

// ErrBadReason refuses a denial whose reason holds control or invisible
// characters (it goes back to the agent and into the log) or is too long;
// nothing is decided.
var ErrBadReason = errors.New("reason")

// ErrPreviewChanged means the request to send is no longer the one shown.
var ErrPreviewChanged = errors.New("the request changed since the preview was shown; review it again")

// Decide records the first decision on a pending task; later ones get a
// *DecidedError. The stored manifest and plan are re-hashed first: a
// mismatch marks the task Tampered and returns ErrTampered. An approval
// whose PreviewHash (when set) is not the preview of the stored request now
// is refused with ErrPreviewChanged and changes nothing. An approval then
// executes the task (at most once) and returns its signed result. A task
// whose lease ran out is expired (LEASE_EXPIRED) instead of run.
//
// The stages run in this order under the task's lock: settle what a crash
// interrupted, expire or report a task no longer pending, verify the stored
// task, then deny or approve (record, log, execute; see doc.go for the
// crash order of those writes).
func (q *Queue) Decide(ctx context.Context, id string, d Decision) (Record, *task.Result, error) {
	if err := checkDecision(id, d); err != nil {
		return Record{}, nil, err
	}
	if err := q.MayDecide(d); err != nil {
		return Record{}, nil, err
	}
	if r, err := q.st.load(id); err != nil {
		return r, nil, err // no lock folder is made for a task that does not exist
	}
	// One critical section from the decision to the end of the execution: no
	// other process can decide, reconcile or run this task in between.
	unlock, err := q.st.lock(id)
	if err != nil {
		return Record{}, nil, err
	}
	defer unlock()
	return q.decideLocked(ctx, id, d)
}

// decideLocked is Decide's work once the task's lock is held.
func (q *Queue) decideLocked(ctx context.Context, id string, d Decision) (Record, *task.Result, error) {
	r, err := q.st.load(id)
	if err != nil {
		return r, nil, err
	}
	if done, res, err := q.settleForDecision(ctx, id, &r); done {
		return r, res, err
	}
	c, res, err := q.verifyPending(id, &r)
	if c == nil {
		return r, res, err
	}
	now := q.o.Now().UTC()
	if !d.Approve {
		res, err := q.denyLocked(id, &r, d, now)
		return r, res, err
	}
	// A lease that lapsed or was revoked while the task waited stops it here.
	if err := q.leaseUsable(c.m, now); err != nil {
		res, err := q.leaseFailedLocked(id, &r, d, now, err)
		return r, res, err
	}
	return q.approveLocked(ctx, id, r, c, d, now)
}

// leaseUsable checks the task's lease at decision time: the verifier's
// checks (signature, revocation, exp within its clock-skew leeway), then
// exp itself with no leeway — the deadline a person is shown is the exp, so
// a lease past it is never approved (a *task.Error LEASE_EXPIRED).
func (q *Queue) leaseUsable(m *task.Manifest, now time.Time) error {
	p, err := q.o.Executor.Prepare(m)
	if err != nil {
		return err
	}
	if exp := p.Claims.ExpiresAt; exp != nil && !now.Before(exp.Time) {
		return task.Errorf(task.LeaseExpired, "expiry check failed: the lease expired at %s, before the approval",
			exp.UTC().Format(time.RFC3339))
	}
	return nil
}

// checkDecision refuses a decision that is malformed before anything is
// read: a bad task id, or a denial's reason that cannot be shown.
func checkDecision(id string, d Decision) error {
	if err := task.ValidateTaskID(id); err != nil {
		return err
	}
	if !d.Approve {
		if err := task.CheckText(d.Reason, MaxReasonBytes); err != nil {
			return fmt.Errorf("%w: %v", ErrBadReason, err)
		}
	}
	return nil
}

// settleForDecision finishes a transition a crash interrupted (a decision
// the record holds is the decision of record), expires a task whose
// deadline passed, and answers for a task that is no longer pending. done
// says the decision ends here, with res and err as its answer.
func (q *Queue) settleForDecision(ctx context.Context, id string, r *Record) (done bool, res *task.Result, err error) {
	if err := q.settleLocked(ctx, r); err != nil {
		res, _ := q.resultFor(r)
		return true, res, err
	}
	if expired, err := q.expireLocked(r); err != nil || expired {
		if err != nil {
			return true, nil, err
		}
		res, err := q.decidedLocked(id, r)
		return true, res, err
	}
	if r.State != Pending {
		res, err := q.decidedLocked(id, r)
		return true, res, err
	}
	return false, nil, nil
}

// decidedLocked is the answer to a decision on a task already decided: its
// result, if any, and a *DecidedError naming who decided.
func (q *Queue) decidedLocked(id string, r *Record) (*task.Result, error) {
	res, _ := q.resultFor(r)
	q.checkDecidedBy(r) // who decided is what the log says
	de := &DecidedError{TaskID: id, State: r.State, By: r.DecidedBy}
	if r.Error != nil {
		de.Code = r.Error.Code
	}
	return res, de
}

// verifyPending re-hashes a pending task's stored manifest and plan, and
// checks the log holds no decision for it. A task that fails either is
// marked Tampered and nil is returned with ErrTampered (or another error
// when the check itself failed); otherwise the checked task.
func (q *Queue) verifyPending(id string, r *Record) (*checked, *task.Result, error) {
	c, t, err := q.checkStored(r)
	if err != nil {
		return nil, nil, err
	}
	if t == nil {
		if t, err = q.rolledBack(r); err != nil {
			return nil, nil, fmt.Errorf("nothing decided: %w", err)
		}
	}
	if t != nil {
		err := q.tamperLocked(r, t)
		res, _ := q.resultFor(r)
		return nil, res, errors.Join(fmt.Errorf("%w (%s)", ErrTampered, t.message()), err)
	}
	return c, nil, nil
}

// rolledBack finds a decision in the log for a pending record: the log is
// the authority on decisions, so such a record was rolled back (the record
// only ever moves first, so no crash leaves this).
func (q *Queue) rolledBack(r *Record) (*tamper, error) {
	var e audit.Entry
	found := false
	if err := q.taskEntries(r, func(te audit.Entry, _ int64) bool {
		switch te.Event {
		case audit.EventApproved, audit.EventDenied, audit.EventExpired, eventTampered, audit.EventExecuted, audit.EventFailed:
			e, found = te, true
			return false
		}
		return true
	}); err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	return &tamper{what: "record", detail: fmt.Sprintf("record.json says pending but the audit log holds %q for this task (seq %d)", e.Event, e.Seq)}, nil
}

// denyLocked records a denial with its (masked) reason.
func (q *Queue) denyLocked(id string, r *Record, d Decision, now time.Time) (*task.Result, error) {
	reason := preview.MaskString(d.Reason)
	r.DecidedAt, r.DecidedBy, r.DecidedVia, r.DecidedKey, r.Reason = &now, d.By, d.Via, d.proof(), reason
	te := task.Errorf(task.ApprovalDenied, "denied by %s: %s", d.By, reason)
	err := q.finish(r, "deny", Denied, te, audit.Entry{Actor: d.By, Event: audit.EventDenied,
		Details: audit.Details(withProof(map[string]any{"reason": reason, "via": d.Via}, d.Via, d.proof()))})
	res, _ := q.resultFor(r)
	return res, err
}

// leaseFailedLocked ends an approved task whose lease no longer lets it run:
// Expired when the lease lapsed, Failed (decided by the approver) otherwise.
func (q *Queue) leaseFailedLocked(id string, r *Record, d Decision, now time.Time, err error) (*task.Result, error) {
	te := asTaskError(err)
	var ferr error
	if te.Code == task.LeaseExpired {
		ferr = q.finish(r, "expire", Expired, te, audit.Entry{Actor: "vigil", Event: audit.EventExpired,
			Details: audit.Details(map[string]any{"deadline_kind": DeadlineLease, "stage": "approval", "message": te.Message})})
	} else {
		r.DecidedAt, r.DecidedBy, r.DecidedVia, r.DecidedKey = &now, d.By, d.Via, d.proof()
		ferr = q.finish(r, "fail", Failed, te, audit.Entry{Actor: d.By, Event: audit.EventFailed,
			Details: audit.Details(withProof(map[string]any{"stage": "approval", "message": te.Message}, d.Via, d.proof()))})
	}
	res, _ := q.resultFor(r)
	return res, ferr
}

// approveLocked checks the preview the person saw is still the request's,
// then records the approval (record, then log) and executes the task.
func (q *Queue) approveLocked(ctx context.Context, id string, r Record, c *checked, d Decision, now time.Time) (Record, *task.Result, error) {
	bh := BindingHash(c.plan)
	if d.PreviewHash != "" && d.PreviewHash != bh {
		return r, nil, fmt.Errorf("%w (approved preview %s, the stored request now previews as %s)", ErrPreviewChanged,
			shortHash(d.PreviewHash), shortHash(bh))
	}
	before := r
	r.State, r.DecidedAt, r.DecidedBy, r.DecidedVia, r.PreviewHash, r.PlanHash = Approved, &now, d.By, d.Via, bh, c.plan.Hash()
	r.DecidedKey = d.proof()
	// The record says approved (with log_from) before the log does: the log
	// never holds a decision the record lacks, and recovery completes the
	// entry from the record. Nothing runs before the entry is in the log.
	if err := q.saveFrom(&r); err != nil {
		return before, nil, fmt.Errorf("approval not recorded, nothing ran: %w", err)
	}
	crashpoint.Hit("approve.record")
	if err := q.logApproved(&r); err != nil {
		// undo the record unless the entry made it to the log after all
		if _, _, ok, ferr := q.findLogged(id, *r.LogFrom, audit.EventApproved); ferr != nil || !ok {
			before.LogFrom = nil
			if serr := q.st.save(before); serr != nil {
				return r, nil, fmt.Errorf("approval not recorded, nothing ran: %w", errors.Join(err, serr))
			}
			return before, nil, fmt.Errorf("approval not recorded, nothing ran: %w", err)
		}
	}
	return q.executeLocked(ctx, &r, c.m)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// logApproved appends the approved entry.
func (q *Queue) logApproved(r *Record) error {
	d := withProof(map[string]any{"preview_hash": r.PreviewHash, "plan_hash": r.PlanHash, "via": r.DecidedVia}, r.DecidedVia, r.DecidedKey)
	if _, err := q.o.Audit.Append(audit.Entry{Actor: orUnknown(r.DecidedBy), Event: audit.EventApproved, TaskID: r.TaskID,
		Capability: r.CapabilityID, Target: r.Device, TokenJTI: r.TokenJTI, Success: true,
		Details: audit.Details(d)}); err != nil {
		return err
	}
	crashpoint.Hit("approve.audit")
	return nil
}

// approvalOfRecord checks an approved record against the log before
// recovery runs it, reading the task's entries from its submitted entry on
// through the chain (taskEntries; not from log_from, which an edit could
// move past them). undo: the
// approval is not in the log and the record says a transition was under
// way (log_from), which is what a crash after A1 leaves. A *tamper: the
// approval is not in the log and no crash leaves that, or the log already
// holds an outcome for the task (a finished record rolled back by hand,
// which must not reach the device again).
func (q *Queue) approvalOfRecord(r *Record) (*tamper, bool, error) {
	approved, outcome := false, audit.Entry{}
	err := q.taskEntries(r, func(e audit.Entry, _ int64) bool {
		switch e.Event {
		case audit.EventApproved:
			approved = true
		case audit.EventDenied, audit.EventExpired, eventTampered, audit.EventExecuted, audit.EventFailed:
			outcome = e
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return nil, false, err
	case outcome.Event != "":
		return &tamper{what: "record", detail: fmt.Sprintf("record.json says approved but the audit log already holds %q for this task (seq %d)",
			outcome.Event, outcome.Seq)}, false, nil
	case approved:
		return nil, false, nil
	case r.LogFrom != nil:
		return nil, true, nil
	}
	return &tamper{what: "record", detail: "record.json says approved but the audit log holds no approval for this task"}, false, nil
}

// undoApproval puts back to pending an approved record whose approval never
// reached the log (a crash after A1): nothing ran, the log and the record
// agree again, and the person decides again.
func (q *Queue) undoApproval(r *Record) error {
	q.o.Log.Warn("reconcile: an approval that never reached the audit log is undone; the task is pending again", "task_id", r.TaskID)
	r.State, r.DecidedAt, r.DecidedBy, r.DecidedVia, r.PreviewHash, r.LogFrom = Pending, nil, "", "", "", nil
	r.DecidedKey = ""
	return q.st.save(*r)
}

// tamperLocked ends a task whose stored request changed: state tampered, a
// signed EXECUTION_FAILED result naming both hashes, a "tampered" entry.
func (q *Queue) tamperLocked(r *Record, t *tamper) error {
	te := task.Errorf(task.ExecutionFailed, "%s", t.message())
	q.o.Log.Warn("task tampered", "task_id", r.TaskID, "what", t.what)
	return q.finish(r, "tamper", Tampered, te, audit.Entry{Actor: "vigil", Event: eventTampered,
		Details: audit.Details(map[string]any{"what": t.what, "recorded_hash": t.recorded, "found_hash": t.found,
			"detail": t.detail, "stage": string(r.State)})})
}

// executeLocked runs an approved task; the caller holds its lock. approved →
// executing → done/failed. The executing mark is durable before the device
// is touched, so a crash can never lead to a second run (see the package doc).
func (q *Queue) executeLocked(ctx context.Context, r *Record, m *task.Manifest) (Record, *task.Result, error) {
	id := r.TaskID
	r.State = Executing
	if err := q.saveFrom(r); err != nil {
		return *r, nil, err
	}
	crashpoint.Hit("execute.record")
	ap := &media.Approval{TaskID: id, PreviewHash: r.PreviewHash, PlanHash: r.PlanHash, DecidedBy: r.DecidedBy}
	if r.DecidedAt != nil {
		ap.DecidedAt = *r.DecidedAt
	}
	res, err := q.o.Executor.Execute(ctx, m, ap)
	if err != nil {
		// no result came back: store a signed failure so the agent gets an answer
		te := asTaskError(err)
		ferr := q.finish(r, "fail", Failed, te, audit.Entry{Actor: "vigil", Event: audit.EventFailed,
			Details: audit.Details(map[string]any{"stage": "execution", "message": te.Message})})
		res, _ := q.resultFor(r)
		return *r, res, errors.Join(err, ferr)
	}
	return *r, res, q.recordResult(r, res, false)
}

// recordResult moves a record to its final state from a stored result and
// audits it, once: reconciling, it first looks for an executed/failed entry
// written since the execution began.
func (q *Queue) recordResult(r *Record, res *task.Result, reconciled bool) error {
	event, state := audit.EventExecuted, Done
	var rerr *task.Error
	if res.Status != task.StatusSuccess {
		event, state = audit.EventFailed, Failed
		if res.Error != nil {
			rerr = &task.Error{Code: res.Error.Code, Message: preview.MaskString(res.Error.Message)}
		}
	}
	logged := false
	if reconciled {
		var err error
		if _, _, logged, err = q.findLogged(r.TaskID, q.scanFrom(r), audit.EventExecuted, audit.EventFailed); err != nil {
			return err
		}
	}
	if !logged {
		e := audit.Entry{Actor: "vigil", Event: event, TaskID: r.TaskID, Capability: r.CapabilityID, Target: r.Device,
			TokenJTI: r.TokenJTI, Success: res.Status == task.StatusSuccess,
			ContentHashBefore: res.ContentHashBefore, ContentHashAfter: res.ContentHashAfter,
			Details: audit.Details(map[string]any{"status": res.Status, "output": json.RawMessage(preview.MaskJSON(res.Output)),
				"reconciled": reconciled})}
		if res.Error != nil {
			e.ErrorCode = string(res.Error.Code)
			e.Details = audit.Details(map[string]any{"status": res.Status, "message": preview.MaskString(res.Error.Message),
				"reconciled": reconciled})
		}
		if _, err := q.o.Audit.Append(e); err != nil {
			return err
		}
		crashpoint.Hit("execute.audit")
	}
	now := q.o.Now().UTC()
	r.State, r.Error, r.FinishedAt, r.LogFrom = state, rerr, &now, nil
	if err := q.st.save(*r); err != nil {
		return err
	}
	crashpoint.Hit("execute.done")
	q.retireQuietly(*r)
	return nil
}

// scanFrom is where recovery starts looking for an entry of r's current
// transition: the submitted entry (a task has one entry per transition, so
// any found from there on is this one), or log_from when it comes earlier,
// else the log's start (a record written before log_from existed). log_from
// alone is not trusted to narrow the search: a log_from moved past the
// entry would have it written twice.
func (q *Queue) scanFrom(r *Record) int64 {
	switch {
	case r.SubmittedOffset != nil && (r.LogFrom == nil || *r.SubmittedOffset < *r.LogFrom):
		return *r.SubmittedOffset
	case r.LogFrom != nil:
		return *r.LogFrom
	}
	return 0
}

// Reconcile finishes what a crash interrupted (see the package doc) and
// expires overdue tasks, for the tasks the index lists as open (rebuilt
// from the records first when it is missing or damaged): finished tasks are
// not read. A task that another process holds is skipped; a task that
// cannot be settled does not stop the others; the errors are joined.
func (q *Queue) Reconcile(ctx context.Context) error {
	ids, err := q.openTaskIDs()
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if err := q.reconcileOne(ctx, id); err != nil {
			q.o.Log.Warn("reconcile failed", "task_id", id, "err", err)
			errs = append(errs, fmt.Errorf("task %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// reconcileOne repairs, expires or retires one task when that is due and
// its lock is free (a busy lock means another process is deciding or
// running it). Everything it does starts from the task's own record, read
// again under the lock: the index only said where to look.
func (q *Queue) reconcileOne(ctx context.Context, id string) error {
	r, err := q.st.load(id)
	switch {
	case errors.Is(err, ErrNotFound):
		return q.dropStaleMarker(id)
	case err != nil:
		return err
	case needsMarker(r) && !q.due(&r):
		return nil
	case !needsMarker(r) && !q.idx.marked(id):
		return nil
	}
	unlock := q.st.tryLock(id)
	if unlock == nil {
		return nil // another process is on it
	}
	defer unlock()
	if r, err = q.st.load(id); err != nil {
		return err
	}
	if !needsMarker(r) {
		return q.retire(r) // finished; its marker outlived it
	}
	if err := q.settleLocked(ctx, &r); err != nil {
		return err
	}
	// the deadline and the agent are record.json's only when they are what
	// the submitted entry holds: an edited one is tampering, never a later
	// expiry (`vigil serve` expires tasks through here)
	if t, e, err := q.shownTamper(&r); err != nil || (t != nil && r.State == Pending) {
		if err != nil {
			return err
		}
		restoreShown(&r, e)
		return q.tamperLocked(&r, t)
	}
	_, err = q.expireLocked(&r)
	return err
}

// dropStaleMarker removes the marker of a task that has no record: a
// submission that stopped between its marker and its record (not a task,
// like a manifest alone). A submission still running holds the task's lock,
// so the marker is removed only with the lock held and the record still
// absent.
func (q *Queue) dropStaleMarker(id string) error {
	if !q.idx.marked(id) {
		return nil
	}
	if err := os.MkdirAll(q.st.taskDir(id), 0o700); err != nil {
		return err
	}
	unlock := q.st.tryLock(id)
	if unlock == nil {
		return nil
	}
	defer unlock()
	if _, err := q.st.load(id); !errors.Is(err, ErrNotFound) {
		return nil
	}
	return q.idx.unmark(id)
}

// settleLocked completes whatever transition a crash interrupted, from the
// record and what is stored (see the crash table in the package doc); the
// caller holds the task's lock. It leaves a pending task pending, and any
// other task final.
func (q *Queue) settleLocked(ctx context.Context, r *Record) error {
	if r.State == Pending && r.LogFrom != nil {
		// after S2/S3 the submitted entry, if written, lies after log_from;
		// one before it means the record was edited to have it logged again
		// (with whatever hashes the record now holds)
		if e, off, ok, err := q.findLogged(r.TaskID, 0, audit.EventSubmitted); err != nil {
			return err
		} else if ok && off < *r.LogFrom {
			return q.tamperLocked(r, &tamper{what: "record", detail: fmt.Sprintf(
				"record.json says its submission is not logged yet, but the audit log holds it (seq %d) before the place the record names", e.Seq)})
		}
		return q.logSubmitted(r, true)
	}
	if r.State.Final() {
		if r.LogFrom != nil {
			return q.completeFinish(r, "recover", nil)
		}
		return nil
	}
	res, err := q.resultFor(r)
	why := ""
	switch {
	case err == nil:
		verr := task.Verify(res, q.o.Signer.Public())
		if verr == nil {
			return q.adoptResult(r, res)
		}
		why = fmt.Sprintf("is not signed by the operator key (%v)", verr)
	case errors.Is(err, task.ErrNotThisTask):
		why = fmt.Sprintf("is not this task's answer (%v)", err)
	case !errors.Is(err, task.ErrNotFound):
		return err
	}
	if why != "" {
		// not this Vigil's answer to this request: never the outcome of
		// record, never logged as one; moved aside so the task's own answer
		// is stored
		aside, err := q.o.Results.MoveAside(r.TaskID)
		if err != nil {
			return err
		}
		q.o.Log.Warn("reconcile: a stored result is not this task's signed answer; moved aside", "task_id", r.TaskID, "to", aside, "why", why)
		if r.State != Executing {
			return q.tamperLocked(r, &tamper{what: "result", detail: fmt.Sprintf("results/%s.json %s; moved aside to %s", r.TaskID, why, aside)})
		}
		// executing: the device may have acted; finished below as interrupted
	}
	switch r.State {
	case Approved:
		// The log is the authority: run only an approval the log holds, for
		// a task the log has no outcome for yet. The record moves first, so
		// an approval missing from the log never happened (after A1: undo
		// it); any other gap means the record was edited.
		if t, undo, err := q.approvalOfRecord(r); err != nil || undo || t != nil {
			switch {
			case err != nil:
				return err
			case undo:
				return q.undoApproval(r)
			}
			return q.tamperLocked(r, t)
		}
		c, t, err := q.checkStored(r)
		if err != nil {
			return err
		}
		if t != nil {
			return q.tamperLocked(r, t)
		}
		q.o.Log.Info("reconcile: running a task approved before a crash", "task_id", r.TaskID)
		_, _, err = q.executeLocked(ctx, r, c.m)
		return err
	case Executing:
		// no result: the device may or may not have acted; never run it again
		te := task.Errorf(task.ExecutionFailed, "interrupted during execution; not re-run, the device may or may not have applied it")
		return q.finish(r, "fail", Failed, te, audit.Entry{Actor: "vigil", Event: audit.EventFailed,
			Details: audit.Details(map[string]any{"stage": "reconcile", "message": te.Message})})
	}
	return nil
}

// adoptResult brings a non-final record in line with a result already
// stored for it: an execution whose result was stored before a crash, or a
// record from a version that stored results first. The result is the
// outcome of record; its audit entry is written only if none is found.
func (q *Queue) adoptResult(r *Record, res *task.Result) error {
	var s State
	if res.Error != nil {
		switch res.Error.Code {
		case task.ApprovalDenied:
			s = Denied
		case task.ApprovalTimeout:
			s = Expired
		}
	}
	if s == "" || r.State == Executing {
		return q.recordResult(r, res, true)
	}
	ev := eventOf(s)
	_, _, logged, err := q.findLogged(r.TaskID, q.scanFrom(r), ev)
	if err != nil {
		return err
	}
	now := q.o.Now().UTC()
	r.State, r.Error, r.FinishedAt = s, res.Error, &now
	if !logged {
		actor := "vigil"
		if s == Denied {
			actor = orUnknown(r.DecidedBy)
		}
		if _, err := q.o.Audit.Append(audit.Entry{Actor: actor, Event: ev, TaskID: r.TaskID, Capability: r.CapabilityID,
			Target: r.Device, TokenJTI: r.TokenJTI, ErrorCode: string(res.Error.Code),
			Details: audit.Details(map[string]any{"reason": r.Reason, "reconciled": true})}); err != nil {
			return err
		}
	}
	r.LogFrom = nil
	if err := q.st.save(*r); err != nil {
		return err
	}
	q.retireQuietly(*r)
	return nil
}
