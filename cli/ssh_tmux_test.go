package cli

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
)

// sshScreen is an operator's `ssh -t` session in a detached tmux window of
// a given size.
type sshScreen struct {
	t    *testing.T
	tm   func(args ...string) (string, error)
	name string
}

// openScreen opens key's interactive session in tmux at w×h.
func (s *sshServe) openScreen(tm func(args ...string) (string, error), name string, key sshKey, w, h int) *sshScreen {
	s.t.Helper()
	argv := append([]string{"new-session", "-d", "-s", name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h),
		"env", "HOME=" + s.t.TempDir(), "TERM=xterm-256color"}, s.argv(key, []string{"-t"})...)
	if out, err := tm(argv...); err != nil {
		s.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return &sshScreen{t: s.t, tm: tm, name: name}
}

func (c *sshScreen) screen() string {
	out, _ := c.tm("capture-pane", "-p", "-t", c.name)
	return out
}

func (c *sshScreen) keys(keys ...string) {
	c.t.Helper()
	if out, err := c.tm(append([]string{"send-keys", "-t", c.name}, keys...)...); err != nil {
		c.t.Fatalf("send-keys: %v %s", err, out)
	}
}

func (c *sshScreen) waitFor(what string, cond func(string) bool) string {
	c.t.Helper()
	var last string
	testwait.For(c.t, 20*time.Second, func() error {
		if last = c.screen(); !cond(last) {
			return fmt.Errorf("%s: waiting for %s; screen:\n%s", c.name, what, last)
		}
		return nil
	})
	return last
}

