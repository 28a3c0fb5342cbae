package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// seqRuleIDs makes rule ids rt-t0001, rt-t0002… for the test's duration.
func seqRuleIDs(t *testing.T) {
	var n atomic.Int64
	newRuleID = func() string { return fmt.Sprintf("rt-t%04d", n.Add(1)) }
	t.Cleanup(func() { newRuleID = nil })
}

// runAs runs the CLI in-process on the real clock, as id when given.
func runRulesAs(t *testing.T, home string, id *Identity, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err, app.In = &out, &errb, strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd, app.Identity = home, id
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	if err != nil {
		var ee *ExitError
		if !(errors.As(err, &ee) && ee.Quiet) {
			fmt.Fprintln(&errb, "vigil: "+err.Error())
		}
	}
	return out.String(), errb.String(), ExitCode(err)
}

func ruleEvents(t *testing.T, home string, events ...string) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	audit.Scan(filepath.Join(home, "audit.log"), 0, func(l audit.Line) bool {
		for _, e := range events {
			if l.Entry.Event == e {
				out = append(out, l.Entry)
			}
		}
		return true
	})
	return out
}

func listRules(t *testing.T, home string) map[string]ruleJSON {
	t.Helper()
	out, errs, code := runRulesAs(t, home, nil, "rules", "list", "--json")
	if code != 0 {
		t.Fatalf("rules list: exit %d %s", code, errs)
	}
	var list []ruleJSON
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err, out)
	}
	m := map[string]ruleJSON{}
	for _, r := range list {
		m[r.ID] = r
	}
	return m
}

