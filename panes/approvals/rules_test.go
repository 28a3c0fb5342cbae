package approvalspane

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
)

// storeSource is a RuleSource over a real rules store and the queue's
// stored manifests, as cli/tui_rules.go's is over the engine's.
type storeSource struct {
	env    *approvaltest.Env
	store  *rules.Store
	config *rules.Set
}

func (s *storeSource) Like(_ context.Context, v approval.View, warnings []string, d time.Duration, by rules.Actor) (rules.AddRequest, error) {
	raw, err := task.ReadStored(filepath.Join(s.env.TasksDir(), v.Record.TaskID, "manifest.json"), 8*task.MaxManifestBytes)
	if err != nil {
		return rules.AddRequest{}, err
	}
	m, err := task.ParseManifest(raw)
	if err != nil {
		return rules.AddRequest{}, err
	}
	f, err := rules.FromManifest(m, rules.AgentOf(v.Record.Agent), []string{"living-room"})
	if err != nil {
		return rules.AddRequest{}, err
	}
	f.Warnings = append(f.Warnings, warnings...)
	if d == rules.UntilRestart {
		if err := s.store.CheckRun(); err != nil {
			return rules.AddRequest{}, err
		}
	}
	return rules.LikeTask(f, rules.Allow, d, s.env.Clock.Now(), "like "+v.Record.TaskID, by)
}

func (s *storeSource) Add(_ context.Context, r rules.AddRequest) (string, error) {
	st, err := s.store.Add(r, nil)
	return st.ID, err
}

func (s *storeSource) List(ctx context.Context) ([]RuleRow, error) {
	hits, err := rules.Hits(ctx, s.env.AuditPath())
	if err != nil {
		return nil, err
	}
	var out []RuleRow
	if s.config != nil {
		for _, r := range s.config.Rules() {
			out = append(out, RuleRow{ID: r.ID, Decision: string(r.Decision), Source: r.Source, Match: strings.Join(r.Capabilities, ","),
				ExpiresAt: r.ExpiresAt, Hits: hits[r.ID]})
		}
	}
	act, err := s.store.Active()
	for _, st := range act {
		out = append(out, RuleRow{ID: st.ID, Decision: string(st.Decision), Source: rules.SourceRuntime, CreatedBy: st.CreatedBy,
			Match: strings.Join(append(append(st.Capabilities, st.Agents...), st.Devices...), " "), ExpiresAt: st.ExpiresAt,
			UntilRestart: st.Run != "", Hits: hits[st.ID], Reason: st.Reason})
	}
	return out, err
}

func (s *storeSource) Revoke(_ context.Context, id, reason string, by rules.Actor) error {
	_, err := s.store.Revoke(id, by, reason)
	return err
}

func (s *storeSource) Warnings() []string {
	if s.config == nil {
		return nil
	}
	return s.config.Warnings
}

