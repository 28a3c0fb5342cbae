package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
)

// Engine is the approval side of Vigil wired from the config: one per
// process, shared by the commands and the screens.
type Engine struct {
	Audit   *audit.Log
	Leases  *lease.Verifier
	Results *task.Store
	Signer  *task.Signer
	Media   *media.Executor
	Queue   *approval.Queue
	// Rules are what the queue asks at each submission: config.toml's
	// rules and those added at run time (Rules.Store() adds and revokes).
	Rules *rules.Live
}

// OpenAudit opens the home's audit log.
func (a *App) OpenAudit() (*audit.Log, error) {
	if err := a.EnsureState(); err != nil {
		return nil, err
	}
	l, err := audit.Open(a.Paths.Audit, a.Now)
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	return l, nil
}

// Engine builds (once) the lease verifier, results store, signer, media
// executor and approval queue. Opening the queue reconciles interrupted tasks.
func (a *App) Engine(ctx context.Context) (*Engine, error) {
	if a.engine != nil {
		return a.engine, nil
	}
	log, err := a.OpenAudit()
	if err != nil {
		return nil, err
	}
	leases, err := lease.FromConfig(a.Cfg.Leases, a.Now)
	if err != nil {
		return nil, Fail(ExitBadInput, fmt.Errorf("%s: %w", a.Paths.Config, err))
	}
	results, err := task.OpenStore(a.Paths.Results)
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	signer, err := task.LoadSigner(filepath.Join(a.Paths.Keys, lease.OperatorKeyFile))
	if err != nil {
		return nil, Failf(ExitExecution, "operator key: %v (run `vigil keys init` first)", err)
	}
	ex, err := media.New(media.Options{
		Devices: a.Cfg.Devices, ActionTimeout: a.Cfg.Media.ActionTimeout.Duration,
		Leases: leases, Store: results, Signer: signer, Now: a.Now, SimDir: a.Paths.Devices, Getenv: a.Getenv,
	})
	if err != nil {
		return nil, Fail(ExitBadInput, fmt.Errorf("%s: %w", a.Paths.Config, err))
	}
	eng := &Engine{Audit: log, Leases: leases, Results: results, Signer: signer, Media: ex}
	if eng.Queue, err = a.openQueue(ctx, eng, a.Now); err != nil {
		return nil, err
	}
	a.engine = eng
	return eng, nil
}

// openQueue opens the approval queue over the engine's parts with a clock.
func (a *App) openQueue(ctx context.Context, eng *Engine, now func() time.Time) (*approval.Queue, error) {
	rs, err := a.liveRules(eng)
	if err != nil {
		return nil, err
	}
	eng.Rules = rs
	q, err := approval.Open(ctx, approval.Options{
		Dir: filepath.Join(a.Paths.State, "tasks"), Inbox: a.Paths.Inbox, Executor: eng.Media, Devices: a.Cfg.Devices,
		Leases: eng.Leases, Results: eng.Results, Signer: eng.Signer, Audit: eng.Audit, Scopes: a.Cfg.Scopes,
		Timeout: a.Cfg.Approvals.Timeout.Duration, Now: now, Log: a.Log,
		RequireOperatorKey: a.Cfg.Decisions.RequireOperatorKey, Rules: rs,
	})
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	return q, nil
}
