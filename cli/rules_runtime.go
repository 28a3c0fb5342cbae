package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/safetext"
)

// newRuleID, when set (by tests), makes runtime rule ids.
var newRuleID func() string

// rulesDir is where the home keeps the rules added at run time.
func (a *App) rulesDir() string { return filepath.Join(a.Paths.State, "rules") }

// openRuleStore opens the runtime rules' store, auditing to the home's log.
func (a *App) openRuleStore() (*rules.Store, error) {
	log, err := a.OpenAudit()
	if err != nil {
		return nil, err
	}
	if a.engine != nil {
		log = a.engine.Audit
	}
	s, err := rules.OpenStore(a.rulesDir(), log, a.Now)
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	if newRuleID != nil {
		s.NewID = newRuleID
	}
	return s, nil
}

// liveRules are the rules the queue asks: config.toml's and those added
// at run time, reloaded when `vigil rules add|revoke` changes the store
// (rules.Live).
func (a *App) liveRules(eng *Engine) (*rules.Live, error) {
	var set *rules.Set
	if len(a.Cfg.Rules) > 0 {
		var err error
		if set, err = loadRules(a, true); err != nil {
			return nil, err
		}
		for _, w := range set.Warnings {
			a.Log.Warn("rules: "+w, "config", a.Paths.Config)
		}
	}
	s, err := rules.OpenStore(a.rulesDir(), eng.Audit, a.Now)
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	live, err := rules.NewLive(set, s, rules.Options{}, a.Log)
	if err != nil {
		return nil, Fail(ExitExecution, fmt.Errorf("rules: %w", err))
	}
	return live, nil
}

// ruleActor is who adds or revokes a rule through this App.
func (a *App) ruleActor() rules.Actor {
	act := rules.Actor{By: a.Operator(), Via: approval.ViaCLI}
	if a.Identity != nil {
		act.Via, act.Key = a.Identity.Via, a.Identity.Key
	}
	return act
}

// rulesRefused is why this App may not add or revoke a rule: with
// [decisions] require_operator_key only an operator signed in with their
// key may, in the words `vigil approve`/`deny` say (config.DecisionsRefusal).
func rulesRefused(app *App) string {
	if !app.Cfg.Decisions.RequireOperatorKey || (app.Identity != nil && app.Identity.Key != "") {
		return ""
	}
	return app.Cfg.DecisionsRefusal()
}

// configRuleIDs are the ids config.toml's rules take.
func configRuleIDs(app *App) []string {
	ids := make([]string, len(app.Cfg.Rules))
	for i, r := range app.Cfg.Rules {
		ids[i] = r.ID
	}
	return ids
}

func newRulesAddCmd(app *App) *cobra.Command {
	var req rules.AddRequest
	var decision, forFlag, untilFlag string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "add --decision allow|ask|deny [--agent A]… [--cap C]… [--device D]… [--media-host H]… --for DUR|--until TIME --reason R",
		Short: "Add a rule while Vigil runs: it decides from the next task on, until it expires or is revoked",
		Long: "vigil rules add adds a runtime rule, checked as a [[rules]] entry of config.toml is (an allow must name " +
			"its capabilities; globs as in config.toml; no `when`). It must expire: --for a duration (15m, 2h, 7d) or " +
			"--until an RFC 3339 time, at most 30 days away — a standing rule belongs in config.toml. A running " +
			"`vigil serve` sees it at its next decision. It is audited (rule_added) and printed with its id, which " +
			"`vigil rules revoke` takes. With [decisions] require_operator_key only an operator signed in over SSH may add one.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if why := rulesRefused(app); why != "" {
				return Failf(ExitCheck, "rules add: %s", why)
			}
			req.Decision = rules.Decision(decision)
			exp, err := expiryFlags(app.Now(), forFlag, untilFlag, cmd.Flags().Changed("for"), cmd.Flags().Changed("until"))
			if err != nil {
				return err
			}
			req.ExpiresAt = exp
			req.Actor = app.ruleActor()
			if err := rules.CheckRequest(req, app.Now()); err != nil {
				return Fail(ExitBadInput, flagError(err))
			}
			if err := matchesSomething(app, req); err != nil {
				return err
			}
			s, err := app.openRuleStore()
			if err != nil {
				return err
			}
			st, err := s.Add(req, configRuleIDs(app))
			if err != nil {
				return Fail(ExitExecution, fmt.Errorf("rules add: %w", err))
			}
			j := storedJSON(st, 0)
			if asJSON {
				return app.PrintJSON(j)
			}
			fmt.Fprintf(app.Out, "added rule %s: %s %s, until %s\n", safetext.Line(j.ID), j.Decision,
				safetext.Line(describeMatch(j)), j.ExpiresAt.Local().Format(time.RFC3339))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&decision, "decision", "", "allow, ask or deny (required)")
	f.StringArrayVar(&req.Agents, "agent", nil, "an agent name or glob the rule matches (repeatable; absent: any)")
	f.StringArrayVar(&req.Capabilities, "cap", nil, "a capability or glob: MEDIA_PLAY, MEDIA_PAUSE, MEDIA_STOP, MEDIA_SEEK, MEDIA_* (repeatable; an allow needs one)")
	f.StringArrayVar(&req.Devices, "device", nil, "a device id or glob (repeatable; absent: any)")
	f.StringArrayVar(&req.MediaHosts, "media-host", nil, "a media host or glob, lower-case ASCII (repeatable; absent: any)")
	f.StringVar(&forFlag, "for", "", "how long the rule lives: a duration such as 15m, 2h or 7d (at most 30d)")
	f.StringVar(&untilFlag, "until", "", "when the rule ends: an RFC 3339 time (at most 30 days away)")
	f.StringVar(&req.Reason, "reason", "", "why the rule is added (required; audited)")
	f.BoolVar(&asJSON, "json", false, "print the rule as JSON (as `rules list --json` prints one)")
	cmd.MarkFlagsMutuallyExclusive("for", "until")
	return cmd
}

