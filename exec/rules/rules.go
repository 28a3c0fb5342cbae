// Package rules decides, for a media task an agent submitted, whether the
// person must be asked: the [[rules]] of config.toml and the rules added
// at run time (Store, Live) matched on the task's structured facts — agent,
// capability, device, media host, never the text of a command — and an
// optional CEL `when` over them and the clock.
//
// Evaluation is a pure function of the rule set, the task's Facts and a
// moment: (*Set).Decide. The strictest matching rule wins (deny > ask >
// allow; among equals the first in the set); no matching rule means ask;
// a task whose preview carries any warning is never allowed by a rule.
// The Verdict names the deciding rule and its content hash, so the queue
// can record `decided_by: rule:<id>` and which rule text decided.
package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"github.com/gowebpki/jcs"
	"github.com/vigil-dev/vigil/config"
)

// Decision is what a rule, or a verdict, says about a task.
type Decision string

// The decisions, from the least strict.
const (
	Allow Decision = config.RuleAllow
	Ask   Decision = config.RuleAsk
	Deny  Decision = config.RuleDeny
)

// strictness orders decisions: deny > ask > allow.
func (d Decision) strictness() int {
	switch d {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2
}

// Where a rule comes from.
const (
	SourceConfig  = "config"  // config.toml's [[rules]]
	SourceRuntime = "runtime" // added while Vigil runs (vigil rules add)
)

// DefaultCostLimit bounds one evaluation of a `when` (CEL's cost units:
// about one per variable read, comparison or call); a rule that would need
// more fails, and a failing `when` asks.
const DefaultCostLimit = 1000

// Def is a rule as written, with where it came from.
type Def struct {
	config.RuleConfig
	Source    string // SourceConfig or SourceRuntime
	CreatedBy string // who added a runtime rule; "" for a config rule
}

// Rule is a compiled rule.
type Rule struct {
	ID           string    `json:"id"`
	Decision     Decision  `json:"decision"`
	Agents       []string  `json:"agents"`
	Capabilities []string  `json:"capabilities"`
	Devices      []string  `json:"devices"`
	MediaHosts   []string  `json:"media_hosts"`
	When         string    `json:"when,omitempty"`
	ExpiresAt    time.Time `json:"expires_at,omitzero"`
	Source       string    `json:"source"`
	CreatedBy    string    `json:"created_by"`
	// Hash is "sha256:" and the hex SHA-256 of the rule's canonical JSON
	// (RFC 8785) without its examples: what decided, recorded with the
	// decision, changes whenever what the rule matches or says does.
	Hash string `json:"hash"`

	pos      int // place in the set: the first of equally strict rules decides
	when     int // index of the rule's program in Set.progs; -1 without a when
	m        matchers
	examples []config.RuleExample
}

// Options tune a set. The zero value is the documented behaviour.
type Options struct {
	// Location is the time zone hour, minute and weekday are read in; nil
	// is the machine's local zone (time.Local).
	Location *time.Location
	// CostLimit bounds one `when` evaluation; 0 is DefaultCostLimit.
	CostLimit uint64
	// Devices, when not nil, are the configured device ids: a devices glob
	// that matches none of them is reported in Warnings (a typo would
	// otherwise make a rule that never matches).
	Devices []string
}

// Set is a compiled rule set, safe for concurrent use.
type Set struct {
	rules []*Rule
	idx   index
	loc   *time.Location
	// progs are the distinct `when` programs: rules with the same text
	// share one, and one decision evaluates each at most once (its result
	// depends only on the task and the moment).
	progs []cel.Program
	// Warnings are what is worth knowing about the set but does not stop it
	// loading: examples that fail, globs that can match nothing configured,
	// rules already expired. Each is one line naming the rule's key.
	Warnings []string
	lints    []string
}

// Lints are the Warnings that are not failing examples.
func (s *Set) Lints() []string { return s.lints }

// FromConfig compiles config.toml's rules (Source "config") and runs their
// examples at now, listing any that fail in Warnings.
func FromConfig(cfg config.Config, o Options, now time.Time) (*Set, error) {
	defs := make([]Def, len(cfg.Rules))
	for i, r := range cfg.Rules {
		defs[i] = Def{RuleConfig: r, Source: SourceConfig}
	}
	if o.Devices == nil {
		o.Devices = make([]string, 0, len(cfg.Devices))
		for _, d := range cfg.Devices {
			o.Devices = append(o.Devices, d.ID)
		}
	}
	return Compile(defs, o, now)
}

// Compile checks and compiles defs in order (a config error names
// rules[i] and the field), then runs every example against the whole set
// at now; failing examples and other findings go to Warnings.
func Compile(defs []Def, o Options, now time.Time) (*Set, error) {
	s := &Set{loc: o.Location}
	if s.loc == nil {
		s.loc = time.Local
	}
	limit := o.CostLimit
	if limit == 0 {
		limit = DefaultCostLimit
	}
	cfgs := make([]config.RuleConfig, len(defs))
	for i, d := range defs {
		cfgs[i] = d.RuleConfig
	}
	if err := validate(cfgs); err != nil {
		return nil, err
	}
	byText := map[string]int{}
	for i, d := range defs {
		r, err := compileRule(d, i)
		if err != nil {
			return nil, err
		}
		if r.When != "" {
			n, ok := byText[r.When]
			if !ok {
				prg, err := program(r.When, limit)
				if err != nil {
					return nil, fmt.Errorf("rules[%d].when: %w", i, err)
				}
				n = len(s.progs)
				byText[r.When] = n
				s.progs = append(s.progs, prg)
			}
			r.when = n
		}
		s.rules = append(s.rules, r)
	}
	s.idx = buildIndex(s.rules)
	s.lints = s.lint(o.Devices, now)
	s.Warnings = append(s.Warnings, s.lints...)
	for _, res := range s.CheckExamples(now) {
		if !res.OK {
			s.Warnings = append(s.Warnings, res.String())
		}
	}
	return s, nil
}

// validate runs config's checks on rules that did not come through
// config.Load (runtime rules, tests).
func validate(cfgs []config.RuleConfig) error {
	c := config.Default()
	c.Rules = cfgs
	err := c.Validate()
	var ce *config.Error
	if errors.As(err, &ce) && ce.File == "" {
		return fmt.Errorf("%s: %s", ce.Key, ce.Rule)
	}
	return err
}

// program compiles a `when` with the cost limit.
func program(when string, limit uint64) (cel.Program, error) {
	ast, err := config.CompileWhen(when)
	if err != nil {
		return nil, err
	}
	env, err := config.WhenEnv()
	if err != nil {
		return nil, err
	}
	return env.Program(ast, cel.CostLimit(limit), cel.EvalOptions(cel.OptOptimize))
}

// compileRule builds one rule but its program: its fields and hash.
func compileRule(d Def, pos int) (*Rule, error) {
	exp, err := d.ExpiresAt()
	if err != nil {
		return nil, fmt.Errorf("rules[%d].expires: %w", pos, err)
	}
	r := &Rule{
		ID: d.ID, Decision: Decision(d.Decision),
		Agents: nonNil(d.Agents), Capabilities: nonNil(d.Capabilities), Devices: nonNil(d.Devices), MediaHosts: nonNil(d.MediaHosts),
		When: d.When, ExpiresAt: exp, Source: d.Source, CreatedBy: d.CreatedBy,
		pos: pos, when: -1, examples: d.Examples,
	}
	if r.Source == "" {
		r.Source = SourceConfig
	}
	r.m = matchers{newField(r.Agents), newField(r.Capabilities), newField(r.Devices), newField(r.MediaHosts)}
	r.Hash, err = contentHash(r)
	if err != nil {
		return nil, fmt.Errorf("rules[%d]: %w", pos, err)
	}
	return r, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// contentHash is the hash of what the rule matches and decides.
func contentHash(r *Rule) (string, error) {
	var expires string
	if !r.ExpiresAt.IsZero() {
		expires = r.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	b, err := json.Marshal(struct {
		ID           string   `json:"id"`
		Decision     Decision `json:"decision"`
		Agents       []string `json:"agents"`
		Capabilities []string `json:"capabilities"`
		Devices      []string `json:"devices"`
		MediaHosts   []string `json:"media_hosts"`
		When         string   `json:"when"`
		Expires      string   `json:"expires"`
		Source       string   `json:"source"`
	}{r.ID, r.Decision, r.Agents, r.Capabilities, r.Devices, r.MediaHosts, r.When, expires, r.Source})
	if err != nil {
		return "", err
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Rules lists the set's rules in order (expired ones included).
func (s *Set) Rules() []Rule {
	out := make([]Rule, len(s.rules))
	for i, r := range s.rules {
		out[i] = *r
	}
	return out
}

// Len is the number of rules.
func (s *Set) Len() int { return len(s.rules) }

// Expired says whether the rule no longer matches at now.
func (r *Rule) Expired(now time.Time) bool { return !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt) }

// lint finds what makes a rule match less than it looks: globs that match
// no capability or no configured device, rules already expired.
func (s *Set) lint(devices []string, now time.Time) []string {
	var out []string
	for _, r := range s.rules {
		key := fmt.Sprintf("%s (%s)", r.key(), r.ID)
		for k, g := range r.Capabilities {
			if !anyMatch(g, knownCapabilities) {
				out = append(out, fmt.Sprintf("%s.capabilities[%d]: %q matches no capability (%s): the rule never matches", key, k, g, strings.Join(knownCapabilities, ", ")))
			}
		}
		if devices != nil {
			for k, g := range r.Devices {
				if !anyMatch(g, devices) {
					out = append(out, fmt.Sprintf("%s.devices[%d]: %q matches no configured device: the rule never matches", key, k, g))
				}
			}
		}
		if r.Expired(now) {
			out = append(out, fmt.Sprintf("%s: expired at %s: the rule no longer matches", key, r.ExpiresAt.Format(time.RFC3339)))
		}
	}
	return out
}

// key is the rule's place as config.toml names it.
func (r *Rule) key() string {
	if r.Source == SourceConfig {
		return fmt.Sprintf("rules[%d]", r.pos)
	}
	return "rule " + r.ID
}
