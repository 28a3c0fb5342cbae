package rules

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// Ref names the rule that decided: its id, content hash and source, as
// the decision's record keeps them (decided_by "rule:<id>").
type Ref struct {
	ID     string `json:"id"`
	Hash   string `json:"hash"`
	Source string `json:"source"`
}

// Match is one rule that matched a task.
type Match struct {
	Ref
	Decision Decision `json:"decision"`
	// Error says why the rule's `when` could not be evaluated; such a rule
	// counts as asking, whatever its decision.
	Error string `json:"error,omitempty"`
}

// Verdict is the rule set's answer for a task.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Rule is the rule that decided: set for an allow or a deny a rule
	// made, and for an ask a rule made; nil when no rule matched, or when
	// the task's warnings turned a rule's allow into asking the person.
	Rule *Ref `json:"rule,omitempty"`
	// Reason says why, in one sentence for a person.
	Reason string `json:"reason"`
	// Matched are the rules that matched, in set order.
	Matched []Match `json:"matched"`
	// Warnings are the task's preview warnings, whatever was decided: with
	// any, the decision is never allow.
	Warnings []string `json:"warnings,omitempty"`
}

// clock is the moment a `when` reads.
type clock struct{ hour, minute, weekday int64 }

func clockAt(t time.Time, loc *time.Location) clock {
	t = t.In(loc)
	return clock{int64(t.Hour()), int64(t.Minute()), int64(t.Weekday())}
}

// Decide is the verdict for a task with facts f at now: the strictest
// matching rule (deny > ask > allow; the first of equals), ask when none
// matches, and never allow when f carries warnings. It reads no state but
// the set's and changes nothing.
func (s *Set) Decide(f Facts, now time.Time) Verdict {
	return s.decide(&f, now, clockAt(now, s.loc))
}

func (s *Set) decide(f *Facts, now time.Time, c clock) Verdict {
	w := whens{progs: s.progs, act: newActivation(f, c)}
	matched := make([]found, 0, 8)
	s.idx.candidates(f, func(r *Rule) {
		if r.Expired(now) || !r.structural(f) {
			return
		}
		m := Match{Ref: r.ref(), Decision: r.Decision}
		if r.when >= 0 {
			ok, err := w.eval(r.when)
			switch {
			case err != nil:
				m.Decision, m.Error = maxDecision(r.Decision, Ask), err.Error()
			case !ok:
				return
			}
		}
		matched = append(matched, found{r.pos, m})
	})
	return verdict(f, matched)
}

// found is a match and its rule's place in the set.
type found struct {
	pos int
	m   Match
}

// verdict folds the matches into the answer.
func verdict(f *Facts, hits []found) Verdict {
	slices.SortFunc(hits, func(a, b found) int { return a.pos - b.pos })
	matched := make([]Match, len(hits))
	for i, x := range hits {
		matched[i] = x.m
	}
	v := Verdict{Decision: Ask, Matched: matched, Warnings: f.Warnings}
	var best *Match
	for i := range matched {
		if best == nil || matched[i].Decision.strictness() > best.Decision.strictness() {
			best = &matched[i]
		}
	}
	switch {
	case best == nil:
		v.Reason = "no rule matches: the person decides"
	case best.Decision == Allow && len(f.Warnings) > 0:
		v.Reason = fmt.Sprintf("rule %q would allow it, but its preview warns (%s): a rule never allows such a task, the person decides",
			best.ID, strings.Join(f.Warnings, "; "))
	default:
		v.Decision = best.Decision
		ref := best.Ref
		v.Rule = &ref
		v.Reason = reasonFor(best, len(matched))
	}
	return v
}

func reasonFor(m *Match, n int) string {
	var r string
	switch {
	case m.Error != "":
		r = fmt.Sprintf("rule %q's when could not be evaluated (%s): the person decides", m.ID, m.Error)
	case m.Decision == Allow:
		r = fmt.Sprintf("rule %q allows it", m.ID)
	case m.Decision == Deny:
		r = fmt.Sprintf("rule %q denies it", m.ID)
	default:
		r = fmt.Sprintf("rule %q asks the person", m.ID)
	}
	if n > 1 {
		r += fmt.Sprintf(" (the strictest of %d matching rules)", n)
	}
	return r
}

func maxDecision(a, b Decision) Decision {
	if a.strictness() >= b.strictness() {
		return a
	}
	return b
}

func (r *Rule) ref() Ref { return Ref{ID: r.ID, Hash: r.Hash, Source: r.Source} }

// whens evaluates the set's programs for one task, each at most once.
type whens struct {
	progs []cel.Program
	act   *activation
	done  map[int]whenResult
}

type whenResult struct {
	ok  bool
	err error
}

// eval runs program i: a non-bool or an error (a variable not bound for
// this task, the cost limit) is an error.
func (w *whens) eval(i int) (bool, error) {
	if r, ok := w.done[i]; ok {
		return r.ok, r.err
	}
	var r whenResult
	out, _, err := w.progs[i].Eval(w.act)
	if err != nil {
		r.err = err
	} else if b, ok := out.(types.Bool); ok {
		r.ok = bool(b)
	} else {
		r.err = fmt.Errorf("when gave %s, not true or false", out.Type())
	}
	if w.done == nil {
		w.done = map[int]whenResult{}
	}
	w.done[i] = r
	return r.ok, r.err
}

// activation binds config.WhenVariables for one task without building a
// map per evaluation.
type activation struct {
	agent, capability, device, host ref.Val
	position                        ref.Val // nil when the task has none
	hour, minute, weekday           ref.Val
	warnings                        ref.Val
}

func newActivation(f *Facts, c clock) *activation {
	a := &activation{
		agent: types.String(f.Agent), capability: types.String(f.Capability), device: types.String(f.Device),
		host: types.String(f.MediaHost),
		hour: types.Int(c.hour), minute: types.Int(c.minute), weekday: types.Int(c.weekday),
	}
	if f.PositionSeconds != nil {
		a.position = types.Double(*f.PositionSeconds)
	}
	w := f.Warnings
	if w == nil {
		w = []string{}
	}
	a.warnings = types.NewStringList(types.DefaultTypeAdapter, w)
	return a
}

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "agent":
		return a.agent, true
	case "capability":
		return a.capability, true
	case "device":
		return a.device, true
	case "media_host":
		return a.host, true
	case "has_position":
		return types.Bool(a.position != nil), true
	case "position_seconds":
		return a.position, a.position != nil
	case "hour":
		return a.hour, true
	case "minute":
		return a.minute, true
	case "weekday":
		return a.weekday, true
	case "warnings":
		return a.warnings, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }
