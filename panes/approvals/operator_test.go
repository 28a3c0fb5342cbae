package approvalspane

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// operatorEnv is a home whose [decisions] require_operator_key is set.
func operatorEnv(t *testing.T) *approvaltest.Env {
	t.Helper()
	env := approvaltest.New(t)
	env.RequireOperatorKey = true
	env.Queue = env.Open()
	return env
}

// startWith runs the pane built from o (its queue and clock from env) in
// the root, as start does.
func startWith(t *testing.T, env *approvaltest.Env, o Options, w, h int, ready string) (*session, *Pane) {
	t.Helper()
	o.Queue, o.Now, o.Tick = env.Queue, env.Clock.Now, 50*time.Millisecond
	if o.Operator == "" {
		o.Operator = "operator:ada"
	}
	p := New(o, styles())
	t.Cleanup(p.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	s := &session{t: t, env: env, tm: tm}
	s.wait(ready)
	return s, p
}

const sshKey = "SHA256:2ZlqVq0i3cG2LpRk8YtQ8m3Yd0xJvS6f1qW3e5r7t9u"

// An SSH session's pane decides as the operator who signed in, via "ssh",
// with their key's fingerprint: on a home that takes decisions only from
// an operator's key, both its approval and its denial go through and are
// recorded so, in the record and in the audit entry.
func TestSSHPaneDecidesWithTheOperatorsKey(t *testing.T) {
	env := operatorEnv(t)
	env.Submit(env.Play("by-ssh-1", "/media/a.mkv"))
	env.Submit(env.Play("by-ssh-2", "/media/b.mkv"))
	o := Options{Via: approval.ViaSSH, Key: sshKey}
	s, p := startWith(t, env, o, 100, 30, "")
	s.waitFn(func(b []byte) bool {
		return bytes.Contains(b, []byte("deciding as operator:ada over SSH")) && bytes.Contains(b, []byte("effect"))
	})
	env.Clock.Advance(GraceMax)
	s.key("d")
	s.wait("Deny by-ssh-1")
	env.Clock.Advance(GraceMax)
	s.key("not now")
	s.key("enter")
	waitState(t, p, func(s Snapshot) bool { return strings.Contains(s.Notice, "by-ssh-1 denied") })
	s.final()
	// a second session, as another SSH login of the same operator
	s, p = startWith(t, env, o, 100, 30, "effect")
	env.Clock.Advance(GraceMax)
	s.key("a")
	s.wait("Approve by-ssh-2?")
	env.Clock.Advance(GraceMax)
	s.key("y")
	waitState(t, p, func(s Snapshot) bool { return strings.Contains(s.Notice, "by-ssh-2 approved and executed") })
	s.final()
	for _, id := range []string{"by-ssh-1", "by-ssh-2"} {
		r, err := env.Queue.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if r.DecidedBy != "operator:ada" || r.DecidedVia != approval.ViaSSH || r.DecidedKey != sshKey {
			t.Errorf("%s decided by %q via %q with key %q", id, r.DecidedBy, r.DecidedVia, r.DecidedKey)
		}
	}
	keys := map[string]string{}
	if _, err := audit.Scan(env.AuditPath(), 0, func(l audit.Line) bool {
		if l.Entry.Event == audit.EventApproved || l.Entry.Event == audit.EventDenied {
			keys[l.Entry.TaskID] = l.Entry.Actor + " " + string(l.Entry.Details)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"by-ssh-1", "by-ssh-2"} {
		if e := keys[id]; !strings.HasPrefix(e, "operator:ada ") || !strings.Contains(e, `"via":"ssh"`) || !strings.Contains(e, sshKey) {
			t.Errorf("%s's audit entry %q lacks the operator, via ssh or the key", id, e)
		}
	}
}

// refusal is what the local TUI is given on a home whose decisions need an
// operator's key: the config's words, as `vigil approve` says them.
func refusal() string {
	c := config.Default()
	c.Decisions.RequireOperatorKey = true
	c.SSH.Advertise = "vigil@gate.example:2222"
	c.Operators = []config.OperatorConfig{{Name: "ada"}}
	return c.DecisionsRefusal()
}

// On such a home the local pane offers no a or d (not in the footer, not
// in the ? overlay), says how decisions are made instead, and answers a
// and d with that text: no prompt opens, nothing is decided.
func TestGoldenDecisionsRefused(t *testing.T) {
	env := operatorEnv(t)
	env.Submit(env.Play("play-movie", "/media/movie.mkv"))
	s, p := startWith(t, env, Options{DecisionsRefused: refusal()}, 100, 30, "effect")
	env.Clock.Advance(GraceMax)
	for _, b := range p.ShortHelp() {
		if k := b.Help().Key; k == "a" || k == "d" {
			t.Errorf("the footer offers %q", k)
		}
	}
	for _, g := range p.FullHelp() {
		for _, b := range g {
			if k := b.Help().Key; k == "a" || k == "d" {
				t.Errorf("the ? overlay lists %q (%s)", k, b.Help().Desc)
			}
		}
	}
	s.key("a")
	waitState(t, p, func(s Snapshot) bool { return s.Notice == refusal() })
	s.key("d")
	s.key("x") // were a prompt open, this would be typed or answer it
	out := s.final()
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"ssh -p 2222 vigil@gate.example", "this account can read tasks but not decide"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the pane does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Approve play-movie?") || strings.Contains(out, "Deny play-movie") || strings.Contains(out, "approve…") {
		t.Fatalf("a decision was offered:\n%s", out)
	}
	if got := strings.Join(env.Events(), ","); got != "submitted" {
		t.Fatalf("audit %s", got)
	}
	golden.RequireEqual(t, out)
}

// The refusal is said before anything is pressed, whatever the queue
// holds; an empty queue does not invite a decision either.
func TestDecisionsRefusedEmptyQueue(t *testing.T) {
	env := operatorEnv(t)
	p := loadedPane(t, env)
	p.o.DecisionsRefused, p.refused = refusal(), refusal()
	out := strings.Join(strings.Fields(p.View(60, 20)), " ")
	if !strings.Contains(out, "this account can read tasks but not decide") || strings.Contains(out, "to approve or deny") {
		t.Fatalf("empty queue on a refused home:\n%s", out)
	}
}

// A pane that was not told (a local TUI on a home whose config changed
// since it started) gets approval.ErrOperatorKeyRequired from the engine:
// it says so plainly, the task stays pending, and a and d are no longer
// offered.
func TestEngineRefusalStopsOfferingDecisions(t *testing.T) {
	env := operatorEnv(t)
	env.Submit(env.Play("local-try", "/media/a.mkv"))
	s, p := startWith(t, env, Options{}, 100, 30, "effect")
	env.Clock.Advance(GraceMax)
	s.key("a")
	s.wait("Approve local-try?")
	env.Clock.Advance(GraceMax)
	s.key("y")
	waitState(t, p, func(s Snapshot) bool { return strings.Contains(s.Notice, "local-try was not decided") })
	waitState(t, p, func(s Snapshot) bool { return !s.Busy && s.Pending == 1 })
	s.key("d")
	out := s.final()
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "operator over SSH") {
		t.Errorf("the refusal does not say how decisions are made:\n%s", out)
	}
	if strings.Contains(out, "Deny local-try") || strings.Contains(out, "approve…") {
		t.Errorf("a decision is still offered after the engine refused it:\n%s", out)
	}
	if r, _ := env.Queue.Get("local-try"); r.State != approval.Pending {
		t.Fatalf("state %s, want pending", r.State)
	}
	if got := strings.Join(env.Events(), ","); got != "submitted" {
		t.Fatalf("audit %s", got)
	}
}
