package ui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
	"github.com/vigil-dev/vigil/panes"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	"github.com/vigil-dev/vigil/ui"
)

// The end-to-end checks below run the real vigil binary in a real terminal
// (tmux), because only a terminal shows what a control sequence that slipped
// through would do: retitle the window, write the clipboard (OSC 52), clear
// the screen. CI installs tmux; there a missing tmux fails the test. They
// wait for the screen they need (capture-pane), not for a time, and run in
// the full suite only (-short skips them).

type tmuxTerm struct {
	t      *testing.T
	socket string
	home   string
}

func TestMain(m *testing.M) { testbin.Main(m) }

// needTmux keeps a real-terminal test out of the fast lane and fails it
// under CI when tmux is missing.
func needTmux(t *testing.T) {
	t.Helper()
	testbin.FullRunOnly(t, "vigil in a real terminal (tmux)")
	testbin.Tool(t, "tmux")
}

// hostileAgent is an agent name carrying every kind of sequence that acts
// on a terminal: window titles (OSC 0, OSC 2), a clipboard write (OSC 52),
// a hyperlink (OSC 8), a screen clear (CSI), a DCS query, a C1 CSI, a
// carriage return, a backspace, NEL and a right-to-left override.
const hostileAgent = "agent:\x1b]0;PWNED-TITLE\x07\x1b]2;PWNED-TITLE2\x1b\\\x1b]52;c;UFdORUQtQ0xJUA==\x07" +
	"\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x1bP+q544e\x1b\\\u009b2J\rX\bY\u0085\u202eevil\x1bkPWNED-NAME\x1b\\"

// demoHome builds a demo home with pending tasks and writes the hostile
// agent name into one task's record, as an edit on disk would (submit
// refuses such names): the queue then shows that task as tampered, with
// the agent its submission logged.
func demoHome(t *testing.T, bin string) (home, hostileID string) {
	t.Helper()
	home = filepath.Join(t.TempDir(), "home")
	if out, err := exec.Command(bin, "demo", "--dir", home, "--no-open").CombinedOutput(); err != nil {
		t.Fatalf("vigil demo: %v\n%s", err, out)
	}
	hostileID = "demo-play-movie"
	p := filepath.Join(home, "tasks", hostileID, "record.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r["agent"] = hostileAgent
	r["token_jti"] = "jti\x1b]52;c;UFdORUQtSlRJ\x07"
	b, _ = json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return home, hostileID
}

func startTmux(t *testing.T, bin, home string, w, h int) *tmuxTerm {
	t.Helper()
	needTmux(t)
	tt := &tmuxTerm{t: t, socket: fmt.Sprintf("vigil-test-%d-%d", os.Getpid(), time.Now().UnixNano()), home: home}
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	// the clipboard is on, so an OSC 52 that got through would fill a buffer
	os.WriteFile(conf, []byte("set -g set-clipboard on\nset -g set-titles on\nset -g default-terminal xterm-256color\n"), 0o600)
	args := []string{"-L", tt.socket, "-f", conf, "new-session", "-d", "-s", "v", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h),
		"env", "VIGIL_HOME=" + home, "TERM=xterm-256color", bin}
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-L", tt.socket, "kill-server").Run() })
	// window options, set on the window (tmux 3.3 refuses them globally in a
	// config read before the first session): renames allowed, so an escape
	// that renamed the window would show; the pane stays after an exit, so a
	// crash is seen rather than a missing session
	tt.run("set-option", "-w", "-t", "v", "allow-rename", "on")
	tt.run("set-option", "-w", "-t", "v", "remain-on-exit", "on")
	return tt
}

