package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
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

// Preview builds the masked preview of a task's request.
func (q *Queue) Preview(ctx context.Context, id string) (View, error) {
	r, err := q.Get(id)
	if err != nil {
		return View{}, err
	}
	m, err := q.st.loadManifest(id)
	if err != nil {
		return View{}, err
	}
	p, drv, err := q.plan(m)
	if err != nil {
		return View{}, err
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
	return v, nil
}

// DescribeState turns a driver's State bytes into a phrase for a person
// ("paused at 12:31 of a.mp3"). Unknown shapes give "".
func DescribeState(b []byte) string {
	var s struct {
		State    string   `json:"state"`
		MediaURI string   `json:"media_uri"`
		Position *float64 `json:"position_seconds"`
		Idle     *bool    `json:"idle"`
		Path     *string  `json:"path"`
		Pause    *bool    `json:"pause"`
		TimePos  *float64 `json:"time_pos"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	if s.Idle != nil { // mpv
		switch {
		case *s.Idle || s.Path == nil:
			return "idle"
		case s.Pause != nil && *s.Pause:
			s.State = "paused"
		default:
			s.State = "playing"
		}
		s.MediaURI, s.Position = *s.Path, s.TimePos
	}
	switch s.State {
	case "", "idle":
		return "idle"
	}
	name := path.Base(preview.MaskString(s.MediaURI))
	pos := 0.0
	if s.Position != nil {
		pos = *s.Position
	}
	return fmt.Sprintf("%s at %s of %s", s.State, mmss(pos), name)
}

func mmss(sec float64) string {
	t := int(math.Floor(sec))
	if t >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
	}
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}

// Decision is a person's answer. PreviewHash, when set, is the BindingHash of
// the preview they saw; the approval is refused if it no longer matches.
type Decision struct {
	Approve     bool
	By          string // operator:<user>
	Reason      string // for a denial
	PreviewHash string
	Via         string // the surface: "tui", "cli"
}

// ErrPreviewChanged means the request to send is no longer the one shown.
var ErrPreviewChanged = errors.New("the request changed since the preview was shown; review it again")

// Decide records the first decision on a pending task; later ones get a
// *DecidedError. An approval then executes the task (at most once) and
// returns its signed result.
func (q *Queue) Decide(ctx context.Context, id string, d Decision) (Record, *task.Result, error) {
	if err := task.ValidateTaskID(id); err != nil {
		return Record{}, nil, err
	}
	if _, err := q.st.load(id); err != nil {
		return Record{}, nil, err // no lock folder is made for a task that does not exist
	}
	// One critical section from the decision to the end of the execution: no
	// other process can decide, reconcile or run this task in between.
	unlock, err := q.st.lock(id)
	if err != nil {
		return Record{}, nil, err
	}
	defer unlock()
	r, err := q.st.load(id)
	if err != nil {
		return Record{}, nil, err
	}
	if settled, err := q.settleLocked(&r); err != nil || settled {
		res, _ := q.o.Results.Load(id)
		if err != nil {
			return r, res, err
		}
		return r, res, &DecidedError{TaskID: id, State: r.State, By: r.DecidedBy}
	}
	if expired, err := q.expireLocked(&r); err != nil || expired {
		if err != nil {
			return r, nil, err
		}
		res, _ := q.o.Results.Load(id)
		return r, res, &DecidedError{TaskID: id, State: Expired}
	}
	if r.State != Pending {
		res, _ := q.o.Results.Load(id)
		return r, res, &DecidedError{TaskID: id, State: r.State, By: r.DecidedBy}
	}
	now := q.o.Now().UTC()
	if !d.Approve {
		reason := preview.MaskString(d.Reason)
		r.DecidedAt, r.DecidedBy, r.Reason = &now, d.By, reason
		te := task.Errorf(task.ApprovalDenied, "denied by %s: %s", d.By, reason)
		err := q.finishWithoutRunning(&r, Denied, te, audit.Entry{Actor: d.By, Event: audit.EventDenied,
			Details: audit.Details(map[string]any{"reason": reason})})
		res, _ := q.o.Results.Load(id)
		return r, res, err
	}
	m, err := q.st.loadManifest(id)
	if err != nil {
		return r, nil, err
	}
	// A lease that lapsed while the task waited fails here, at decision time.
	if _, err := q.o.Executor.Prepare(m); err != nil {
		te := asTaskError(err)
		r.DecidedAt, r.DecidedBy = &now, d.By
		ferr := q.finishWithoutRunning(&r, Failed, te, audit.Entry{Actor: d.By, Event: audit.EventFailed,
			Details: audit.Details(map[string]any{"stage": "approval", "message": te.Message})})
		res, _ := q.o.Results.Load(id)
		return r, res, ferr
	}
	p, _, err := q.plan(m)
	if err != nil {
		return r, nil, err
	}
	bh := BindingHash(p)
	if d.PreviewHash != "" && d.PreviewHash != bh {
		return r, nil, ErrPreviewChanged
	}
	r.State, r.DecidedAt, r.DecidedBy, r.PreviewHash, r.PlanHash = Approved, &now, d.By, bh, p.Hash()
	// Write-ahead: the approval is in the audit log before the record says
	// approved, so a task that runs (now or after a crash) always has one.
	if _, err := q.o.Audit.Append(audit.Entry{Actor: d.By, Event: audit.EventApproved, TaskID: id, Capability: r.CapabilityID,
		Target: r.Device, TokenJTI: r.TokenJTI, Success: true,
		Details: audit.Details(map[string]any{"preview_hash": bh, "plan_hash": r.PlanHash})}); err != nil {
		return r, nil, fmt.Errorf("approval not recorded, nothing ran: %w", err)
	}
	if err := q.st.save(r); err != nil {
		return r, nil, err
	}
	return q.executeLocked(ctx, &r, m)
}

// executeLocked runs an approved task; the caller holds its lock. approved →
// executing → done/failed. The executing mark is durable before the device
// is touched, so a crash can never lead to a second run (see Reconcile).
func (q *Queue) executeLocked(ctx context.Context, r *Record, m *task.Manifest) (Record, *task.Result, error) {
	id := r.TaskID
	r.State = Executing
	if err := q.st.save(*r); err != nil {
		return *r, nil, err
	}
	ap := &media.Approval{TaskID: id, PreviewHash: r.PreviewHash, PlanHash: r.PlanHash, DecidedBy: r.DecidedBy}
	if r.DecidedAt != nil {
		ap.DecidedAt = *r.DecidedAt
	}
	res, err := q.o.Executor.Execute(ctx, m, ap)
	if err != nil {
		// no result came back: store a signed failure so the agent gets an answer
		te := asTaskError(err)
		ferr := q.finishWithoutRunning(r, Failed, te, audit.Entry{Actor: "vigil", Event: audit.EventFailed,
			Details: audit.Details(map[string]any{"stage": "execution", "message": te.Message})})
		res, _ := q.o.Results.Load(id)
		return *r, res, errors.Join(err, ferr)
	}
	return *r, res, q.recordResult(r, res, false)
}

// recordResult moves a record to its final state from a stored result and audits it.
func (q *Queue) recordResult(r *Record, res *task.Result, reconciled bool) error {
	event, state := audit.EventExecuted, Done
	var rerr *task.Error
	if res.Status != task.StatusSuccess {
		event, state = audit.EventFailed, Failed
		if res.Error != nil {
			rerr = &task.Error{Code: res.Error.Code, Message: preview.MaskString(res.Error.Message)}
		}
	}
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
	// audited before the record moves on: a crash in between leaves the task
	// executing with a stored result, which settleLocked finishes
	if _, err := q.o.Audit.Append(e); err != nil {
		return err
	}
	r.State, r.Error = state, rerr
	return q.st.save(*r)
}

// Reconcile finishes what a crash interrupted (see the package doc) and
// expires overdue tasks. A task that cannot be settled does not stop the
// others; the errors are joined.
func (q *Queue) Reconcile(ctx context.Context) error {
	ids, err := q.st.ids()
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

func (q *Queue) reconcileOne(ctx context.Context, id string) error {
	r, err := q.st.load(id)
	if err != nil || r.State.Final() {
		return err
	}
	unlock, err := q.st.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	if r, err = q.st.load(id); err != nil {
		return err
	}
	if settled, err := q.settleLocked(&r); err != nil || settled {
		return err
	}
	switch r.State {
	case Pending:
		_, err = q.expireLocked(&r)
	case Approved:
		// its approval is in the audit log (written ahead): it runs now
		q.o.Log.Info("reconcile: running a task approved before a crash", "task_id", id)
		m, merr := q.st.loadManifest(id)
		if merr != nil {
			return merr
		}
		_, _, err = q.executeLocked(ctx, &r, m)
	case Executing:
		te := task.Errorf(task.ExecutionFailed, "interrupted during execution; not re-run, the device may or may not have applied it")
		err = q.finishWithoutRunning(&r, Failed, te, audit.Entry{Actor: "vigil", Event: audit.EventFailed,
			Details: audit.Details(map[string]any{"stage": "reconcile", "message": te.Message})})
	}
	return err
}

// settleLocked brings a non-final record in line with a result already
// stored for it (a crash after the result and before the record): the
// result is the decision of record. It reports whether it settled anything.
func (q *Queue) settleLocked(r *Record) (bool, error) {
	if r.State.Final() {
		return false, nil
	}
	res, err := q.o.Results.Load(r.TaskID)
	if errors.Is(err, task.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if res.Error != nil {
		switch res.Error.Code {
		case task.ApprovalDenied:
			r.State, r.Error = Denied, res.Error
			if err := q.st.save(*r); err != nil {
				return false, err
			}
			_, err := q.o.Audit.Append(audit.Entry{Actor: orUnknown(r.DecidedBy), Event: audit.EventDenied, TaskID: r.TaskID,
				Capability: r.CapabilityID, Target: r.Device, TokenJTI: r.TokenJTI, ErrorCode: string(res.Error.Code),
				Details: audit.Details(map[string]any{"reason": r.Reason, "reconciled": true})})
			return true, err
		case task.ApprovalTimeout:
			r.State, r.Error = Expired, res.Error
			if err := q.st.save(*r); err != nil {
				return false, err
			}
			_, err := q.o.Audit.Append(audit.Entry{Actor: "vigil", Event: audit.EventExpired, TaskID: r.TaskID,
				Capability: r.CapabilityID, Target: r.Device, TokenJTI: r.TokenJTI, ErrorCode: string(res.Error.Code),
				Details: audit.Details(map[string]any{"reconciled": true})})
			return true, err
		}
	}
	return true, q.recordResult(r, res, true)
}
