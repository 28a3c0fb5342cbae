package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/rules"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	"github.com/vigil-dev/vigil/themes"
)

// paneDriver drives an Approvals pane without a program: keys at a clock
// that moves past the grace period before each, every command run and its
// messages fed back.
type paneDriver struct {
	t    *testing.T
	p    *approvalspane.Pane
	skew atomic.Int64
}

func (d *paneDriver) now() time.Time { return time.Now().Add(time.Duration(d.skew.Load())) }

func (d *paneDriver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		switch m := msg.(type) {
		case tea.BatchMsg:
			for _, c := range m {
				d.run(c)
			}
		case nil:
		default:
			d.run(d.p.Update(m))
		}
	case <-time.After(10 * time.Second):
		d.t.Fatal("a command of the pane never answered")
	}
}

func (d *paneDriver) press(keys ...string) {
	for _, k := range keys {
		d.skew.Add(int64(approvalspane.GraceMax + time.Millisecond))
		msg := tea.KeyPressMsg{Text: k}
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "ctrl+r":
			msg = tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
		default:
			msg.Code = []rune(k)[0]
		}
		d.run(d.p.Update(msg))
	}
}

func (d *paneDriver) screen() string { return ansi.Strip(d.p.View(160, 45)) }

// submitPlay submits a MEDIA_PLAY of uri on kitchen by agent:claude-home
// through the engine's queue.
func submitPlay(t *testing.T, eng *Engine, home, id, uri string) approval.Outcome {
	t.Helper()
	issuer, _, err := lease.LoadPrivateKey(home + "/keys/" + lease.IssuerKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Issue(issuer, lease.IssueOptions{Subject: "agent:claude-home", TaskID: id, Caps: []string{"MEDIA_PLAY"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": uri, "target_device": "kitchen"}})
	out, err := eng.Queue.Submit(context.Background(), raw, "cli")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// From the TUI over this home's engine: "allow like this" for 15 min adds
// one runtime rule and approves the task once, as the person; the next
// identical task submitted through the engine is decided by the rule; the
// Rules view lists it with its hit, and x revokes it with a reason
// (audited), after which the same task asks again.
func TestTUIAllowLikeThisThroughTheEngine(t *testing.T) {
	seqRuleIDs(t)
	home := rulesHome(t, "")
	app := NewApp()
	d := &paneDriver{t: t}
	app.HomeFlag, app.Out, app.Err, app.Now = home, &bytes.Buffer{}, &bytes.Buffer{}, d.now
	if err := app.Load(); err != nil {
		t.Fatal(err)
	}
	eng, err := app.Engine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	eng.Rules.Store().NewID = newRuleID
	const uri = "https://videos.example.org/show.mp4" // no config rule decides it
	if out := submitPlay(t, eng, home, "like-1", uri); out.State != string(approval.Pending) {
		t.Fatalf("like-1: %+v", out)
	}
	o := localApprovalsOptions(app, eng)
	o.Tick = 24 * time.Hour
	if o.Rules == nil {
		t.Fatal("the local TUI has no rule source")
	}
	pal, _ := themes.Palettes("dark")
	d.p = approvalspane.New(o, themes.New(pal))
	t.Cleanup(d.p.Close)
	d.press("ctrl+r")
	d.press("a", "l")
	if s := d.screen(); !strings.Contains(s, "allow MEDIA_PLAY by claude-home on kitchen from videos.example.org, until") {
		t.Fatalf("the chooser does not show the rule:\n%s", s)
	}
	d.press("1", "y")
	if n := d.p.Snapshot().Notice; !strings.Contains(n, "rule rt-t0001 added") || !strings.Contains(n, "like-1 approved and executed") {
		t.Fatalf("notice %q", n)
	}
	act, err := eng.Rules.Store().Active()
	if err != nil || len(act) != 1 || act[0].ID != "rt-t0001" {
		t.Fatalf("runtime rules %+v %v", act, err)
	}
	if r, _ := eng.Queue.Get("like-1"); r.State != approval.Done || !strings.HasPrefix(r.DecidedBy, "operator:") {
		t.Fatalf("like-1: %s by %s", r.State, r.DecidedBy)
	}
	if out := submitPlay(t, eng, home, "like-2", uri); out.State != string(approval.Done) {
		t.Fatalf("like-2: %+v", out)
	}
	if r, _ := eng.Queue.Get("like-2"); r.DecidedBy != "rule:rt-t0001" {
		t.Fatalf("like-2 decided by %q", r.DecidedBy)
	}

	d.press("R")
	s := d.screen()
	if !strings.Contains(s, "Rules (4)") || !strings.Contains(s, "kitchen-pause") {
		t.Fatalf("rules view:\n%s", s)
	}
	var row string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "rt-t0001") {
			row = l
		}
	}
	if !strings.Contains(row, "runtime") || !strings.Contains(row, "in 14m") || !strings.Contains(row, " 1  ") {
		t.Fatalf("runtime row %q:\n%s", row, s)
	}
	d.press("j", "j", "j", "x")
	d.press(strings.Split("enough for today", "")...)
	d.press("enter")
	if n := d.p.Snapshot().Notice; !strings.Contains(n, "rule rt-t0001 revoked") {
		t.Fatalf("notice %q", n)
	}
	if act, _ := eng.Rules.Store().Active(); len(act) != 0 {
		t.Fatalf("still active: %+v", act)
	}
	ev := ruleEvents(t, home, audit.EventRuleRevoked)
	if len(ev) != 1 || !strings.Contains(string(ev[0].Details), `"reason":"enough for today"`) || !strings.Contains(string(ev[0].Details), `"via":"tui"`) {
		t.Fatalf("audit %+v", ev)
	}
	if out := submitPlay(t, eng, home, "like-3", uri); out.State != string(approval.Pending) {
		t.Fatalf("like-3 after the revocation: %+v", out)
	}
}

// On a require_operator_key home the rule source itself refuses whoever
// is not an operator signed in over SSH with their key, whatever pane
// asks; an SSH operator adds and revokes.
func TestTUIRulesNeedAnOperatorKey(t *testing.T) {
	home := rulesHome(t, "\n[decisions]\nrequire_operator_key = true\n")
	app := NewApp()
	app.HomeFlag, app.Out, app.Err = home, &bytes.Buffer{}, &bytes.Buffer{}
	if err := app.Load(); err != nil {
		t.Fatal(err)
	}
	eng, err := app.Engine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	src := newTUIRules(app, eng)
	if o := localApprovalsOptions(app, eng); o.DecisionsRefused == "" {
		t.Fatal("the local pane may decide on a require_operator_key home")
	}
	req, err := rules.LikeTask(rules.Facts{Agent: "claude-home", Capability: "MEDIA_STOP", Device: "kitchen"}, rules.Allow,
		time.Hour, app.Now(), "test", rules.Actor{By: "operator:me", Via: approval.ViaTUI})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Add(context.Background(), req); err == nil {
		t.Fatal("the local TUI added a rule")
	}
	req.Actor = rules.Actor{By: "operator:ada", Via: approval.ViaSSH, Key: "SHA256:abc"}
	id, err := src.Add(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Revoke(context.Background(), id, "no", rules.Actor{By: "operator:me", Via: approval.ViaTUI}); err == nil {
		t.Fatal("the local TUI revoked a rule")
	}
	if err := src.Revoke(context.Background(), id, "done", req.Actor); err != nil {
		t.Fatal(err)
	}
	ev := ruleEvents(t, home, audit.EventRuleAdded, audit.EventRuleRevoked)
	if len(ev) != 2 || ev[0].Actor != "operator:ada" || !strings.Contains(string(ev[1].Details), `"key":"SHA256:abc"`) {
		t.Fatalf("audit %+v", ev)
	}
}
