package approvalspane

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

func styles() *themes.Styles {
	p, _ := themes.Palettes("dark")
	return themes.New(p)
}

func newPane(env *approvaltest.Env) *Pane {
	return New(Options{Queue: env.Queue, Operator: "operator:ada",
		Now: env.Clock.Now, Tick: 50 * time.Millisecond}, styles())
}

const secretURI = "https://ada:hunter2@media.example.com/live/stream.m3u8?api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc&quality=hd"

type session struct {
	t   *testing.T
	env *approvaltest.Env
	tm  *teatest.TestModel
}

func start(t *testing.T, env *approvaltest.Env, w, h int, ready string) *session {
	t.Helper()
	s, _ := startPane(t, env, w, h, ready)
	return s
}

// startPane is start, with the pane (for its Snapshot).
func startPane(t *testing.T, env *approvaltest.Env, w, h int, ready string) (*session, *Pane) {
	t.Helper()
	p := newPane(env)
	t.Cleanup(p.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	s := &session{t: t, env: env, tm: tm}
	s.wait(ready)
	return s, p
}

// waitState waits until the running pane's Snapshot satisfies ok.
func waitState(t *testing.T, p *Pane, ok func(Snapshot) bool) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		next := p.Changed()
		if ok(p.Snapshot()) {
			return
		}
		select {
		case <-next:
		case <-timeout.C:
			t.Fatalf("the pane never reached the state waited for: %+v", p.Snapshot())
		}
	}
}

func (s *session) wait(marker string) {
	s.t.Helper()
	teatest.WaitFor(s.t, s.tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(marker)) },
		teatest.WithDuration(10*time.Second))
}

func (s *session) waitFn(ok func([]byte) bool) {
	s.t.Helper()
	teatest.WaitFor(s.t, s.tm.Output(), ok, teatest.WithDuration(10*time.Second))
}