func TestRulesAddListRevoke(t *testing.T) {
	seqRuleIDs(t)
	home := rulesHome(t, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--decision", "allow", "--device", "kitchen", "--for", "1h", "--reason", "x"}, "--cap: an allow rule must name what it allows"},
		{[]string{"--decision", "deny", "--reason", "x"}, "say how long the rule lives: --for DUR or --until TIME"},
		{[]string{"--decision", "deny", "--for", "31d", "--reason", "x"}, "at most 30 days"},
		{[]string{"--decision", "deny", "--for", "soon", "--reason", "x"}, "--for: must be a positive duration"},
		{[]string{"--decision", "deny", "--until", "2020-01-01T00:00:00Z", "--reason", "x"}, "--for/--until: must be after now"},
		{[]string{"--decision", "deny", "--for", "1h"}, "--reason: must say why"},
		{[]string{"--decision", "maybe", "--for", "1h", "--reason", "x"}, "--decision: must be allow, ask or deny"},
		{[]string{"--decision", "deny", "--media-host", "Ads.Example.com", "--for", "1h", "--reason", "x"}, "--media-host[0]: must be lower-case"},
		{[]string{"--decision", "deny", "--for", "1h", "--until", "2030-01-01T00:00:00Z", "--reason", "x"}, "none of the others can be"},
		{[]string{"--decision", "deny", "--device", "kitchn", "--for", "1h", "--reason", "x"}, `--device[0]: "kitchn" matches no configured device`},
		{[]string{"--decision", "deny", "--cap", "MEDIA_PAUS", "--for", "1h", "--reason", "x"}, `--cap[0]: "MEDIA_PAUS" matches no capability`},
	} {
		_, errs, code := runRulesAs(t, home, nil, append([]string{"rules", "add"}, c.args...)...)
		if code != ExitBadInput || !strings.Contains(errs, c.want) {
			t.Errorf("rules add %v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	if ev := ruleEvents(t, home, audit.EventRuleAdded); len(ev) != 0 {
		t.Fatalf("refused adds were audited: %+v", ev)
	}

	before := time.Now()
	out, errs, code := runRulesAs(t, home, nil, "rules", "add", "--decision", "deny", "--cap", "MEDIA_PLAY", "--device", "kitchen",
		"--media-host", "*.ads.example.net", "--for", "2h", "--reason", "no ads tonight", "--json")
	if code != 0 {
		t.Fatalf("rules add: exit %d %s", code, errs)
	}
	var added ruleJSON
	if err := json.Unmarshal([]byte(out), &added); err != nil {
		t.Fatal(err, out)
	}
	if added.ID != "rt-t0001" || added.Source != "runtime" || added.Decision != "deny" || added.Reason != "no ads tonight" ||
		!strings.HasPrefix(added.CreatedBy, "operator:") || added.ExpiresAt == nil || !strings.HasPrefix(added.Hash, "sha256:") {
		t.Fatalf("added %+v", added)
	}
	if d := added.ExpiresAt.Sub(before); d < 2*time.Hour-2*time.Second || d > 2*time.Hour+2*time.Second {
		t.Fatalf("expires %s, want 2h from %s", added.ExpiresAt, before)
	}
	list := listRules(t, home)
	if len(list) != 4 || list["rt-t0001"].Hash != added.Hash || list["rt-t0001"].CreatedBy != added.CreatedBy || list["kitchen-pause"].Source != "config" {
		t.Fatalf("list: %+v", list)
	}
	text, _, _ := runRulesAs(t, home, nil, "rules", "list")
	if !strings.Contains(text, "rt-t0001") || !strings.Contains(text, "runtime") || !strings.Contains(text, "HITS") {
		t.Fatalf("list text:\n%s", text)
	}

	// rules test explains with the runtime rules too
	mf := manifest(t, home, "agent:claude-home", "MEDIA_PLAY", `{"media_uri":"https://x.ads.example.net/a.mp4","target_device":"kitchen"}`, nil)
	if out, errs, code := runRulesAs(t, home, nil, "rules", "test", mf); code != 0 || !strings.Contains(out, "decision: deny\nby rule:  rt-t0001 (runtime, sha256:") {
		t.Fatalf("rules test: exit %d\n%s%s", code, out, errs)
	}

	// the add's audit entry: who, what, the hash, the expiry, the reason
	ents := ruleEvents(t, home, audit.EventRuleAdded)
	if len(ents) != 1 || ents[0].Target != "rule:rt-t0001" || ents[0].Actor != added.CreatedBy {
		t.Fatalf("rule_added entries: %+v", ents)
	}
	var d map[string]any
	json.Unmarshal(ents[0].Details, &d)
	if d["hash"] != added.Hash || d["reason"] != "no ads tonight" || d["via"] != approval.ViaCLI ||
		d["expires_at"] != added.ExpiresAt.Format(time.RFC3339) || d["decision"] != "deny" {
		t.Fatalf("rule_added details: %v", d)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"kitchen-pause", "--reason", "x"}, ExitBadInput, "is a rule in"},
		{[]string{"rt-nope", "--reason", "x"}, ExitBadInput, "not an active runtime rule"},
		{[]string{"../config", "--reason", "x"}, ExitBadInput, "not an active runtime rule"},
		{[]string{"rt-t0001"}, ExitBadInput, "--reason is required"},
	} {
		_, errs, code := runRulesAs(t, home, nil, append([]string{"rules", "revoke"}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("rules revoke %v: exit %d %q, want %d %q", c.args, code, errs, c.code, c.want)
		}
	}
	out, errs, code = runRulesAs(t, home, nil, "rules", "revoke", "rt-t0001", "--reason", "the match is over", "--json")
	if code != 0 || !strings.Contains(out, `"id": "rt-t0001"`) || !strings.Contains(out, `"active": false`) {
		t.Fatalf("revoke: exit %d %s %s", code, out, errs)
	}
	if _, ok := listRules(t, home)["rt-t0001"]; ok {
		t.Fatal("a revoked rule is still listed")
	}
	rev := ruleEvents(t, home, audit.EventRuleRevoked)
	if len(rev) != 1 || rev[0].Target != "rule:rt-t0001" || !strings.Contains(string(rev[0].Details), `"reason":"the match is over"`) {
		t.Fatalf("rule_revoked: %+v", rev)
	}
	if _, errs, code := runRulesAs(t, home, nil, "rules", "revoke", "rt-t0001", "--reason", "again"); code != ExitBadInput {
		t.Fatalf("revoking twice: exit %d %s", code, errs)
	}
}

func TestRulesAddRevokeNeedAnOperator(t *testing.T) {
	seqRuleIDs(t)
	home := rulesHome(t, "\n[decisions]\nrequire_operator_key = true\n")
	want := "Decisions on this home are made by an operator over SSH"
	_, errs, code := runRulesAs(t, home, nil, "rules", "add", "--decision", "deny", "--cap", "MEDIA_PLAY", "--for", "1h", "--reason", "x")
	if code != ExitCheck || !strings.Contains(errs, "rules add: "+want) {
		t.Fatalf("add as this account: exit %d %q", code, errs)
	}
	ada := &Identity{Name: "ada", Via: approval.ViaSSH, Key: "SHA256:abc"}
	out, errs, code := runRulesAs(t, home, ada, "rules", "add", "--decision", "deny", "--cap", "MEDIA_PLAY", "--for", "1h", "--reason", "x")
	if code != 0 || !strings.Contains(out, "added rule rt-t0001") {
		t.Fatalf("add as an SSH operator: exit %d %q", code, errs)
	}
	_, errs, code = runRulesAs(t, home, nil, "rules", "revoke", "rt-t0001", "--reason", "x")
	if code != ExitCheck || !strings.Contains(errs, "rules revoke: "+want) {
		t.Fatalf("revoke as this account: exit %d %q", code, errs)
	}
	if _, errs, code = runRulesAs(t, home, ada, "rules", "revoke", "rt-t0001", "--reason", "x"); code != 0 {
		t.Fatalf("revoke as an SSH operator: exit %d %q", code, errs)
	}
	ents := ruleEvents(t, home, audit.EventRuleAdded, audit.EventRuleRevoked)
	if len(ents) != 2 {
		t.Fatalf("entries: %+v", ents)
	}
	for _, e := range ents {
		if e.Actor != "operator:ada" || !strings.Contains(string(e.Details), `"key":"SHA256:abc"`) || !strings.Contains(string(e.Details), `"via":"ssh"`) {
			t.Fatalf("entry without the operator's key: %+v", e)
		}
	}
}

// stopManifest is a MEDIA_STOP manifest for id on the living room,
// leased by the home's issuer to agent:claude-home.
func stopManifest(t *testing.T, home, id string) []byte {
	t.Helper()
	k, _, err := lease.LoadPrivateKey(filepath.Join(home, "keys", lease.IssuerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Issue(k, lease.IssueOptions{Subject: "agent:claude-home", TaskID: id, Caps: []string{"MEDIA_STOP"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Appendf(nil, `{"task_id":%q,"capability_id":"MEDIA_STOP","inputs":{"target_device":"living-room"},"lease":%q}`, id, tok)
}

// TestRulesQueueSeesRuntimeRules: a queue opened before a rule was added
// (vigil serve runs for days) decides the next submission by it; after
// `rules revoke` returns, no submission is decided by it; hits count the
// decisions it made.
func TestRulesQueueSeesRuntimeRules(t *testing.T) {
	home := rulesHome(t, "")
	rulesQueueSees(t, home, func(args ...string) string {
		t.Helper()
		out, errs, code := runRulesAs(t, home, nil, args...)
		if code != 0 {
			t.Fatalf("vigil %v: %s", args, errs)
		}
		return out
	})
}

// TestRulesQueueSeesAnotherProcess: the same with `vigil rules add` and
// `revoke` run by the vigil binary, processes of their own.
func TestRulesQueueSeesAnotherProcess(t *testing.T) {
	testbin.FullRunOnly(t, "builds and runs the vigil binary")
	bin := testbin.Vigil(t)
	home := rulesHome(t, "")
	rulesQueueSees(t, home, func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, append([]string{"--home", home}, args...)...)
		c.Env = append(os.Environ(), "VIGIL_HOME="+home)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("vigil %v: %v\n%s", args, err, out)
		}
		return string(out)
	})
}

// rulesQueueSees: a queue opened before a rule was added (vigil serve
// runs for days) decides the next submission by it; after `rules revoke`
// returns, no submission is decided by it; hits count its decisions. vigil
// runs a command as another App or process and returns its stdout.
func rulesQueueSees(t *testing.T, home string, vigil func(args ...string) string) {
	t.Helper()
	ctx := context.Background()
	eng := engineOn(t, home)
	submit := func(id string) approval.Outcome {
		t.Helper()
		out, err := eng.Queue.Submit(ctx, stopManifest(t, home, id), "test")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := submit("t-before"); out.State != string(approval.Pending) {
		t.Fatalf("no rule yet: %+v", out)
	}
	var added ruleJSON
	if err := json.Unmarshal([]byte(vigil("rules", "add", "--decision", "deny", "--agent", "claude-home", "--cap", "MEDIA_STOP",
		"--device", "living-room", "--for", "15m", "--reason", "leave the living room alone", "--json")), &added); err != nil {
		t.Fatal(err)
	}
	id := added.ID
	out := submit("t-during")
	if out.State != string(approval.Denied) || out.Error == nil || !strings.Contains(out.Error.Message, id) {
		t.Fatalf("the open queue did not apply the added rule %s: %+v", id, out)
	}
	rec, _ := eng.Queue.Get("t-during")
	if rec.DecidedBy != "rule:"+id || rec.DecidedVia != approval.ViaRule {
		t.Fatalf("decided by %q via %q", rec.DecidedBy, rec.DecidedVia)
	}
	// decided by the rule, so never by the person too
	if _, _, err := eng.Queue.Decide(ctx, "t-during", approval.Decision{Approve: true, By: "operator:test", Via: approval.ViaCLI}); err == nil {
		t.Fatal("the person approved a task a rule had denied")
	}
	if l := listRules(t, home); l[id].Hits != 1 || rec.DecidedKey != l[id].Hash || added.Hash != l[id].Hash {
		t.Fatalf("hits %d, hash %q vs recorded %q", l[id].Hits, l[id].Hash, rec.DecidedKey)
	}
	vigil("rules", "revoke", id, "--reason", "done")
	if out := submit("t-after"); out.State != string(approval.Pending) {
		t.Fatalf("a task submitted after revoke returned was decided: %+v", out)
	}
}

// TestRulesListWithoutStore: a home where no rule was ever added lists
// the config's rules and creates nothing.
func TestRulesListWithoutStore(t *testing.T) {
	home := rulesHome(t, "")
	if l := listRules(t, home); len(l) != 3 {
		t.Fatalf("%+v", l)
	}
	if _, err := os.Stat(filepath.Join(home, "rules")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("listing made the store: %v", err)
	}
}

// TestRulesRevokeRacingSubmissions submits tasks one after another while
// the rule that allows them is revoked by another App: every task
// submitted after revoke returned waits for the person, and each task has
// exactly one decision, the rule's or the person's.
func TestRulesRevokeRacingSubmissions(t *testing.T) {
	seqRuleIDs(t)
	home := rulesHome(t, "")
	ctx := context.Background()
	eng := engineOn(t, home)
	if _, errs, code := runRulesAs(t, home, nil, "rules", "add", "--decision", "deny", "--cap", "MEDIA_STOP",
		"--for", "15m", "--reason", "race"); code != 0 {
		t.Fatalf("add: %s", errs)
	}
	var revokedAt atomic.Int64 // the submission count when revoke returned
	revokedAt.Store(-1)
	var submitted atomic.Int64
	type sub struct {
		id          string
		afterRevoke bool
		state       string
	}
	results := make(chan sub, 200)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			after := revokedAt.Load() >= 0
			id := fmt.Sprintf("t-%03d", i)
			out, err := eng.Queue.Submit(ctx, stopManifest(t, home, id), "test")
			if err != nil {
				t.Error(err)
				return
			}
			submitted.Add(1)
			results <- sub{id, after, out.State}
			if after && i > 0 && revokedAt.Load()+5 < int64(i) {
				return
			}
		}
	}()
	testwait.Until(t, 10*time.Second, "submissions", func() bool { return submitted.Load() >= 3 })
	if _, errs, code := runRulesAs(t, home, nil, "rules", "revoke", "rt-t0001", "--reason", "race"); code != 0 {
		t.Fatalf("revoke: %s", errs)
	}
	revokedAt.Store(submitted.Load())
	<-done
	close(results)
	for r := range results {
		switch {
		case r.afterRevoke && r.state != string(approval.Pending):
			t.Errorf("%s, submitted after revoke returned, is %s", r.id, r.state)
		case r.state == string(approval.Pending):
			if _, _, err := eng.Queue.Decide(ctx, r.id, approval.Decision{Approve: true, By: "operator:test", Via: approval.ViaCLI}); err != nil {
				t.Errorf("%s: the person's approval: %v", r.id, err)
			}
		default:
			if _, _, err := eng.Queue.Decide(ctx, r.id, approval.Decision{Approve: true, By: "operator:test", Via: approval.ViaCLI}); err == nil {
				t.Errorf("%s: decided by the rule and by the person", r.id)
			}
		}
	}
	decisions := map[string]int{}
	for _, e := range ruleEvents(t, home, audit.EventApproved, audit.EventDenied) {
		decisions[e.TaskID]++
	}
	for id, n := range decisions {
		if n != 1 {
			t.Errorf("%s has %d decision entries", id, n)
		}
	}
}

// engineOn opens home's engine as a process of its own would: its queue
// stays open while other Apps and processes change the rules.
func engineOn(t *testing.T, home string) *Engine {
	t.Helper()
	app := NewApp()
	app.Out, app.Err, app.In = &bytes.Buffer{}, &bytes.Buffer{}, strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd, app.HomeFlag = home, home
	if err := app.Load(); err != nil {
		t.Fatal(err)
	}
	eng, err := app.Engine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return eng
}
