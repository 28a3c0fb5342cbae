package approvalspane

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// startNotifying runs the pane in a real program with [notify] terminal set
// as given; the pane's clock is the queue's.
func startNotifying(t *testing.T, env *approvaltest.Env, notify bool) (*teatest.TestModel, *Pane) {
	t.Helper()
	p := New(Options{Queue: env.Queue,
		Operator: "operator:ada", Now: env.Clock.Now, Tick: 50 * time.Millisecond, Notify: notify}, styles())
	t.Cleanup(p.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("effect")) },
		teatest.WithDuration(10*time.Second))
	return tm, p
}

// The TUI tells the person when a task arrives and when one is a minute from
// its deadline: the bell, then an OSC 9 desktop notification with masked,
// display-safe text — once each, and nothing for tasks already waiting at start.
func TestTerminalNotificationsOnArrivalAndNearDeadline(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("already-here", "/media/a.mkv"))
	tm, _ := startNotifying(t, env, true)
	var seen bytes.Buffer
	waitOut := func(want string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			seen.Write(b)
			return strings.Contains(seen.String(), want)
		}, teatest.WithDuration(10*time.Second))
	}
	env.Submit(env.Play("newcomer", "https://ada:hunter2@media.example.com/s.m3u8"))
	waitOut("\a\x1b]9;")
	env.Clock.Advance(9*time.Minute + 30*time.Second) // both tasks are now 30 s from the 10-minute deadline
	waitOut("expires in 30s\a")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	all := seen.String()
	if n := strings.Count(all, "\x1b]9;"); n != 3 {
		t.Fatalf("%d OSC 9 notifications, want 3 (one arrival, two near their deadline):\n%q", n, all)
	}
	if strings.Count(all, " asks to MEDIA_PLAY on living-room\a") != 1 {
		t.Fatalf("the arrival notification is not there once:\n%q", all)
	}
	if strings.Contains(all, "hunter2") {
		t.Fatal("a secret reached the terminal")
	}
}

func TestTerminalNotificationsOffSendNothing(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("before", "/media/a.mkv"))
	tm, p := startNotifying(t, env, false)
	env.Submit(env.Play("quiet", "/media/b.mkv"))
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		return strings.Contains(seen.String(), "quiet")
	}, teatest.WithDuration(10*time.Second))
	env.Clock.Advance(9*time.Minute + 30*time.Second)
	// two ticks later one has run wholly on the advanced clock: it would
	// have announced both tasks as near their deadline
	ticks := p.Snapshot().Ticks
	waitState(t, p, func(s Snapshot) bool { return s.Ticks >= ticks+2 })
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	io.Copy(&seen, tm.Output()) // what the ticks on the advanced clock wrote
	// the window title the program resets on quit ends in a bell too
	out := windowTitle.ReplaceAllString(seen.String(), "")
	if strings.Contains(out, "\x1b]9;") || strings.Contains(out, "\a") {
		t.Fatalf("notifications sent with terminal = false:\n%q", seen.String())
	}
}

// windowTitle is an OSC 2 window title sequence.
var windowTitle = regexp.MustCompile("\x1b\\]2;[^\a]*\a")