func (tt *tmuxTerm) run(args ...string) string {
	tt.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tt.socket}, args...)...).CombinedOutput()
	if err != nil {
		tt.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (tt *tmuxTerm) keys(keys ...string) {
	tt.t.Helper()
	for _, k := range keys {
		tt.run("send-keys", "-t", "v", k)
	}
}

// approvals goes to the Approvals pane once the first screen is drawn:
// alt+3 switches panes from anywhere, a text field included.
func (tt *tmuxTerm) approvals() string {
	tt.t.Helper()
	tt.waitFor("Search")
	tt.keys("M-3")
	return tt.waitFor("Pending approvals")
}

func (tt *tmuxTerm) literal(s string) { tt.run("send-keys", "-t", "v", "-l", s) }

func (tt *tmuxTerm) screen() string { return tt.run("capture-pane", "-p", "-t", "v") }

func (tt *tmuxTerm) resize(w, h int) {
	tt.run("resize-window", "-t", "v", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h))
}

// waitFor waits until the screen shows want and returns the screen.
func (tt *tmuxTerm) waitFor(want string) string {
	tt.t.Helper()
	return tt.waitScreen(fmt.Sprintf("%q on the screen", want), func(s string) bool { return strings.Contains(s, want) })
}

// waitScreen waits until ok holds for the screen and returns the screen.
func (tt *tmuxTerm) waitScreen(what string, ok func(screen string) bool) string {
	tt.t.Helper()
	var s string
	testwait.For(tt.t, 15*time.Second, func() error {
		if s = tt.screen(); ok(s) {
			return nil
		}
		return fmt.Errorf("waiting for %s; the screen:\n%s", what, s)
	})
	return s
}

// waitTooSmall waits until Vigil has drawn its notice for a terminal of
// w×h, below the minimum size: the resize reached it.
func (tt *tmuxTerm) waitTooSmall(w, h int) {
	tt.t.Helper()
	want := panes.Truncate(fmt.Sprintf("terminal too small: %d×%d, need %d×%d", w, h, ui.MinWidth, ui.MinHeight), w)
	tt.waitScreen("the too-small notice at "+fmt.Sprint(w, "×", h), func(s string) bool {
		return strings.TrimRight(s, " \n") == want
	})
}

// inputRead waits until Vigil has read every key sent to its terminal
// (the terminal's input queue is empty), so what the test does next (a
// resize) reaches it after those keys.
func (tt *tmuxTerm) inputRead() {
	tt.t.Helper()
	tty := strings.TrimSpace(tt.run("display-message", "-p", "-t", "v", "#{pane_tty}"))
	f, err := os.OpenFile(tty, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tt.t.Fatalf("open the pane's terminal: %v", err)
	}
	defer f.Close()
	testwait.For(tt.t, 15*time.Second, func() error {
		n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
		if err == nil && n != 0 {
			err = fmt.Errorf("%d bytes of keys not read yet", n)
		}
		return err
	})
}

// pastGrace lets a person's pause longer than any grace period pass (a
// real binary runs on the real clock): a key sent next would act if the
// pane accepted keys at all. The pause itself is what the test is about.
func pastGrace() { time.Sleep(approvalspane.GraceMax + 100*time.Millisecond) }

// auditEvents reads the home's audit log events.
func auditEvents(t *testing.T, home string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var ev []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct {
			Event  string `json:"event"`
			TaskID string `json:"task_id"`
		}
		if json.Unmarshal(line, &e) == nil && e.Event != "" {
			ev = append(ev, e.Event+":"+e.TaskID)
		}
	}
	return ev
}

