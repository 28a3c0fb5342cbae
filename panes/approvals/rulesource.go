package approvalspane

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/rules"
)

// RuleSource is what the pane asks of the home's rules (issue 33): the
// rule "like this task" the approve prompt offers, the rules in force for
// the Rules view, and revoking one. The pane makes no rule itself: cli
// implements it over the engine's rules.Live (cli/tui_rules.go), where
// the task's stored manifest gives the facts the queue decides on. Nil in
// Options: no rule is offered and R shows nothing (the shared queue).
type RuleSource interface {
	// Like is the runtime rule allowing tasks like v's (rules.LikeTask:
	// this agent, capability and device, and media host for a play) for
	// lifetime (rules.UntilRestart: while this run of vigil serve lasts),
	// made by by; warnings are what the pane's preview warns about (an
	// allow is refused with any). The error says why no such rule can be
	// made.
	Like(ctx context.Context, v approval.View, warnings []string, lifetime time.Duration, by rules.Actor) (rules.AddRequest, error)
	// Add makes the rule (audited rule_added) and returns its id.
	Add(ctx context.Context, r rules.AddRequest) (string, error)
	// List is every rule in force: config.toml's, then the active runtime
	// rules, each with its hits.
	List(ctx context.Context) ([]RuleRow, error)
	// Revoke ends runtime rule id at once (audited rule_revoked with
	// reason).
	Revoke(ctx context.Context, id, reason string, by rules.Actor) error
	// Warnings are what loading config.toml's rules found: failing
	// examples, globs that match nothing.
	Warnings() []string
}

// RuleRow is one rule as the Rules view lists it. Its strings come from
// the config or the store and are shown through safetext.
type RuleRow struct {
	ID, Decision string
	Source       string // rules.SourceConfig or rules.SourceRuntime
	CreatedBy    string
	Match        string    // what it matches, in words
	ExpiresAt    time.Time // zero: never
	UntilRestart bool
	Hits         int
	Reason       string // why a runtime rule was added
}

// Revocable reports whether the row may be revoked from the pane: only a
// runtime rule (a config rule is changed by editing the config).
func (r RuleRow) Revocable() bool { return r.Source == rules.SourceRuntime }

// ruleMsg is every message of the rules' part of the pane: approvals.go
// routes them all to updateRules.
type ruleMsg interface{ ruleMsg() }

// actor is who this pane's rules are made and revoked by: its operator,
// through its surface, with its key.
func (p *Pane) actor() rules.Actor {
	return rules.Actor{By: p.o.Operator, Via: p.o.Via, Key: p.o.Key}
}

// updateRules handles the rules' messages.
func (p *Pane) updateRules(msg ruleMsg) tea.Cmd {
	switch msg := msg.(type) {
	case likeMsg:
		p.openLike(msg)
	case likeDoneMsg:
		return p.finishLike(msg)
	case ruleListMsg:
		p.rules.takeList(msg)
	case revokedMsg:
		return p.finishRevoke(msg)
	}
	return nil
}