// rulesEnv is a queue whose submissions the config rules defs and the
// store's runtime rules decide, and a source over them. Times are shown
// in UTC (TestMain), as the goldens were made.
func rulesEnv(t *testing.T, defs ...rules.Def) (*approvaltest.Env, *storeSource) {
	t.Helper()
	env := approvaltest.New(t)
	store, err := rules.OpenStore(filepath.Join(env.Dir, "rules"), env.Audit, env.Clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	store.NewID = func() string { n++; return "rt-test" + string(rune('0'+n)) }
	src := &storeSource{env: env, store: store}
	if len(defs) > 0 {
		if src.config, err = rules.Compile(defs, rules.Options{Devices: []string{"living-room"}}, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	live, err := rules.NewLive(src.config, store, rules.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	env.Rules = live
	env.Queue = env.Open()
	return env, src
}

const mediaURI = "https://media.example.com/show.mp4"

func TestGoldenLikeChooser(t *testing.T) {
	env, src := rulesEnv(t)
	env.Submit(env.Play("like-me", mediaURI))
	s, _ := startWith(t, env, Options{Rules: src}, 110, 34, "effect")
	env.Clock.Advance(time.Second)
	s.key("a")
	s.wait("allow tasks like this")
	env.Clock.Advance(time.Second)
	s.key("l")
	s.wait("for how long?")
	out := s.final()
	for _, want := range []string{
		"1 for 15 min:", "allow MEDIA_PLAY by planner on living-room from media.example.com, until Nov 22 10:15 (15m0s)",
		"2 for 1 h:", "allow MEDIA_PLAY by planner on living-room from media.example.com, until Nov 22 11:00 (1h0m0s)",
		"3 until Vigil restarts:", "not offered: until Vigil restarts: no vigil serve is running on this home",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

// likePane is a loaded pane over env with src, its approve prompt open.
func likePane(t *testing.T, env *approvaltest.Env, src RuleSource, o Options) *Pane {
	t.Helper()
	o.Queue, o.Now, o.Rules = env.Queue, env.Clock.Now, src
	if o.Operator == "" {
		o.Operator = "operator:ada"
	}
	p := New(o, styles())
	t.Cleanup(p.Close)
	p.Update(p.reload(nil)())
	p.Update(p.loadView(p.queue.selID)())
	env.Clock.Advance(GraceMax)
	p.Update(keyMsg("a"))
	return p
}

// pressAt presses k after the grace and delivers what it asked for.
func pressAt(t *testing.T, env *approvaltest.Env, p *Pane, k string) {
	t.Helper()
	env.Clock.Advance(GraceMax)
	msg := keyMsg(k)
	if k == "enter" {
		msg = tea.KeyPressMsg{Code: tea.KeyEnter}
	}
	if cmd := p.Update(msg); cmd != nil {
		if msg := runBatch(cmd); msg != nil {
			p.Update(msg)
		}
	}
}

// "Allow like this" adds exactly one runtime rule and approves the task
// once, as the person; the next task like it is decided by the rule at
// submission; a play from another host still asks.
func TestLikeAddsOneRuleAndApprovesOnce(t *testing.T) {
	env, src := rulesEnv(t)
	env.Submit(env.Play("first", mediaURI))
	p := likePane(t, env, src, Options{})
	if p.dialogs.confirm == nil || !p.dialogs.confirm.like {
		t.Fatalf("the approve prompt does not offer l: %q", p.notice)
	}
	pressAt(t, env, p, "l")
	if p.dialogs.like == nil {
		t.Fatalf("no chooser: %q", p.notice)
	}
	pressAt(t, env, p, "2")
	// the second question is behind the grace again: y at once does nothing
	p.Update(keyMsg("y"))
	if p.busy || p.dialogs.like == nil {
		t.Fatalf("y was taken during the grace")
	}
	if got := p.likeLines(p.dialogs.like); !strings.Contains(got, "allow MEDIA_PLAY by planner on living-room from media.example.com, until Nov 22 11:00") {
		t.Fatalf("the rule is not shown before it is made:\n%s", got)
	}
	pressAt(t, env, p, "y")
	if p.busy || !strings.Contains(p.notice, "rule rt-test1 added") || !strings.Contains(p.notice, "first approved and executed") {
		t.Fatalf("notice %q", p.notice)
	}
	act, err := src.store.Active()
	if err != nil || len(act) != 1 || act[0].CreatedBy != "operator:ada" || len(act[0].MediaHosts) != 1 || act[0].MediaHosts[0] != "media.example.com" {
		t.Fatalf("rules %+v %v", act, err)
	}
	r, _ := env.Queue.Get("first")
	if r.State != approval.Done || r.DecidedBy != "operator:ada" {
		t.Fatalf("first: %s by %s", r.State, r.DecidedBy)
	}
	if got := strings.Join(env.Events(), ","); got != "submitted,rule_added,approved,executed" {
		t.Fatalf("audit %s", got)
	}
	if out := env.Submit(env.Play("second", mediaURI)); out.State != string(approval.Done) {
		t.Fatalf("second: %+v", out)
	}
	if r, _ := env.Queue.Get("second"); r.DecidedBy != "rule:rt-test1" {
		t.Fatalf("second decided by %q", r.DecidedBy)
	}
	if out := env.Submit(env.Play("elsewhere", "https://other.example.com/show.mp4")); out.State != string(approval.Pending) {
		t.Fatalf("a play from another host: %+v", out)
	}
}

// Until Vigil restarts needs a live vigil serve: without one the chooser
// does not offer it (3 says why); with one it is offered, and if the run
// ends before y the store refuses, the pane says so, and nothing is
// approved.
func TestLikeUntilRestartWithoutServe(t *testing.T) {
	env, src := rulesEnv(t)
	env.Submit(env.Play("norun", mediaURI))
	p := likePane(t, env, src, Options{})
	pressAt(t, env, p, "l")
	pressAt(t, env, p, "3")
	if d := p.dialogs.like; d == nil || d.pick >= 0 || !strings.Contains(d.err, "no vigil serve is running") {
		t.Fatalf("3 without a run: %+v", d)
	}
	pressAt(t, env, p, "n")
	end, err := src.store.BeginRun()
	if err != nil {
		t.Fatal(err)
	}
	pressAt(t, env, p, "a")
	pressAt(t, env, p, "l")
	pressAt(t, env, p, "3")
	if d := p.dialogs.like; d == nil || d.pick != 2 || !strings.Contains(p.likeLines(d), "until Vigil restarts") {
		t.Fatalf("3 with a run: %+v %q", d, p.notice)
	}
	if err := end(); err != nil {
		t.Fatal(err)
	}
	pressAt(t, env, p, "y")
	if !strings.Contains(p.notice, "no rule was made and nothing was approved") {
		t.Fatalf("notice %q", p.notice)
	}
	if r, _ := env.Queue.Get("norun"); r.State != approval.Pending {
		t.Fatalf("norun: %s", r.State)
	}
	if act, _ := src.store.Active(); len(act) != 0 {
		t.Fatalf("rules %+v", act)
	}
}

// A task whose preview warns is never offered a rule: the prompt lacks l,
// and l there cancels.
func TestLikeNotOfferedForAWarnedTask(t *testing.T) {
	env, src := rulesEnv(t)
	env.Submit(env.Play("numeric", warnedURI))
	p := likePane(t, env, src, Options{})
	if p.dialogs.confirm == nil || p.dialogs.confirm.like {
		t.Fatalf("a warned task is offered a rule (warnings %v)", BatchWarnings(*p.queue.view))
	}
	for _, b := range p.ShortHelp() {
		if b.Help().Key == "l" {
			t.Fatal("the footer offers l")
		}
	}
	pressAt(t, env, p, "l")
	if p.dialogs.open() || p.busy {
		t.Fatal("l opened something")
	}
	if act, _ := src.store.Active(); len(act) != 0 {
		t.Fatalf("rules %+v", act)
	}
	// nor without a rule source (the shared queue)
	env.Submit(env.Play("plain", mediaURI))
	q := likePane(t, env, nil, Options{})
	if q.dialogs.confirm != nil && q.dialogs.confirm.like {
		t.Fatal("offered without a rule source")
	}
}

// configDefs are a config rule whose example fails and one whose device
// glob matches nothing.
func configDefs() []rules.Def {
	return []rules.Def{
		{RuleConfig: config.RuleConfig{ID: "pause-ok", Decision: "allow", Capabilities: []string{"MEDIA_PAUSE"}, Devices: []string{"living-room"},
			Examples: []config.RuleExample{{Task: config.ExampleTask{Capability: "MEDIA_PAUSE", Device: "living-room"}, Want: "deny"}}},
			Source: rules.SourceConfig},
		{RuleConfig: config.RuleConfig{ID: "typo", Decision: "deny", Devices: []string{"kitchn"}}, Source: rules.SourceConfig},
	}
}

func TestGoldenRulesView(t *testing.T) {
	env, src := rulesEnv(t, configDefs()...)
	if len(src.Warnings()) != 2 {
		t.Fatalf("warnings %q", src.Warnings())
	}
	if out := env.Submit(env.Manifest("paused", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, time.Hour)); out.State != string(approval.Done) {
		t.Fatalf("paused: %+v", out)
	}
	req, err := rules.LikeTask(rules.Facts{Agent: "planner", Capability: "MEDIA_STOP", Device: "living-room"}, rules.Allow,
		15*time.Minute, env.Clock.Now(), "quiet evening", rules.Actor{By: "operator:ada", Via: "tui"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.store.Add(req, nil); err != nil {
		t.Fatal(err)
	}
	env.Submit(env.Play("waiting", mediaURI))
	s, p := startWith(t, env, Options{Rules: src}, 120, 30, "2 rule warnings: see R")
	s.key("R")
	s.wait("rt-test1")
	waitState(t, p, func(Snapshot) bool { return p.rules.shown })
	out := s.final()
	for _, want := range []string{"Rules (3)", "pause-ok", "config", "rt-test1", "runtime", "operator:ada", "in 15m", "want deny", "kitchn"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "see R") {
		t.Fatalf("the note stays once R was opened:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

// x on a runtime rule asks why and revokes it (audited with the reason);
// on a config rule it says to edit the config.
func TestRevokeFromTheRulesView(t *testing.T) {
	env, src := rulesEnv(t, configDefs()...)
	req, _ := rules.LikeTask(rules.Facts{Agent: "planner", Capability: "MEDIA_STOP", Device: "living-room"}, rules.Allow,
		time.Hour, env.Clock.Now(), "for now", rules.Actor{By: "operator:ada", Via: "tui"})
	if _, err := src.store.Add(req, nil); err != nil {
		t.Fatal(err)
	}
	p := New(Options{Queue: env.Queue, Operator: "operator:ada", Now: env.Clock.Now, Rules: src}, styles())
	t.Cleanup(p.Close)
	pressAt(t, env, p, "R")
	if len(p.rules.list) != 3 {
		t.Fatalf("rules %+v %v", p.rules.list, p.rules.err)
	}
	pressAt(t, env, p, "x") // pause-ok, from the config
	if p.dialogs.revoke != nil {
		t.Fatal("a config rule's revocation was offered")
	}
	if why := p.revokeOff(); !strings.Contains(why, "edit the config") {
		t.Fatalf("x said %q", why)
	}
	pressAt(t, env, p, "j")
	pressAt(t, env, p, "j")
	pressAt(t, env, p, "x")
	if p.dialogs.revoke == nil {
		t.Fatal("no revoke prompt")
	}
	pressAt(t, env, p, "enter")
	if p.dialogs.revoke == nil || p.dialogs.revoke.err == "" {
		t.Fatal("revoked without a reason")
	}
	for _, r := range "done for today" {
		p.Update(keyMsg(string(r)))
	}
	pressAt(t, env, p, "enter")
	if p.dialogs.open() || !strings.Contains(p.notice, "rule rt-test1 revoked") {
		t.Fatalf("notice %q", p.notice)
	}
	if act, _ := src.store.Active(); len(act) != 0 {
		t.Fatalf("still active: %+v", act)
	}
	p.Update(runBatch(p.readRules()))
	if len(p.rules.list) != 2 {
		t.Fatalf("the view still lists %+v", p.rules.list)
	}
	var revoked []audit.Entry
	audit.Scan(env.AuditPath(), 0, func(l audit.Line) bool {
		if l.Entry.Event == audit.EventRuleRevoked {
			revoked = append(revoked, l.Entry)
		}
		return true
	})
	if len(revoked) != 1 || revoked[0].Actor != "operator:ada" || !strings.Contains(string(revoked[0].Details), `"reason":"done for today"`) {
		t.Fatalf("audit %+v", revoked)
	}
}

// Where this pane may not decide (require_operator_key, the local TUI),
// the Rules view still lists the rules but x is neither offered nor acts,
// and the approve prompt (which does not open) offers no rule.
func TestRuleKeysHiddenWhereDecisionsAreRefused(t *testing.T) {
	env, src := rulesEnv(t)
	req, _ := rules.LikeTask(rules.Facts{Agent: "planner", Capability: "MEDIA_STOP", Device: "living-room"}, rules.Allow,
		time.Hour, env.Clock.Now(), "for now", rules.Actor{By: "operator:bob", Via: "ssh", Key: sshKey})
	if _, err := src.store.Add(req, nil); err != nil {
		t.Fatal(err)
	}
	env.Submit(env.Play("refused", mediaURI))
	p := likePane(t, env, src, Options{DecisionsRefused: "decisions on this home are made by an operator over SSH"})
	if p.dialogs.open() {
		t.Fatal("a prompt opened")
	}
	pressAt(t, env, p, "R")
	if !p.rules.shown || len(p.rules.list) != 1 {
		t.Fatalf("rules view %v %+v", p.rules.shown, p.rules.list)
	}
	pressAt(t, env, p, "x")
	if p.dialogs.revoke != nil {
		t.Fatal("x opened the revoke prompt")
	}
	for _, g := range append(p.FullHelp(), p.ShortHelp()) {
		for _, b := range g {
			if b.Help().Key == "x" {
				t.Fatal("x is listed")
			}
		}
	}
	if got := strings.Join(p.ruleDetail(120), "\n"); strings.Contains(got, "x: revoke") {
		t.Fatalf("detail offers x: %s", got)
	}
	if act, _ := src.store.Active(); len(act) != 1 {
		t.Fatalf("rules %+v", act)
	}
}

// The chooser, the Rules view and its revoke prompt draw at every size
// without a line too many, and say whether all they act on fits.
func TestRuleScreensAnySize(t *testing.T) {
	env, src := rulesEnv(t, configDefs()...)
	for _, d := range []time.Duration{time.Minute, time.Hour} {
		req, _ := rules.LikeTask(rules.Facts{Agent: "planner\x1b[31m", Capability: "MEDIA_STOP", Device: "living-room"}, rules.Allow,
			d, env.Clock.Now(), "why not", rules.Actor{By: "operator:ada", Via: "tui"})
		if _, err := src.store.Add(req, nil); err != nil {
			t.Fatal(err)
		}
	}
	env.Submit(env.Play("sized", mediaURI))
	p := likePane(t, env, src, Options{})
	pressAt(t, env, p, "l")
	views := map[string]func(){
		"chooser": func() {},
		"picked":  func() { pressAt(t, env, p, "1") },
		"rules":   func() { pressAt(t, env, p, "n"); pressAt(t, env, p, "R") },
		"revoke": func() {
			pressAt(t, env, p, "j")
			pressAt(t, env, p, "j")
			pressAt(t, env, p, "j")
			pressAt(t, env, p, "x")
		},
	}
	for _, name := range []string{"chooser", "picked", "rules", "revoke"} {
		views[name]()
		if name == "revoke" && p.dialogs.revoke == nil {
			t.Fatalf("no revoke prompt: %q", p.notice)
		}
		for w := 0; w <= 60; w++ {
			for h := 0; h <= 20; h++ {
				out := p.View(w, h)
				if h > 0 && strings.Count(out, "\n") != h-1 {
					t.Fatalf("%dx%d (%s): %d lines", w, h, name, strings.Count(out, "\n")+1)
				}
				if strings.ContainsAny(ansi.Strip(out), "\x1b\u202e") {
					t.Fatalf("%dx%d (%s): a control reached the screen: %q", w, h, name, out)
				}
			}
		}
	}
}