func (s *session) key(k string) {
	switch k {
	case "enter":
		s.tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	case "esc":
		s.tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	default:
		for _, r := range k {
			s.tm.Send(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}

func (s *session) final() string {
	s.t.Helper()
	if err := s.tm.Quit(); err != nil {
		s.t.Fatal(err)
	}
	m := s.tm.FinalModel(s.t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
	return ansi.Strip(m.Render())
}

func noSecrets(t *testing.T, out string) {
	t.Helper()
	for _, secret := range []string{"hunter2", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "test-token-0123456789abcdef"} {
		if strings.Contains(out, secret) {
			t.Fatalf("secret %q on screen:\n%s", secret, out)
		}
	}
}

func TestGoldenQueue(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("play-movie", "/media/movie.mkv"))
	env.Clock.Advance(3 * time.Minute)
	env.Submit(env.Play("play-stream", secretURI))
	env.Clock.Advance(2 * time.Minute)
	env.Submit(env.Manifest("pause-now", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, time.Hour))
	s := start(t, env, 100, 30, "effect")
	out := s.final()
	for _, want := range []string{"Pending approvals (3)", "Approvals  3 ", "expires in 5m", "expires in 10m", "SIM sim://living-room"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	noSecrets(t, out)
	golden.RequireEqual(t, out)
}

func TestGoldenPreviewScrolled(t *testing.T) {
	env := approvaltest.New(t)
	long := secretURI + "&" + strings.Repeat("segment=abcdefghij&", 40) + "end=1"
	env.Submit(env.Play("long-body", long))
	s := start(t, env, 100, 30, "more below")
	s.key("J")
	s.key("J")
	s.wait("lease ")
	out := s.final()
	if !strings.Contains(out, "agent:planner") || !strings.Contains(out, "jti-long-body") {
		t.Fatalf("scrolling did not reach the lease:\n%s", out)
	}
	noSecrets(t, out)
	golden.RequireEqual(t, out)
}

func TestGoldenConfirmDialog(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("confirm-me", "/media/movie.mkv"))
	s := start(t, env, 100, 30, "effect")
	env.Clock.Advance(time.Second) // past the arrival grace
	s.key("a")
	s.wait("Approve confirm-me?")
	out := s.final()
	golden.RequireEqual(t, out)
}

func TestGoldenDenyDialog(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("deny-me", "/media/movie.mkv"))
	s := start(t, env, 100, 30, "effect")
	env.Clock.Advance(time.Second)
	s.key("d")
	s.wait("Deny deny-me")
	env.Clock.Advance(time.Second)
	s.key("not tonight")
	out := s.final() // keys and the quit are handled in order: no wait needed
	if !strings.Contains(out, "not tonight") {
		t.Fatalf("typed reason missing:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenExpired(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("too-late", "/media/movie.mkv"))
	s := start(t, env, 100, 30, "effect")
	env.Clock.Advance(10*time.Minute + time.Second)
	s.wait("APPROVAL_TIMEOUT")
	out := s.final()
	if !strings.Contains(out, "too-late expired without a decision") {
		t.Fatalf("no expiry notice:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenDecidedElsewhere(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("raced", "/media/movie.mkv"))
	s := start(t, env, 100, 30, "effect")
	env.Clock.Advance(time.Second)
	s.key("a")
	s.wait("Approve raced?")
	// another process (a CLI) denies it first
	other := env.Open()
	if _, _, err := other.Decide(context.Background(), "raced", approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	s.wait("decided elsewhere")
	// y now reaches no dialog: it must not approve anything
	s.key("y")
	out := s.final()
	if strings.Contains(out, "Approve raced?") || !strings.Contains(out, "denied by operator:bob") {
		t.Fatalf("dialog did not close on a decision made elsewhere:\n%s", out)
	}
	if r, _ := env.Queue.Get("raced"); r.State != approval.Denied {
		t.Fatalf("state %s", r.State)
	}
	golden.RequireEqual(t, out)
}

// The approval path end to end through the real program: a, then y, runs
// the task on the sim device.
func TestApproveThroughTheScreen(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("go", "/media/movie.mkv"))
	s := start(t, env, 100, 30, "effect")
	env.Clock.Advance(time.Second)
	s.key("a")
	s.wait("Approve go?")
	env.Clock.Advance(time.Second)
	s.key("y")
	s.wait("approved and executed")
	s.final()
	if got := strings.Join(env.Events(), ","); got != "submitted,approved,executed" {
		t.Fatalf("audit %s", got)
	}
}

func TestConfirmDialogDefaultsToNo(t *testing.T) {
	d := confirmDialog{taskID: "t", previewHash: "h"}
	cases := []struct {
		name string
		key  tea.KeyPressMsg
		want any
	}{
		{"enter cancels", tea.KeyPressMsg{Code: tea.KeyEnter}, Close{}},
		{"esc cancels", tea.KeyPressMsg{Code: tea.KeyEscape}, Close{}},
		{"n cancels", tea.KeyPressMsg{Code: 'n', Text: "n"}, Close{}},
		{"space cancels", tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}, Close{}},
		{"y approves", tea.KeyPressMsg{Code: 'y', Text: "y"}, Approve{TaskID: "t", PreviewHash: "h"}},
	}
	for _, c := range cases {
		if got := d.Update(c.key); got != c.want {
			t.Errorf("%s: got %#v want %#v", c.name, got, c.want)
		}
	}
}

func TestDenyDialogNeedsAReason(t *testing.T) {
	d := newDenyDialog("t")
	if got := d.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); got != nil || d.err == "" {
		t.Fatalf("empty reason accepted: %#v", got)
	}
	for _, r := range "late" {
		d.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if got := d.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); got != (Deny{TaskID: "t", Reason: "late"}) {
		t.Fatalf("got %#v", got)
	}
	if got := d.Update(tea.KeyPressMsg{Code: tea.KeyEscape}); got != (Close{}) {
		t.Fatalf("esc: %#v", got)
	}
}

// A key typed just as a task slides under the cursor does nothing.
func TestArrivalGraceSwallowsKeys(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("first", "/media/a.mkv"))
	p := newPane(env)
	p.Update(p.reload(nil)())
	p.Update(p.loadView(p.queue.selID)())
	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if p.dialogs.confirm != nil {
		t.Fatal("a during the arrival grace opened the dialog")
	}
	env.Clock.Advance(GraceQuiet)
	p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if p.dialogs.confirm == nil || p.dialogs.confirm.taskID != "first" {
		t.Fatal("a after the grace did not open the dialog")
	}
}

// A manifest another program drops into inbox/new shows up in the running
// screen (the queue's feed sweeps it), and a bad one is moved to inbox/rejected with its reason.
func TestInboxDropShowsUpLive(t *testing.T) {
	env := approvaltest.New(t)
	s := start(t, env, 100, 30, "nothing waiting")
	dir := filepath.Join(env.InboxDir(), "new")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(env.Dir, "drop.tmp")
	os.WriteFile(tmp, env.Play("dropped", "/media/dropped.mkv"), 0o600)
	if err := os.Rename(tmp, filepath.Join(dir, "dropped.json")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tmp, []byte(`{"task_id":"broken","capability_id":"MEDIA_PLAY"}`), 0o600)
	os.Rename(tmp, filepath.Join(dir, "broken.json"))
	s.wait("dropped.mkv")
	out := s.final()
	if !strings.Contains(out, "Pending approvals (1)") {
		t.Fatalf("dropped task not listed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(env.InboxDir(), "rejected", "broken.json.reason.json")); err != nil {
		t.Fatalf("bad manifest not rejected: %v", err)
	}
}

// The pane renders at every size without panicking, even below the shell's minimum.
func TestViewAnySize(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("sized", secretURI))
	p := newPane(env)
	p.Update(p.reload(nil)())
	p.Update(p.loadView(p.queue.selID)())
	env.Clock.Advance(time.Second)
	for _, dialog := range []string{"", "a", "d"} {
		if dialog != "" {
			p.Update(tea.KeyPressMsg{Code: rune(dialog[0]), Text: dialog})
		}
		for w := 0; w <= 60; w++ {
			for h := 0; h <= 20; h++ {
				out := p.View(w, h)
				if h > 0 && strings.Count(out, "\n") != h-1 {
					t.Fatalf("%dx%d (%q dialog): %d lines", w, h, dialog, strings.Count(out, "\n")+1)
				}
			}
		}
		p.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	}
}