// expiryFlags reads --for or --until: exactly one is required.
func expiryFlags(now time.Time, forFlag, untilFlag string, forSet, untilSet bool) (time.Time, error) {
	switch {
	case forSet:
		d, err := parseLifetime(forFlag)
		if err != nil || d <= 0 {
			return time.Time{}, Failf(ExitBadInput, "--for: must be a positive duration such as 15m, 2h or 7d, got %q", forFlag)
		}
		return now.Add(d), nil
	case untilSet:
		t, err := time.Parse(time.RFC3339, untilFlag)
		if err != nil {
			return time.Time{}, Failf(ExitBadInput, "--until: must be an RFC 3339 time such as 2026-11-28T23:00:00+01:00, got %q", untilFlag)
		}
		return t, nil
	}
	return time.Time{}, Failf(ExitBadInput, "rules add: say how long the rule lives: --for DUR or --until TIME (at most %d days; a standing rule belongs in config.toml)",
		int(rules.MaxRuntimeLifetime/(24*time.Hour)))
}

// parseLifetime is time.ParseDuration plus whole days ("7d").
func parseLifetime(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, err
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// ruleKeyFlag maps the engine's "rules[0].field" to the flag that set it.
var ruleKeyFlag = regexp.MustCompile(`^rules\[0\]\.(agents|capabilities|devices|media_hosts|decision|expires)(\[\d+\])?`)

func flagError(err error) error {
	msg := err.Error()
	m := ruleKeyFlag.FindStringSubmatch(msg)
	if m == nil {
		if r, ok := strings.CutPrefix(msg, "reason: "); ok {
			return errors.New("--reason: " + r)
		}
		if r, ok := strings.CutPrefix(msg, "expires: "); ok {
			return errors.New("--for/--until: " + r)
		}
		return err
	}
	flag := map[string]string{"agents": "--agent", "capabilities": "--cap", "devices": "--device",
		"media_hosts": "--media-host", "decision": "--decision", "expires": "--until"}[m[1]]
	return errors.New(flag + strings.TrimPrefix(msg, m[0][:len("rules[0].")+len(m[1])]))
}

func newRulesRevokeCmd(app *App) *cobra.Command {
	var reason string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "revoke ID --reason R",
		Short: "End a rule added at run time, at once",
		Long: "vigil rules revoke ends a runtime rule: no task submitted after it returns is decided by it. It is audited " +
			"(rule_revoked). A rule from config.toml cannot be revoked here: edit the config. With [decisions] " +
			"require_operator_key only an operator signed in over SSH may revoke.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if why := rulesRefused(app); why != "" {
				return Failf(ExitCheck, "rules revoke: %s", why)
			}
			if slices.Contains(configRuleIDs(app), id) {
				return Failf(ExitBadInput, "rules revoke: %s is a rule in %s: edit the config to change or remove it",
					safetext.Line(id), app.Paths.Config)
			}
			if strings.TrimSpace(reason) == "" {
				return Failf(ExitBadInput, "rules revoke: --reason is required: say why the rule ends")
			}
			s, err := app.openRuleStore()
			if err != nil {
				return err
			}
			st, err := s.Revoke(id, app.ruleActor(), reason)
			switch {
			case errors.Is(err, rules.ErrUnknownRule):
				return Failf(ExitBadInput, "rules revoke: %s is not an active runtime rule (%s; see vigil rules list)", safetext.Line(id), safetext.Line(err.Error()))
			case err != nil && strings.HasPrefix(err.Error(), "reason: "):
				return Fail(ExitBadInput, flagError(err))
			case err != nil:
				return Fail(ExitExecution, fmt.Errorf("rules revoke: %w", err))
			}
			j := storedJSON(st, 0)
			j.Active = false
			if asJSON {
				return app.PrintJSON(j)
			}
			fmt.Fprintf(app.Out, "revoked rule %s (%s %s)\n", safetext.Line(st.ID), st.Decision, safetext.Line(describeMatch(j)))
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the rule ends (required; audited)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the revoked rule as JSON (as `rules list --json` prints one, active false)")
	return cmd
}