// TestTmuxHostileTextChangesNothingInTheTerminal: hostile text reaches the
// screen only as visible marks. An agent name edited into a task's record
// on disk never reaches it at all (the task is tampered and shows what was
// logged); text an agent may store (a memory) is drawn escaped, and the real
// terminal's title, window name and clipboard stay untouched.
func TestTmuxHostileTextChangesNothingInTheTerminal(t *testing.T) {
	needTmux(t)
	bin := testbin.Vigil(t)
	home, id := demoHome(t, bin)
	if out, err := exec.Command(bin, "--home", home, "memory", "add", "--text", "memo "+hostileAgent).CombinedOutput(); err != nil {
		t.Fatalf("memory add: %v\n%s", err, out)
	}
	tt := startTmux(t, bin, home, 160, 50)
	s := tt.approvals()
	if strings.Contains(s, "PWNED") || strings.Contains(s, id) {
		t.Fatalf("the edited record reached the queue:\n%s", s)
	}
	tt.keys("M-2")
	s = tt.waitFor(`\x1b]0;PWNED-TITLE\x07`)
	if !strings.Contains(s, `\u202eevil`) {
		t.Fatalf("the right-to-left override is not shown as a mark:\n%s", s)
	}
	tt.keys("M-1")
	tt.waitFor("Search")
	tt.keys("M-2")
	// back on the memories with the hostile row drawn again: tmux has
	// processed every byte of that frame
	tt.waitScreen("the memories with the hostile row", func(s string) bool {
		return strings.Contains(s, `\x1b]0;PWNED-TITLE\x07`)
	})
	title := strings.TrimSpace(tt.run("display-message", "-p", "-t", "v", "#{pane_title}"))
	name := strings.TrimSpace(tt.run("display-message", "-p", "-t", "v", "#{window_name}"))
	if strings.Contains(title, "PWNED") || strings.Contains(name, "PWNED") {
		t.Fatalf("the terminal obeyed the agent: title %q, window name %q", title, name)
	}
	if title != "Vigil" {
		t.Errorf("pane title %q, want Vigil's own", title)
	}
	if bufs := strings.TrimSpace(tt.run("list-buffers")); bufs != "" {
		t.Fatalf("the clipboard was written (OSC 52):\n%s", bufs)
	}
	if s = tt.screen(); !strings.Contains(s, "2 Memory") {
		t.Fatalf("the screen was cleared or garbled:\n%s", s)
	}
}

// At sizes from 1×1 up to just below the minimum (40×10) in either direction,
// the keys the issue names (3, j, a, y) decide nothing, and text typed while
// a deny dialog is hidden by a resize goes nowhere.
func TestTmuxNoDecisionWhileThePaneCannotBeSeen(t *testing.T) {
	needTmux(t)
	bin := testbin.Vigil(t)
	home, _ := demoHome(t, bin)
	tt := startTmux(t, bin, home, 120, 40)
	tt.approvals()
	pastGrace()
	for _, sz := range [][2]int{{1, 1}, {2, 2}, {10, 3}, {20, 6}, {39, 9}, {39, 40}, {120, 9}} {
		tt.resize(sz[0], sz[1])
		tt.waitTooSmall(sz[0], sz[1])
		tt.keys("3", "j", "a")
		pastGrace() // had a dialog opened, its grace period would have ended
		tt.keys("y", "d")
		pastGrace()
		tt.literal("typed into nothing")
		tt.keys("Enter")
		tt.inputRead()
	}
	tt.resize(120, 40)
	s := tt.waitFor("Pending approvals")
	if strings.Contains(s, "typed into nothing") || strings.Contains(s, "Approve ") || strings.Contains(s, "Deny ") {
		t.Fatalf("keys from the small sizes acted:\n%s", s)
	}
	// a deny dialog opened on a big screen, hidden by a resize: typing goes
	// nowhere (the pane, legible again, first has its grace period)
	pastGrace()
	tt.keys("d")
	tt.waitFor("reason:")
	pastGrace()
	tt.resize(20, 6)
	tt.waitTooSmall(20, 6)
	tt.literal("hidden words")
	tt.keys("Enter")
	tt.inputRead()
	tt.resize(120, 40)
	if s := tt.waitFor("reason:"); strings.Contains(s, "hidden words") {
		t.Fatalf("text typed while the dialog was hidden reached it:\n%s", s)
	}
	tt.keys("Escape")
	for _, ev := range auditEvents(t, home) {
		if strings.HasPrefix(ev, "approved:") || strings.HasPrefix(ev, "denied:") || strings.HasPrefix(ev, "executed:") {
			t.Fatalf("a decision was made: %s (all: %v)", ev, auditEvents(t, home))
		}
	}
}
