// Package media is seed 004's Media Executor: play, pause, stop and seek on
// allowlisted devices (sim, mpv, Home Assistant), leased, approved, once.
package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
)

// DefaultActionTimeout bounds one action, retries included.
const DefaultActionTimeout = 10 * time.Second

// RetryPolicy is seed 003's: up to MaxRetries more attempts after a
// transient failure, waiting Initial, then doubling up to Max.
type RetryPolicy struct {
	MaxRetries int
	Initial    time.Duration
	Max        time.Duration
}

// DefaultRetry is 3 retries, 1 s doubling to at most 10 s.
var DefaultRetry = RetryPolicy{MaxRetries: 3, Initial: time.Second, Max: 10 * time.Second}

// Options configure an Executor.
type Options struct {
	Devices       []config.DeviceConfig // the allowlist (seed 004 §5)
	ActionTimeout time.Duration         // per action, retries included; default 10 s
	Retry         *RetryPolicy          // default DefaultRetry
	Leases        *lease.Verifier       // required
	Store         *task.Store           // required: results and idempotency
	Signer        *task.Signer          // required: the operator's result key
	Now           func() time.Time      // clock for executed_at
	// Sleep waits between retries; it must return early with ctx's error.
	Sleep      func(ctx context.Context, d time.Duration) error
	SimDir     string              // where sim devices keep state (devices/)
	HTTPClient *http.Client        // for hass; nil means a default client
	Getenv     func(string) string // for token_env; nil means os.Getenv
	// Drivers replaces the driver built for a device id (embedding, tests).
	Drivers map[string]Driver
}

// Executor runs media tasks. It is safe for concurrent use.
type Executor struct {
	opts    Options
	drivers map[string]Driver
	ids     []string
}

