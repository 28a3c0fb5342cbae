package approval

import (
	"context"
	"encoding/json"
	"time"

	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
)

// Rules are the home's [[rules]] as the queue asks them at submission
// (*rules.Set); nil: the person decides every task.
type Rules interface {
	Decide(f rules.Facts, now time.Time) rules.Verdict
}

// RuleGrace is how long a task a rule is deciding stays untold: a rule
// decides within the submission, so a task still pending after this had
// its decision interrupted (a crash, a request that changed) and is the
// person's to decide, and is announced.
const RuleGrace = 30 * time.Second

// RuleDeciding says that r is pending only because a rule's decision on it
// is being recorded: nobody is told it arrived.
func (r Record) RuleDeciding(now time.Time) bool {
	return r.State == Pending && r.DecidingRule != "" && now.Sub(r.SubmittedAt) < RuleGrace
}

// ruleDecision is the decision the rules make for a new task, nil when
// the person decides (no rule matched, a rule asks, or the preview warns:
// rules.Set never allows a task with warnings). The approval is bound to
// the preview the person would have been shown.
func (q *Queue) ruleDecision(m *task.Manifest, p *media.Prepared) *Decision {
	if q.o.Rules == nil {
		return nil
	}
	f := rules.FactsOf(p.Action, rules.AgentOf(p.Claims.Subject), mediaURIWarnings(m))
	v := q.o.Rules.Decide(f, q.o.Now())
	if v.Rule == nil || (v.Decision != rules.Allow && v.Decision != rules.Deny) {
		return nil
	}
	d := Decision{Approve: v.Decision == rules.Allow, By: "rule:" + v.Rule.ID, Via: ViaRule, Rule: v.Rule.Hash,
		PreviewHash: BindingHash(p.Plan)}
	if !d.Approve {
		d.Reason = "rule " + v.Rule.ID + ": " + v.Reason
		if task.CheckText(d.Reason, MaxReasonBytes) != nil {
			d.Reason = "rule " + v.Rule.ID
		}
	}
	if checkDecision(m.TaskID, d) != nil || q.MayDecide(d) != nil {
		return nil
	}
	return &d
}

// mediaURIWarnings are the warnings a task's preview shows for its
// media_uri (Preview lists the same).
func mediaURIWarnings(m *task.Manifest) []string {
	var in struct {
		MediaURI string `json:"media_uri"`
	}
	if json.Unmarshal(m.Inputs, &in) != nil {
		return nil
	}
	return rules.URIWarnings(in.MediaURI)
}

// applyRule records a rule's decision on a task just made pending, under
// the task's lock the submission holds: the rule decides first or not at
// all. A decision that did not go through (the request no longer previews
// as the rule saw it, a log that cannot take the entry) leaves the task
// pending for the person, who is then told it arrived.
func (q *Queue) applyRule(ctx context.Context, id string, d Decision) (Outcome, error) {
	rec, res, err := q.decideLocked(ctx, id, d)
	if err != nil && (rec.State == Pending || rec.State == "") { // nothing was decided
		q.o.Log.Warn("a rule's decision did not go through; the person decides", "task_id", id, "rule", d.By, "err", err)
		if r, lerr := q.st.load(id); lerr == nil && r.State == Pending && r.DecidingRule != "" {
			r.DecidingRule = ""
			if serr := q.st.save(r); serr != nil {
				return Outcome{}, serr
			}
		}
		return Outcome{TaskID: id, State: string(Pending)}, nil
	}
	if err != nil { // decided, but a later step failed: the record says where it stands
		q.o.Log.Warn("a rule's decision was recorded but did not finish cleanly", "task_id", id, "rule", d.By,
			"state", rec.State, "err", err)
	}
	out := Outcome{TaskID: id, State: string(rec.State), Error: rec.Error, Result: res}
	if res != nil && res.Error != nil && out.Error == nil {
		out.Error = res.Error
	}
	return out, nil
}
