package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// TestAuditBadgeTmuxSedInPlace: the report, end to end. The real
// binary runs in a detached tmux session on a demo home with the Audit tab
// open; a real `sed -i` edits an entry (sed writes a new file and renames it
// over audit.log); the screen shows the BROKEN badge, as `vigil audit
// verify` does. The pane re-checks nothing on a timer, so the badge turning
// at all is its watch of the log at work.
func TestAuditBadgeTmuxSedInPlace(t *testing.T) {
	testbin.FullRunOnly(t, "vigil in a real terminal (tmux)")
	tmux := testbin.Tool(t, "tmux")
	if _, err := exec.LookPath("sed"); err != nil {
		t.Fatal("sed is required: it makes the in-place edit")
	}
	bin := testbin.Vigil(t)
	home := t.TempDir()
	if out, err := exec.Command(bin, "demo", "--dir", home, "--no-open").CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	sock := fmt.Sprintf("vigil-audit-test-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tm("new-session", "-d", "-s", "vigil", "-x", "160", "-y", "40",
		"env", "TERM=xterm-256color", "NO_COLOR=1", bin, "--home", home); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { tm("kill-server") })
	screen := func() string {
		out, _ := tm("capture-pane", "-p", "-t", "vigil")
		return out
	}
	waitFor := func(what string, d time.Duration, cond func(string) bool) {
		t.Helper()
		testwait.For(t, d, func() error {
			if s := screen(); !cond(s) {
				return fmt.Errorf("waiting for %s; screen:\n%s", what, s)
			}
			return nil
		})
	}
	waitFor("the TUI", 20*time.Second, func(s string) bool { return strings.Contains(s, "Audit") })
	// alt+4: the Audit tab, from any pane or field
	if out, err := tm("send-keys", "-t", "vigil", "M-4"); err != nil {
		t.Fatalf("send-keys: %v %s", err, out)
	}
	waitFor("the verified badge", 10*time.Second, func(s string) bool { return strings.Contains(s, "chain verified") })

	// entry #2 (the third line): a different device
	sed := exec.Command("sed", "-i", `3s/"target":"living-room"/"target":"kitchen"/`, filepath.Join(home, "audit.log"))
	if out, err := sed.CombinedOutput(); err != nil {
		t.Fatalf("sed -i: %v\n%s", err, out)
	}
	waitFor("the BROKEN badge", 10*time.Second, func(s string) bool { return strings.Contains(s, "✗ BROKEN at #2") })
	if s := screen(); !strings.Contains(s, "✗ edited") {
		t.Errorf("the broken row is not marked:\n%s", s)
	}
	if out, err := exec.Command(bin, "--home", home, "audit", "verify").CombinedOutput(); err == nil || !strings.Contains(string(out), "BROKEN at #2") {
		t.Fatalf("audit verify disagrees with the screen: %v %s", err, out)
	}
}