func newTmux(t *testing.T) func(args ...string) (string, error) {
	tmux := testbin.Tool(t, "tmux")
	sock := fmt.Sprintf("vigil-ssh-test-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { tm("kill-server") })
	return tm
}

// The Approvals screen over SSH, in a real terminal through the real ssh
// client: each session at its own size, live on the serve process's queue,
// and the gate rules hold as locally: a key typed right after the prompt
// opens is swallowed (grace period), the approval names the preview hash
// shown, and the decision is the operator's, via ssh, with their key.
func TestSSHScreenDecidesWithTheGateRules(t *testing.T) {
	testbin.FullRunOnly(t, "the TUI over SSH in a real terminal (tmux)")
	h := newCLIHome(t)
	keys := h.addOperators("", "ada", "bob")
	h.must(0, "submit", h.manifest("tv", "1h"))
	hash := h.previewJSON("tv")["preview_hash"].(string)
	s := h.serveSSH()
	tm := newTmux(t)
	ada := s.openScreen(tm, "ada", keys["ada"], 100, 30)
	bob := s.openScreen(tm, "bob", keys["bob"], 80, 24)
	for _, c := range []*sshScreen{ada, bob} {
		c.waitFor("the pending task", func(s string) bool { return strings.Contains(s, "tv MEDIA_PLAY") })
	}
	// each screen is drawn at its own terminal's width
	if !strings.Contains(ada.screen(), strings.Repeat("─", 100)) || strings.Contains(bob.screen(), strings.Repeat("─", 81)) ||
		!strings.Contains(bob.screen(), strings.Repeat("─", 80)) {
		t.Fatalf("sizes:\n%s\n%s", ada.screen(), bob.screen())
	}
	// a window resized is redrawn at its new width
	if out, err := tm("resize-window", "-t", "bob", "-x", "90", "-y", "24"); err != nil {
		t.Fatalf("resize-window: %v %s", err, out)
	}
	bob.waitFor("the new width", func(s string) bool {
		return strings.Contains(s, strings.Repeat("─", 90)) && !strings.Contains(s, strings.Repeat("─", 91))
	})
	if !strings.Contains(ada.screen(), "preview "+hash[:12]) {
		t.Fatalf("the screen does not show the preview hash %s:\n%s", hash[:12], ada.screen())
	}

	// a task that just appeared under the cursor takes no a (grace period)
	time.Sleep(approvalspane.GraceMax + 200*time.Millisecond) // the real grace period is the subject
	// a and y typed together: the prompt's grace period swallows the y
	ada.keys("a", "y")
	ada.waitFor("the prompt", func(s string) bool { return strings.Contains(s, "y approve") })
	time.Sleep(approvalspane.GraceQuiet + 200*time.Millisecond) // the real grace period is the subject
	if list := h.must(0, "pending"); !strings.Contains(list, "tv") || h.journal() != "" {
		t.Fatalf("a y typed with the a approved it:\n%s", list)
	}
	ada.keys("y")
	ada.waitFor("the outcome", func(s string) bool { return strings.Contains(s, "tv approved and executed") })
	// bob's screen follows without a key pressed
	bob.waitFor("the task leaving", func(s string) bool { return strings.Contains(s, "Pending approvals (0)") })

	e := h.decision("tv")
	if e.Actor != "operator:ada" || e.Details["via"] != "ssh" || e.Details["key"] != keys["ada"].fingerprint || e.Details["preview_hash"] != hash {
		t.Fatalf("decision entry: %+v (key %s, hash %s)", e, keys["ada"].fingerprint, hash)
	}
	if n := strings.Count(h.journal(), "tv.mkv"); n != 1 {
		t.Fatalf("the device ran it %d times", n)
	}
	// the decided list says who, how
	bob.keys("v")
	bob.waitFor("the decided list", func(s string) bool { return strings.Contains(s, "operator:ada via ssh") })

	// q ends the session; stopping serve ends the screens still open
	ada.keys("q")
	gone := func(name string) func() error {
		return func() error {
			if out, err := tm("has-session", "-t", name); err == nil {
				return fmt.Errorf("%s's session is still open: %s", name, out)
			}
			return nil
		}
	}
	testwait.For(t, 10*time.Second, gone("ada"))
	s.stop()
	testwait.For(t, 10*time.Second, gone("bob"))
}

// [ssh] idle_timeout closes a screen nobody types in, and says so; each
// key typed restarts the wait.
func TestSSHIdleScreenCloses(t *testing.T) {
	testbin.FullRunOnly(t, "waits out a real idle timeout in a real terminal (tmux)")
	h := newCLIHome(t)
	ada := h.addOperators("[ssh]\nidle_timeout = \"1s\"", "ada")["ada"]
	s := h.serveSSH()
	tm := newTmux(t)
	c := s.openScreen(tm, "ada", ada, 100, 30)
	if out, err := tm("set-option", "-t", "ada", "remain-on-exit", "on"); err != nil {
		t.Fatalf("remain-on-exit: %v %s", err, out)
	}
	c.waitFor("the screen", func(s string) bool { return strings.Contains(s, "Approvals") })
	typing := time.Now()
	for time.Since(typing) < 2500*time.Millisecond {
		time.Sleep(300 * time.Millisecond) // the passing of real time is the subject
		c.keys("j")
		if dead, _ := tm("display-message", "-p", "-t", "ada", "#{pane_dead}"); strings.TrimSpace(dead) == "1" {
			t.Fatalf("closed while typing, after %s:\n%s", time.Since(typing), c.screen())
		}
	}
	stopped := time.Now()
	// the screen's last line may scroll into the history when the pane dies
	testwait.For(t, 20*time.Second, func() error {
		out, _ := tm("capture-pane", "-p", "-S", "-40", "-t", "ada")
		if !strings.Contains(out, "vigil: session closed: no key pressed for 1s") {
			return fmt.Errorf("waiting for the session to close:\n%s", out)
		}
		return nil
	})
	if took := time.Since(stopped); took < 700*time.Millisecond {
		t.Fatalf("closed %s after the last key", took)
	}
	c.waitFor("ssh's exit status 1", func(s string) bool { return strings.Contains(s, "Pane is dead (status 1,") })
}
