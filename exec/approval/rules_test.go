package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
)

// withRules opens a queue over a new Env that asks these rules.
func withRules(t testing.TB, rcs ...config.RuleConfig) (*approvaltest.Env, *Queue, *rules.Set) {
	t.Helper()
	e := approvaltest.New(t)
	defs := make([]rules.Def, len(rcs))
	for i, rc := range rcs {
		defs[i] = rules.Def{RuleConfig: rc, Source: rules.SourceConfig}
	}
	set, err := rules.Compile(defs, rules.Options{Location: time.UTC}, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.Rules = set
	return e, e.Open(), set
}

func submitTo(t testing.TB, q *Queue, raw []byte) Outcome {
	t.Helper()
	out, err := q.Submit(context.Background(), raw, "cli")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// auditEntry is the first entry of the log with this event.
func auditEntry(t *testing.T, path, event string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] == event {
			return m
		}
	}
	t.Fatalf("no %s entry in:\n%s", event, b)
	return nil
}

// A rule that allows a task decides it at submission, through the same
// path as a person: bound to the preview, recorded as rule:<id> with the
// rule's hash, executed once, the result back in the submission's answer.
func TestRuleAllowDecidesAtSubmission(t *testing.T) {
	e, q, set := withRules(t, config.RuleConfig{ID: "planner-plays", Decision: "allow",
		Agents: []string{"planner"}, Capabilities: []string{"MEDIA_PLAY"}, Devices: []string{"living-room"}})
	out := submitTo(t, q, e.Play("t1", "/media/movie.mkv"))
	if out.State != string(Done) || out.Result == nil || out.Result.Status != task.StatusSuccess {
		t.Fatalf("submission: %+v", out)
	}
	rec, err := q.Get("t1")
	if err != nil {
		t.Fatal(err)
	}
	hash := set.Rules()[0].Hash
	if rec.DecidedBy != "rule:planner-plays" || rec.DecidedVia != ViaRule || rec.DecidedKey != hash || rec.PreviewHash == "" {
		t.Fatalf("record: by %q via %q key %q preview %q", rec.DecidedBy, rec.DecidedVia, rec.DecidedKey, rec.PreviewHash)
	}
	if got := strings.Join(e.Events(), ","); got != "submitted,approved,executed" {
		t.Fatalf("events %s", got)
	}
	ent := auditEntry(t, e.AuditPath(), "approved")
	d, _ := ent["details"].(map[string]any)
	if ent["actor"] != "rule:planner-plays" || d["via"] != ViaRule || d["rule_hash"] != hash {
		t.Fatalf("approved entry: %v", ent)
	}
	if rec.RuleDeciding(e.Clock.Now()) {
		t.Fatal("a decided task still counts as being decided by a rule")
	}
}

// A deny rule answers the agent APPROVAL_DENIED naming the rule.
func TestRuleDenyNamesTheRule(t *testing.T) {
	e, q, _ := withRules(t, config.RuleConfig{ID: "no-movies", Decision: "deny", Capabilities: []string{"MEDIA_PLAY"}})
	out := submitTo(t, q, e.Play("t1", "/media/movie.mkv"))
	if out.State != string(Denied) || out.Error == nil || out.Error.Code != task.ApprovalDenied ||
		!strings.Contains(out.Error.Message, "rule:no-movies") {
		t.Fatalf("submission: %+v %+v", out, out.Error)
	}
	if st := e.Events(); strings.Join(st, ",") != "submitted,denied" {
		t.Fatalf("events %v", st)
	}
}

// A task whose preview warns is never allowed by a rule: it waits for the
// person, and is told like any arrival.
func TestRuleNeverAllowsAWarnedTask(t *testing.T) {
	e, q, _ := withRules(t, config.RuleConfig{ID: "anything", Decision: "allow", Capabilities: []string{"MEDIA_*"}})
	out := submitTo(t, q, e.Play("t1", "https://gооgle.com/a.mp3")) // Cyrillic o's
	if out.State != string(Pending) {
		t.Fatalf("a warned task was decided: %+v", out)
	}
	rec, _ := q.Get("t1")
	if rec.DecidingRule != "" || rec.DecidedBy != "" {
		t.Fatalf("record: %+v", rec)
	}
}

// No matching rule, or an ask, leaves the task to the person.
func TestRuleAskOrNoMatchWaits(t *testing.T) {
	e, q, _ := withRules(t,
		config.RuleConfig{ID: "pause-ok", Decision: "allow", Capabilities: []string{"MEDIA_PAUSE"}},
		config.RuleConfig{ID: "ask-plays", Decision: "ask", Capabilities: []string{"MEDIA_PLAY"}})
	if out := submitTo(t, q, e.Play("t1", "/media/movie.mkv")); out.State != string(Pending) {
		t.Fatalf("ask rule: %+v", out)
	}
}

// On a home that takes decisions only from operators' keys, the rules —
// the operator's own, in a home only they can write — still decide.
func TestRuleDecidesOnAnOperatorKeyHome(t *testing.T) {
	e := approvaltest.New(t)
	set, err := rules.Compile([]rules.Def{{RuleConfig: config.RuleConfig{ID: "plays", Decision: "allow",
		Capabilities: []string{"MEDIA_PLAY"}}, Source: rules.SourceConfig}}, rules.Options{}, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.Rules, e.RequireOperatorKey = set, true
	q := e.Open()
	if out := submitTo(t, q, e.Play("t1", "/media/movie.mkv")); out.State != string(Done) {
		t.Fatalf("submission: %+v", out)
	}
	pause := e.Manifest("t2", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, 30*time.Minute)
	if out := submitTo(t, q, pause); out.State != string(Pending) {
		t.Fatalf("a task no rule covers: %+v", out)
	}
	if _, _, err := q.Decide(context.Background(), "t2", Decision{Approve: true, By: "rule:forged", Via: ViaRule}); !errors.Is(err, ErrOperatorKeyRequired) {
		t.Fatalf("a rule decision without the rule's hash: %v", err)
	}
}

// RuleDeciding holds an arrival back only for the grace a rule needs.
func TestRuleDecidingLastsTheGrace(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := Record{State: Pending, DecidingRule: "rule:x", SubmittedAt: now}
	if !r.RuleDeciding(now.Add(time.Second)) || r.RuleDeciding(now.Add(RuleGrace)) {
		t.Fatal("grace")
	}
	r.State = Done
	if r.RuleDeciding(now) {
		t.Fatal("a final task")
	}
}

// The decided list and vigil result name a rule's decision in words.
func TestDeciderNamesTheRule(t *testing.T) {
	for _, c := range []struct {
		r    Record
		want string
	}{
		{Record{DecidedBy: "rule:kitchen-pause", DecidedVia: ViaRule}, "rule kitchen-pause"},
		{Record{DecidedBy: "operator:ada", DecidedVia: ViaSSH}, "operator:ada"},
		{Record{DecidedBy: "rule:spoof", DecidedVia: ViaTUI}, "rule:spoof"}, // a name is not a rule
	} {
		if got := c.r.Decider(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
