package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
)

// tuiRules is the Approvals pane's RuleSource over this home's engine:
// the rule "like this task" from the task's stored manifest (the facts
// the queue decides on), the rules in force from the engine's rules.Live,
// and adding and revoking through its store (audited). Every screen of a
// vigil serve process shares one; who acts is the pane's (its operator,
// surface and key), and with [decisions] require_operator_key only an
// operator signed in over SSH with their key may add or revoke.
type tuiRules struct {
	app  *App
	eng  *Engine
	live *rules.Live
	// warnings are what loading config.toml's rules found, read once.
	warnings []string
}

// newTUIRules is the pane's rule source over eng, nil when the engine
// has no rules.
func newTUIRules(app *App, eng *Engine) approvalspane.RuleSource {
	if eng == nil || eng.Rules == nil {
		return nil
	}
	r := &tuiRules{app: app, eng: eng, live: eng.Rules}
	if set := eng.Rules.Config(); set != nil {
		r.warnings = append([]string(nil), set.Warnings...)
	}
	return r
}

// likeReason is what a rule made from the approve prompt says it is for.
func likeReason(taskID string) string { return "allow like task " + taskID + " (approve prompt)" }

// Like reads the task's stored manifest as the queue read it at
// submission and makes the rule like it (rules.LikeTask); warnings are
// the pane's, added to the media URI's own.
func (r *tuiRules) Like(_ context.Context, v approval.View, warnings []string, lifetime time.Duration, by rules.Actor) (rules.AddRequest, error) {
	id := v.Record.TaskID
	if err := task.ValidateTaskID(id); err != nil {
		return rules.AddRequest{}, err
	}
	raw, err := task.ReadStored(filepath.Join(r.eng.Queue.TasksDir(), id, "manifest.json"), 8*task.MaxManifestBytes)
	if err != nil {
		return rules.AddRequest{}, fmt.Errorf("the task's manifest cannot be read: %w", err)
	}
	m, err := task.ParseManifest(raw)
	if err != nil {
		return rules.AddRequest{}, fmt.Errorf("the task's manifest does not parse: %w", err)
	}
	if m.TaskID != id || m.CapabilityID != v.Record.CapabilityID {
		return rules.AddRequest{}, errors.New("the task's manifest is not the one its record names")
	}
	devices := make([]string, len(r.app.Cfg.Devices))
	for i, d := range r.app.Cfg.Devices {
		devices[i] = d.ID
	}
	f, err := rules.FromManifest(m, rules.AgentOf(v.Record.Agent), devices)
	if err != nil {
		return rules.AddRequest{}, err
	}
	f.Warnings = append(f.Warnings, warnings...)
	if lifetime == rules.UntilRestart {
		if err := r.live.Store().CheckRun(); err != nil {
			return rules.AddRequest{}, err
		}
	}
	return rules.LikeTask(f, rules.Allow, lifetime, r.app.Now(), likeReason(id), by)
}

// refused is why by may not add or revoke a rule here, or "".
func (r *tuiRules) refused(by rules.Actor) string {
	if !r.app.Cfg.Decisions.RequireOperatorKey || (by.Via == approval.ViaSSH && by.Key != "") {
		return ""
	}
	if why := r.app.Cfg.DecisionsRefusal(); why != "" {
		return why
	}
	return approval.ErrOperatorKeyRequired.Error()
}

// Add adds the rule to the store (audited rule_added).
func (r *tuiRules) Add(_ context.Context, req rules.AddRequest) (string, error) {
	if why := r.refused(req.Actor); why != "" {
		return "", errors.New(why)
	}
	st, err := r.live.Store().Add(req, configRuleIDs(r.app))
	if err != nil {
		return "", err
	}
	return st.ID, nil
}

// List is config.toml's rules, then the active runtime rules, with the
// hits the audit log counts.
func (r *tuiRules) List(ctx context.Context) ([]approvalspane.RuleRow, error) {
	hits, err := rules.Hits(ctx, r.app.Paths.Audit)
	if err != nil {
		return nil, fmt.Errorf("counting hits: %w", err)
	}
	now := r.app.Now()
	var out []approvalspane.RuleRow
	if set := r.live.Config(); set != nil {
		for _, c := range set.Rules() {
			if c.Expired(now) {
				continue
			}
			j := ruleJSON{Agents: c.Agents, Capabilities: c.Capabilities, Devices: c.Devices, MediaHosts: c.MediaHosts, When: c.When}
			out = append(out, approvalspane.RuleRow{ID: c.ID, Decision: string(c.Decision), Source: c.Source,
				CreatedBy: c.CreatedBy, Match: describeMatch(j), ExpiresAt: c.ExpiresAt, Hits: hits[c.ID]})
		}
	}
	store := r.live.Store()
	if _, err := store.Sweep(); err != nil {
		r.app.Log.Warn("rules: sweeping expired runtime rules", "err", err)
	}
	act, err := store.Active()
	if err != nil {
		return nil, err
	}
	for _, st := range act {
		j := storedJSON(st, hits[st.ID])
		out = append(out, approvalspane.RuleRow{ID: st.ID, Decision: string(st.Decision), Source: rules.SourceRuntime,
			CreatedBy: st.CreatedBy, Match: describeMatch(j), ExpiresAt: st.ExpiresAt, UntilRestart: j.UntilRestart,
			Hits: j.Hits, Reason: st.Reason})
	}
	return out, nil
}

// Revoke ends a runtime rule (audited rule_revoked).
func (r *tuiRules) Revoke(_ context.Context, id, reason string, by rules.Actor) error {
	if why := r.refused(by); why != "" {
		return errors.New(why)
	}
	_, err := r.live.Store().Revoke(id, by, reason)
	return err
}

// Warnings are the config rules' load warnings.
func (r *tuiRules) Warnings() []string { return r.warnings }