// storedJSON is a runtime rule as `rules list --json` prints it.
func storedJSON(st rules.Stored, hits int) ruleJSON {
	exp := st.ExpiresAt.UTC()
	created := st.CreatedAt.UTC()
	j := ruleJSON{ID: st.ID, Decision: string(st.Decision), Agents: nonNilStrings(st.Agents),
		Capabilities: nonNilStrings(st.Capabilities), Devices: nonNilStrings(st.Devices), MediaHosts: nonNilStrings(st.MediaHosts),
		ExpiresAt: &exp, Active: st.State == rules.StateActive, Source: rules.SourceRuntime, CreatedBy: st.CreatedBy,
		CreatedAt: &created, Reason: st.Reason, Hits: hits, UntilRestart: st.Run != ""}
	if set, err := rules.Compile([]rules.Def{st.Def()}, rules.Options{}, st.CreatedAt); err == nil {
		j.Hash = set.Rules()[0].Hash
	}
	return j
}

// runtimeRules are the store's active rules for `rules list`, after
// sweeping the expired ones (each gets its rule_expired entry). A home
// without a store has none, and nothing is created.
func runtimeRules(app *App) ([]rules.Stored, error) {
	if _, err := os.Stat(app.rulesDir()); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	s, err := app.openRuleStore()
	if err != nil {
		return nil, err
	}
	if _, err := s.Sweep(); err != nil {
		fmt.Fprintln(app.Err, "vigil: rules: warning: expired runtime rules could not be swept: "+safetext.Line(err.Error()))
	}
	act, err := s.Active()
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	return act, nil
}

// ruleHits counts each rule's decisions from the audit log.
func ruleHits(ctx context.Context, app *App) map[string]int {
	hits, err := rules.Hits(ctx, app.Paths.Audit)
	if err != nil {
		fmt.Fprintln(app.Err, "vigil: rules: warning: hits could not be counted: "+safetext.Line(err.Error()))
	}
	return hits
}

// withRuntime is the config's set with the active runtime rules after it,
// as the queue decides with them (strictest wins across both); it reads
// the store and writes nothing. A runtime rule with a config rule's id is
// left out, as the queue leaves it out.
func withRuntime(app *App, set *rules.Set) (*rules.Set, error) {
	act, err := rules.ActiveIn(app.rulesDir(), app.Now())
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	if len(act) == 0 {
		return set, nil
	}
	ids := configRuleIDs(app)
	defs := make([]rules.Def, 0, len(ids)+len(act))
	for _, r := range app.Cfg.Rules {
		defs = append(defs, rules.Def{RuleConfig: r, Source: rules.SourceConfig})
	}
	for _, st := range act {
		if !slices.Contains(ids, st.ID) {
			defs = append(defs, st.Def())
		}
	}
	all, err := rules.Compile(defs, rules.Options{}, app.Now())
	if err != nil {
		return nil, Fail(ExitExecution, fmt.Errorf("rules: with the runtime rules: %w", err))
	}
	return all, nil
}

// matchesSomething refuses a rule that could never match here: a --cap
// naming no capability, a --device naming no configured device (what
// config loading only warns about, a typo on the command line is caught
// before the rule exists).
func matchesSomething(app *App, req rules.AddRequest) error {
	devices := make([]string, len(app.Cfg.Devices))
	for i, d := range app.Cfg.Devices {
		devices[i] = d.ID
	}
	set, err := rules.Compile([]rules.Def{req.Def("rt-probe", app.Now())}, rules.Options{Devices: devices}, app.Now())
	if err != nil {
		return Fail(ExitBadInput, flagError(err))
	}
	for _, l := range set.Lints() {
		if _, rest, ok := strings.Cut(l, "(rt-probe)."); ok {
			return Failf(ExitBadInput, "rules add: %s", safetext.Line(flagError(errors.New("rules[0]."+rest)).Error()))
		}
	}
	return nil
}

// serveRules is vigil serve's part in the runtime rules: it records this
// process as the live run (ending rules bound to an earlier one), sweeps
// expired rules on time until ctx is done, and returns what ends the run's
// rules when serve stops.
func serveRules(ctx context.Context, app *App, eng *Engine) (func(), error) {
	end, err := eng.Rules.Store().BeginRun()
	if err != nil {
		return nil, Fail(ExitExecution, fmt.Errorf("rules: %w", err))
	}
	go eng.Rules.Run(ctx, rulesSweepEvery)
	return func() {
		if err := end(); err != nil {
			app.Log.Warn("rules: ending the rules of this run", "err", err)
		}
	}, nil
}

// rulesSweepEvery is how often vigil serve looks for expired rules.
const rulesSweepEvery = 15 * time.Second
