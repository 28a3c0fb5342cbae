package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/safetext"
)

func newRulesCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "The rules that decide tasks without asking you: list them, explain a decision, check their examples",
		Long: "Rules in config.toml ([[rules]]) allow, ask or deny a media task by its agent, capability, device and " +
			"media host, with an optional CEL `when`. The strictest matching rule wins (deny > ask > allow); no rule " +
			"means ask; a task whose preview warns is never allowed by a rule. See docs/rules.md.",
	}
	cmd.AddCommand(newRulesListCmd(app), newRulesTestCmd(app), newRulesCheckCmd(app), newRulesAddCmd(app), newRulesRevokeCmd(app))
	return cmd
}

// loadRules compiles the config's rules; what is worth knowing but does
// not stop them loading (failing examples, globs matching nothing) goes to
// stderr unless quiet.
func loadRules(app *App, quiet bool) (*rules.Set, error) {
	set, err := rules.FromConfig(app.Cfg, rules.Options{}, app.Now())
	if err != nil {
		return nil, Fail(ExitBadInput, fmt.Errorf("%s: %w", app.Paths.Config, err))
	}
	if !quiet {
		for _, w := range set.Warnings {
			fmt.Fprintln(app.Err, "vigil: rules: warning: "+safetext.Line(w))
		}
	}
	return set, nil
}

// ruleJSON is one rule as `vigil rules list --json` prints it (CLI.md).
type ruleJSON struct {
	ID           string     `json:"id"`
	Decision     string     `json:"decision"`
	Agents       []string   `json:"agents"`
	Capabilities []string   `json:"capabilities"`
	Devices      []string   `json:"devices"`
	MediaHosts   []string   `json:"media_hosts"`
	When         string     `json:"when"`
	ExpiresAt    *time.Time `json:"expires_at"`
	Active       bool       `json:"active"`
	Source       string     `json:"source"`
	CreatedBy    string     `json:"created_by"`
	CreatedAt    *time.Time `json:"created_at,omitempty"`    // runtime rules
	Reason       string     `json:"reason,omitempty"`        // runtime rules: why it was added
	UntilRestart bool       `json:"until_restart,omitempty"` // ends with this run of vigil serve (or at expires_at)
	Hits         int        `json:"hits"`
	Hash         string     `json:"hash"`
}

func newRulesListCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the rules: id, decision, what they match, expiry, source, hits",
		Long: "vigil rules list prints config.toml's rules, then the active rules added at run time (vigil rules add), " +
			"each with its expiry, source (config|runtime), who added it and its hits: the decisions it made, counted " +
			"from the audit log's approved and denied entries by \"rule:<id>\".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := loadRules(app, false)
			if err != nil {
				return err
			}
			runtime, err := runtimeRules(app)
			if err != nil {
				return err
			}
			hits := ruleHits(cmd.Context(), app)
			now := app.Now()
			list := make([]ruleJSON, 0, set.Len()+len(runtime))
			for _, r := range set.Rules() {
				j := ruleJSON{ID: r.ID, Decision: string(r.Decision), Agents: r.Agents, Capabilities: r.Capabilities,
					Devices: r.Devices, MediaHosts: r.MediaHosts, When: r.When, Active: !r.Expired(now),
					Source: r.Source, CreatedBy: r.CreatedBy, Hash: r.Hash, Hits: hits[r.ID]}
				if !r.ExpiresAt.IsZero() {
					t := r.ExpiresAt.UTC()
					j.ExpiresAt = &t
				}
				list = append(list, j)
			}
			for _, st := range runtime {
				list = append(list, storedJSON(st, hits[st.ID]))
			}
			if asJSON {
				return app.PrintJSON(list)
			}
			printRulesTable(app, list)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: one object per rule")
	return cmd
}