// New validates the device list and builds one driver per device.
func New(opts Options) (*Executor, error) {
	if opts.Leases == nil || opts.Store == nil || opts.Signer == nil {
		return nil, errors.New("media: Leases, Store and Signer are required")
	}
	if opts.ActionTimeout <= 0 {
		opts.ActionTimeout = DefaultActionTimeout
	}
	if opts.Retry == nil {
		r := DefaultRetry
		opts.Retry = &r
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	e := &Executor{opts: opts, drivers: map[string]Driver{}}
	for i, d := range opts.Devices {
		if d.ID == "" || len(d.ID) > maxDeviceLen {
			return nil, fmt.Errorf("devices[%d].id: must be 1-%d characters", i, maxDeviceLen)
		}
		if _, dup := e.drivers[d.ID]; dup {
			return nil, fmt.Errorf("devices[%d].id: %q is listed twice", i, d.ID)
		}
		drv, err := e.build(d)
		if err != nil {
			return nil, err
		}
		e.drivers[d.ID] = drv
		e.ids = append(e.ids, d.ID)
	}
	return e, nil
}

func (e *Executor) build(d config.DeviceConfig) (Driver, error) {
	if drv, ok := e.opts.Drivers[d.ID]; ok {
		return drv, nil
	}
	switch d.Driver {
	case "sim", "":
		return NewSim(d.ID, e.opts.SimDir)
	case "mpv":
		return NewMPV(d.ID, d.Socket)
	case "hass":
		return NewHass(d.ID, d.BaseURL, d.EntityID, d.TokenEnv, d.TokenFile, e.opts.Getenv, e.opts.HTTPClient)
	}
	return nil, fmt.Errorf("devices[%s].driver: must be sim, mpv or hass, got %q", d.ID, d.Driver)
}

// Driver returns the driver of an allowlisted device.
func (e *Executor) Driver(id string) (Driver, bool) {
	d, ok := e.drivers[id]
	return d, ok
}

// Prepared is a manifest that passed every check, with the exact request
// its execution will send.
type Prepared struct {
	Claims      *lease.Claims
	Action      Action
	Plan        Plan
	PlanHash    string
	RequestHash string
}

// Prepare runs seed 000 §2's pre-execution checks in order (lease
// signature, task_id, expiry, capability), then seed 004's input rules, and
// plans the request. It touches no device. Failures are *task.Error.
func (e *Executor) Prepare(m *task.Manifest) (*Prepared, error) {
	claims, err := e.opts.Leases.Check(m.Lease, lease.Request{
		TaskID: m.TaskID, CapabilityID: m.CapabilityID, Device: targetDevice(m.Inputs)})
	if err != nil {
		return nil, err
	}
	a, err := ParseInputs(m.CapabilityID, m.Inputs, e.ids)
	if err != nil {
		return nil, err
	}
	drv := e.drivers[a.Device]
	plan, err := drv.Plan(a)
	if err != nil {
		return nil, task.Errorf(task.ExecutionFailed, "planning %s on %s failed: %v", a.Capability, a.Device, err)
	}
	rh, err := m.RequestHash()
	if err != nil {
		return nil, err
	}
	return &Prepared{Claims: claims, Action: a, Plan: plan, PlanHash: plan.Hash(), RequestHash: rh}, nil
}

// Approval is the recorded decision that lets a mutating task run. The
// approvals queue creates it when a person approves; Execute will not run
// without one for the same task.
type Approval struct {
	TaskID      string
	PreviewHash string // hash of the masked preview the person saw
	// PlanHash, when set, is Plan.Hash() of the plan the preview was built
	// from; Execute then refuses to send any other request.
	PlanHash  string
	DecidedBy string // e.g. operator:alice
	DecidedAt time.Time
}

// ErrNotApproved is returned when Execute gets no usable approval; nothing
// runs and nothing is stored, so the task stays pending.
var ErrNotApproved = errors.New("media: no recorded approval for this task")

func checkApproval(m *task.Manifest, ap *Approval) error {
	switch {
	case ap == nil:
		return fmt.Errorf("%w: approval is missing", ErrNotApproved)
	case ap.TaskID != m.TaskID:
		return fmt.Errorf("%w: the approval is for task %q, not %q", ErrNotApproved, ap.TaskID, m.TaskID)
	case ap.PreviewHash == "":
		return fmt.Errorf("%w: the approval records no preview hash", ErrNotApproved)
	case ap.DecidedBy == "":
		return fmt.Errorf("%w: the approval records no decider", ErrNotApproved)
	case ap.DecidedAt.IsZero():
		return fmt.Errorf("%w: the approval records no decision time", ErrNotApproved)
	}
	return nil
}

// Execute runs an approved media task at most once. A repeat of the task_id
// returns the stored result without touching the device; the same task_id
// with other inputs is refused (EXECUTION_FAILED error, nothing stored).
// Every outcome of the task itself — success or one of the seed's failure
// codes — comes back as a signed, stored *task.Result; the error is for
// what prevents a result: no approval, a refused task_id, I/O.
func (e *Executor) Execute(ctx context.Context, m *task.Manifest, ap *Approval) (*task.Result, error) {
	if m == nil {
		return nil, errors.New("media: manifest is missing")
	}
	if err := checkApproval(m, ap); err != nil {
		return nil, err
	}
	rh, err := m.RequestHash()
	if err != nil {
		return nil, err
	}
	res, _, err := e.opts.Store.Do(m.TaskID, rh, func() (*task.Result, error) {
		return e.run(ctx, m, ap, rh)
	})
	return res, err
}

// Stored returns a task's stored result, if any (a task_id's repeat).
func (e *Executor) Stored(taskID string) (*task.Result, error) { return e.opts.Store.Load(taskID) }

type output struct {
	TaskID       string `json:"task_id"`
	CapabilityID string `json:"capability_id"`
	Device       string `json:"device"`
	Status       string `json:"status"`
}

func (e *Executor) run(ctx context.Context, m *task.Manifest, ap *Approval, rh string) (*task.Result, error) {
	r := &task.Result{TaskID: m.TaskID, CapabilityID: m.CapabilityID, RequestHash: rh, Output: json.RawMessage("{}")}
	fail := func(err error) (*task.Result, error) {
		var te *task.Error
		if !errors.As(err, &te) {
			te = task.Errorf(task.ExecutionFailed, "%v", err)
		}
		// drivers quote what they were given (a media URI with userinfo, say): mask before signing
		r.Status, r.Error = task.StatusFailure, &task.Error{Code: te.Code, Message: preview.MaskString(te.Message)}
		r.ExecutedAt = task.FormatTime(e.opts.Now())
		if err := e.opts.Signer.Sign(r); err != nil {
			return nil, err
		}
		return r, nil
	}

	p, err := e.Prepare(m)
	if err != nil {
		return fail(err)
	}
	if ap.PlanHash != "" && ap.PlanHash != p.PlanHash {
		return fail(task.Errorf(task.ExecutionFailed,
			"request changed after approval (plan hash %s, approved %s)", p.PlanHash, ap.PlanHash))
	}
	drv := e.drivers[p.Action.Device]

	actx, cancel := context.WithTimeout(ctx, e.opts.ActionTimeout)
	defer cancel()
	var before, after []byte
	step := func(what string, fn func(context.Context) error) error {
		err := e.retry(actx, fn)
		if err == nil {
			return nil
		}
		if errors.Is(err, context.DeadlineExceeded) || actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return task.Errorf(task.ResourceExhausted, "%s on %s did not finish within %s (while %s)",
				p.Action.Capability, p.Action.Device, e.opts.ActionTimeout, what)
		}
		if ctx.Err() != nil {
			return task.Errorf(task.ExecutionFailed, "%s on %s was cancelled (while %s)", p.Action.Capability, p.Action.Device, what)
		}
		return task.Errorf(task.ExecutionFailed, "%s %s: %v", what, p.Action.Device, err)
	}
	if err := step("reading the state of", func(c context.Context) (err error) {
		before, err = drv.State(c)
		return err
	}); err != nil {
		return fail(err)
	}
	r.ContentHashBefore = StateHash(before)
	if err := step("sending the command to", func(c context.Context) error { return drv.Do(c, p.Plan) }); err != nil {
		return fail(err)
	}
	if err := step("reading the new state of", func(c context.Context) (err error) {
		after, err = drv.State(c)
		return err
	}); err != nil {
		return fail(err)
	}
	r.ContentHashAfter = StateHash(after)

	out, err := json.Marshal(output{TaskID: m.TaskID, CapabilityID: m.CapabilityID, Device: p.Action.Device, Status: "applied"})
	if err != nil {
		return nil, err
	}
	r.Status, r.Output, r.ExecutedAt = task.StatusSuccess, out, task.FormatTime(e.opts.Now())
	if err := e.opts.Signer.Sign(r); err != nil {
		return nil, err
	}
	return r, nil
}

// retry runs fn, retrying transient failures per the policy.
func (e *Executor) retry(ctx context.Context, fn func(context.Context) error) error {
	delay := e.opts.Retry.Initial
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil || !IsTransient(err) || attempt >= e.opts.Retry.MaxRetries {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if serr := e.opts.Sleep(ctx, delay); serr != nil {
			return serr
		}
		delay *= 2
		if delay > e.opts.Retry.Max {
			delay = e.opts.Retry.Max
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
