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
	unlock, err := q.st.lock(id)
	if err != nil {
		return Record{}, nil, err
	}
	r, err := q.st.load(id)
	if err != nil {
		unlock()
		return Record{}, nil, err
	}
	if expired, err := q.expireLocked(&r); err != nil || expired {
		unlock()
		if err != nil {
			return r, nil, err
		}
		res, _ := q.o.Results.Load(id)
		return r, res, &DecidedError{TaskID: id, State: Expired}
	}
	if r.State != Pending {
		unlock()
		res, _ := q.o.Results.Load(id)
		return r, res, &DecidedError{TaskID: id, State: r.State, By: r.DecidedBy}
	}
	now := q.o.Now().UTC()
	if !d.Approve {
		reason := preview.MaskString(d.Reason)
		r.DecidedAt, r.DecidedBy, r.Reason = &now, d.By, reason
		te := task.Errorf(task.ApprovalDenied, "denied by %s: %s", d.By, reason)
		err := q.finishWithoutRunning(&r, Denied, te)
		if err == nil {
			_, err = q.o.Audit.Append(audit.Entry{Actor: d.By, Event: audit.EventDenied, TaskID: id, Capability: r.CapabilityID,
				Target: r.Device, TokenJTI: r.TokenJTI, ErrorCode: string(te.Code),
				Details: audit.Details(map[string]any{"reason": reason})})
		}
		unlock()
		res, _ := q.o.Results.Load(id)
		return r, res, err
	}
	m, err := q.st.loadManifest(id)
	if err != nil {
		unlock()
		return r, nil, err
	}
	// A lease that lapsed while the task waited fails here, at decision time.
	if _, err := q.o.Executor.Prepare(m); err != nil {
		te := asTaskError(err)
		r.DecidedAt, r.DecidedBy = &now, d.By
		ferr := q.finishWithoutRunning(&r, Failed, te)
		if ferr == nil {
			_, ferr = q.o.Audit.Append(audit.Entry{Actor: d.By, Event: audit.EventFailed, TaskID: id, Capability: r.CapabilityID,
				Target: r.Device, TokenJTI: r.TokenJTI, ErrorCode: string(te.Code),
				Details: audit.Details(map[string]any{"stage": "approval", "message": te.Message})})
		}
		unlock()
		res, _ := q.o.Results.Load(id)
		return r, res, ferr
	}
	p, _, err := q.plan(m)
	if err != nil {
		unlock()
		return r, nil, err
	}
	bh := BindingHash(p)
	if d.PreviewHash != "" && d.PreviewHash != bh {
		unlock()
		return r, nil, ErrPreviewChanged
	}
	r.State, r.DecidedAt, r.DecidedBy, r.PreviewHash, r.PlanHash = Approved, &now, d.By, bh, p.Hash()
	if err := q.st.save(r); err != nil {
		unlock()
		return r, nil, err
	}
	if _, err := q.o.Audit.Append(audit.Entry{Actor: d.By, Event: audit.EventApproved, TaskID: id, Capability: r.CapabilityID,
		Target: r.Device, TokenJTI: r.TokenJTI, Success: true,
		Details: audit.Details(map[string]any{"preview_hash": bh, "plan_hash": r.PlanHash})}); err != nil {
		unlock()
		return r, nil, err
	}
	unlock()
	return q.execute(ctx, id)
}

// execute runs an approved task under its lock: approved → executing →
// done/failed. The executing mark is durable before the device is touched, so
// a crash can never lead to a second run (see Reconcile).
func (q *Queue) execute(ctx context.Context, id string) (Record, *task.Result, error) {
	unlock, err := q.st.lock(id)
	if err != nil {
		return Record{}, nil, err
	}
	defer unlock()
	r, err := q.st.load(id)
	if err != nil {
		return r, nil, err
	}
	if r.State != Approved {
		res, _ := q.o.Results.Load(id)
		return r, res, nil
	}
	m, err := q.st.loadManifest(id)
	if err != nil {
		return r, nil, err
	}
	r.State = Executing
	if err := q.st.save(r); err != nil {
		return r, nil, err
	}
	ap := &media.Approval{TaskID: id, PreviewHash: r.PreviewHash, PlanHash: r.PlanHash, DecidedBy: r.DecidedBy}
	if r.DecidedAt != nil {
		ap.DecidedAt = *r.DecidedAt
	}
	res, err := q.o.Executor.Execute(ctx, m, ap)
	if err != nil {
		te := asTaskError(err)
		r.State, r.Error = Failed, te
		if serr := q.st.save(r); serr != nil {
			return r, nil, serr
		}
		_, aerr := q.o.Audit.Append(audit.Entry{Actor: "vigil", Event: audit.EventFailed, TaskID: id, Capability: r.CapabilityID,
			Target: r.Device, TokenJTI: r.TokenJTI, ErrorCode: string(te.Code),
			Details: audit.Details(map[string]any{"stage": "execution", "message": te.Message})})
		return r, nil, errors.Join(err, aerr)
	}
	return r, res, q.recordResult(&r, res, false)
}

// recordResult moves a record to its final state from a stored result and audits it.
func (q *Queue) recordResult(r *Record, res *task.Result, reconciled bool) error {
	event := audit.EventExecuted
	r.State, r.Error = Done, nil
	if res.Status != task.StatusSuccess {
		event, r.State, r.Error = audit.EventFailed, Failed, res.Error
	}
	if err := q.st.save(*r); err != nil {
		return err
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
	_, err := q.o.Audit.Append(e)
	return err
}

// Reconcile finishes what a crash interrupted (see the package doc) and
// expires overdue tasks.
func (q *Queue) Reconcile(ctx context.Context) error {
	ids, err := q.st.ids()
	if err != nil {
		return err
	}
	for _, id := range ids {
		r, err := q.st.load(id)
		if err != nil {
			return err
		}
		switch r.State {
		case Pending:
			if err := q.expireIfDue(id); err != nil {
				return err
			}
		case Approved:
			if _, _, err := q.execute(ctx, id); err != nil {
				q.o.Log.Warn("reconcile: execution failed", "task_id", id, "err", err)
			}
		case Executing:
			if err := q.reconcileExecuting(id); err != nil {
				return err
			}
		}
	}
	return nil
}

func (q *Queue) reconcileExecuting(id string) error {
	unlock, err := q.st.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	r, err := q.st.load(id)
	if err != nil || r.State != Executing {
		return err
	}
	if res, err := q.o.Results.Load(id); err == nil {
		return q.recordResult(&r, res, true)
	}
	te := task.Errorf(task.ExecutionFailed, "interrupted during execution; not re-run, the device may or may not have applied it")
	if err := q.finishWithoutRunning(&r, Failed, te); err != nil {
		return err
	}
	_, err = q.o.Audit.Append(audit.Entry{Actor: "vigil", Event: audit.EventFailed, TaskID: id, Capability: r.CapabilityID,
		Target: r.Device, TokenJTI: r.TokenJTI, ErrorCode: string(te.Code),
		Details: audit.Details(map[string]any{"stage": "reconcile", "message": te.Message})})
	return err
}