// printRulesTable is `rules list`'s human output; the config is the
// person's own, but it still reaches the terminal only through safetext.
func printRulesTable(app *App, list []ruleJSON) {
	if len(list) == 0 {
		fmt.Fprintln(app.Out, "no rules: every media task asks you (add [[rules]] to config.toml; see docs/rules.md)")
		return
	}
	fmt.Fprintf(app.Out, "%-24s %-8s %-8s %-22s %5s %s\n", "ID", "DECISION", "SOURCE", "EXPIRES", "HITS", "MATCHES")
	for _, r := range list {
		exp := "never"
		if r.UntilRestart {
			exp = "Vigil restarts"
		} else if r.ExpiresAt != nil {
			exp = r.ExpiresAt.Format(time.RFC3339)
			if !r.Active {
				exp += " (expired)"
			}
		}
		match := describeMatch(r)
		if r.CreatedBy != "" {
			match += " (by " + r.CreatedBy + ")"
		}
		fmt.Fprintf(app.Out, "%s %-8s %-8s %-22s %5d %s\n", safetext.Cell(r.ID, 24), r.Decision, r.Source, exp, r.Hits, safetext.Line(match))
	}
}

// describeMatch says what a rule matches in one line.
func describeMatch(r ruleJSON) string {
	var parts []string
	for _, f := range []struct {
		name  string
		globs []string
	}{{"agents", r.Agents}, {"capabilities", r.Capabilities}, {"devices", r.Devices}, {"media_hosts", r.MediaHosts}} {
		if len(f.globs) > 0 {
			parts = append(parts, f.name+"="+strings.Join(f.globs, ","))
		}
	}
	if r.When != "" {
		parts = append(parts, "when "+r.When)
	}
	if len(parts) == 0 {
		return "every task"
	}
	return strings.Join(parts, " ")
}

// testJSON is `vigil rules test --json`'s output.
type testJSON struct {
	TaskID string      `json:"task_id"`
	At     time.Time   `json:"at"`
	Facts  rules.Facts `json:"facts"`
	Lease  leaseJSON   `json:"lease"`
	rules.Verdict
}

type leaseJSON struct {
	Verified bool   `json:"verified"`
	Error    string `json:"error,omitempty"`
}

func newRulesTestCmd(app *App) *cobra.Command {
	var asJSON bool
	var atFlag, agentFlag string
	cmd := &cobra.Command{
		Use:   "test FILE|-",
		Short: "Explain what the rules decide for a task manifest: the rules that match, the decision and why; changes nothing",
		Long: "vigil rules test reads a task manifest (as vigil submit takes it) and prints what the rules would decide " +
			"for it now (or --at a time): every matching rule, the deciding one and its content hash, and why. The agent " +
			"is the lease's subject (an \"agent:NAME\" subject is NAME); a lease that does not verify is reported and its " +
			"subject still used, unless --agent names the agent. Nothing is submitted, decided or logged.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			at := app.Now()
			if atFlag != "" {
				t, err := time.Parse(time.RFC3339, atFlag)
				if err != nil {
					return Failf(ExitBadInput, "--at: must be an RFC 3339 time such as 2026-11-28T23:30:00+01:00, got %q", atFlag)
				}
				at = t
			}
			raw, err := readInput(app, args[0])
			if err != nil {
				return err
			}
			m, err := task.ParseManifest(raw)
			if err != nil {
				return Fail(ExitBadInput, err)
			}
			set, err := loadRules(app, false)
			if err != nil {
				return err
			}
			if set, err = withRuntime(app, set); err != nil {
				return err
			}
			out := testJSON{TaskID: m.TaskID, At: at}
			agent := agentFlag
			if agent == "" {
				agent, out.Lease = leaseAgent(app, m.Lease)
			}
			devices := make([]string, len(app.Cfg.Devices))
			for i, d := range app.Cfg.Devices {
				devices[i] = d.ID
			}
			if out.Facts, err = rules.FromManifest(m, agent, devices); err != nil {
				return Fail(ExitBadInput, fmt.Errorf("rules decide media tasks only, on a configured device: %w", err))
			}
			out.Verdict = set.Decide(out.Facts, at)
			if asJSON {
				return app.PrintJSON(out)
			}
			printRulesTest(app, out, agentFlag != "")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: facts, decision, rule, reason, matched, warnings, lease")
	cmd.Flags().StringVar(&atFlag, "at", "", "decide as at this RFC 3339 time (default: now)")
	cmd.Flags().StringVar(&agentFlag, "agent", "", "the agent's name, instead of the lease's subject")
	return cmd
}

// leaseAgent is the agent a manifest's lease names: verified with the
// config's keys when it can be, else read without verifying (and said so).
func leaseAgent(app *App, token string) (string, leaseJSON) {
	v, err := lease.FromConfig(app.Cfg.Leases, app.Now)
	if err == nil {
		var c *lease.Claims
		if c, err = v.Verify(token); err == nil {
			return rules.AgentOf(c.Subject), leaseJSON{Verified: true}
		}
	}
	var c lease.Claims
	if _, _, perr := jwt.NewParser().ParseUnverified(token, &c); perr != nil {
		return "", leaseJSON{Error: err.Error() + "; no subject could be read from it"}
	}
	return rules.AgentOf(c.Subject), leaseJSON{Error: err.Error()}
}

// printRulesTest is `rules test`'s human output.
func printRulesTest(app *App, t testJSON, agentGiven bool) {
	w := app.Out
	fmt.Fprintf(w, "decision: %s\n", t.Decision)
	if t.Rule != nil {
		fmt.Fprintf(w, "by rule:  %s (%s, %s)\n", safetext.Line(t.Rule.ID), t.Rule.Source, t.Rule.Hash)
	}
	fmt.Fprintf(w, "why:      %s\n", safetext.Line(t.Reason))
	f := t.Facts
	fmt.Fprintf(w, "task:     %s: agent %s, %s on %s", safetext.Line(t.TaskID), safetext.Line(f.Agent), safetext.Line(f.Capability), safetext.Line(f.Device))
	if f.MediaHost != "" {
		fmt.Fprintf(w, ", media host %s", safetext.Line(f.MediaHost))
	}
	if f.PositionSeconds != nil {
		fmt.Fprintf(w, ", position %gs", *f.PositionSeconds)
	}
	fmt.Fprintf(w, ", at %s\n", t.At.Local().Format("Mon 15:04 MST"))
	switch {
	case agentGiven:
		fmt.Fprintln(w, "agent:    given with --agent")
	case !t.Lease.Verified:
		fmt.Fprintf(w, "lease:    does not verify (%s): the agent is read from it unverified\n", safetext.Line(t.Lease.Error))
	}
	for _, x := range t.Warnings {
		fmt.Fprintf(w, "warning:  %s\n", safetext.Line(x))
	}
	if len(t.Matched) == 0 {
		fmt.Fprintln(w, "matched:  no rule")
		return
	}
	fmt.Fprintln(w, "matched:")
	for _, m := range t.Matched {
		line := fmt.Sprintf("  %-5s %s", m.Decision, safetext.Line(m.ID))
		if m.Error != "" {
			line += " (when failed: " + safetext.Line(m.Error) + ")"
		}
		fmt.Fprintln(w, line)
	}
}

func newRulesCheckCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Run every rule's examples against the whole rule set; exit 1 naming each that fails",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := loadRules(app, true)
			if err != nil {
				return err
			}
			results := set.CheckExamples(app.Now())
			failed := 0
			for _, r := range results {
				if !r.OK {
					failed++
				}
			}
			for _, l := range set.Lints() {
				fmt.Fprintln(app.Err, "vigil: rules: warning: "+safetext.Line(l))
			}
			if asJSON {
				if results == nil {
					results = []rules.ExampleResult{}
				}
				if err := app.PrintJSON(map[string]any{"examples": results, "failed": failed, "warnings": nonNilStrings(set.Lints())}); err != nil {
					return err
				}
			} else {
				printRulesCheck(app, set.Len(), results, failed)
			}
			if failed > 0 {
				return Quiet(ExitCheck)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"examples":[{"key","rule_id","example","want","got","reason","ok"}],"failed","warnings"}`)
	return cmd
}

func printRulesCheck(app *App, nRules int, results []rules.ExampleResult, failed int) {
	for _, r := range results {
		mark := "ok  "
		if !r.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(app.Out, "%s %s\n", mark, safetext.Line(r.String()))
	}
	fmt.Fprintf(app.Out, "%s, %s, %d failed\n", plural(nRules, "rule", "rules"), plural(len(results), "example", "examples"), failed)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
