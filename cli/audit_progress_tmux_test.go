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

// TestAuditVerifyProgressOnATerminal: on a real terminal (tmux) `audit
// verify` of a log of 200,000 entries (100 MB: longer than the delay before
// progress shows) draws a progress line on stderr and erases it before the
// verdict; piped, it prints the verdict alone.
func TestAuditVerifyProgressOnATerminal(t *testing.T) {
	testbin.FullRunOnly(t, "vigil in a real terminal (tmux)")
	tmux := testbin.Tool(t, "tmux")
	bin := testbin.Vigil(t)
	home := t.TempDir()
	gen := exec.Command(testbin.Tool(t, "go"), "run", "./bench/genaudit",
		"-n", "200000", "-o", filepath.Join(home, "audit.log"))
	gen.Dir = ".."
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("genaudit: %v\n%s", err, out)
	}
	raw := filepath.Join(t.TempDir(), "raw")
	sock := fmt.Sprintf("vigil-audit-progress-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	// the command waits for the pipe to be attached before it runs
	script := fmt.Sprintf("while [ ! -e %[1]s ]; do sleep 0.05; done; %[2]s --home %[3]s audit verify; echo done-$?; sleep 30",
		raw, bin, home)
	if out, err := tm("new-session", "-d", "-s", "v", "-x", "120", "-y", "10", "sh", "-c", script); err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { tm("kill-server") })
	if out, err := tm("pipe-pane", "-o", "-t", "v", "cat >> "+raw); err != nil {
		t.Fatalf("pipe-pane: %v\n%s", err, out)
	}
	testwait.Until(t, 10*time.Second, "pipe-pane's file", func() bool {
		_, err := os.Stat(raw)
		return err == nil
	})
	var screen string
	testwait.For(t, 60*time.Second, func() error {
		if screen, _ = tm("capture-pane", "-p", "-t", "v"); !strings.Contains(screen, "done-") {
			return fmt.Errorf("verify did not finish:\n%s", screen)
		}
		return nil
	})
	if !strings.Contains(screen, "chain verified · 200000 entries") || !strings.Contains(screen, "done-0") || strings.Contains(screen, "verifying") {
		t.Fatalf("screen after verify:\n%s", screen)
	}
	b, _ := os.ReadFile(raw)
	out := string(b)
	p := strings.Index(out, "verifying… ")
	if p < 0 || !strings.Contains(out[p:], "% (") || !strings.Contains(out[p:], "\r\x1b[K") {
		t.Fatalf("no progress line drawn and erased on the terminal: %q", out)
	}
	// piped: the verdict only
	piped, err := exec.Command(bin, "--home", home, "audit", "verify").CombinedOutput()
	if err != nil || string(piped) != "chain verified · 200000 entries\n" {
		t.Fatalf("piped verify: %v %q", err, piped)
	}
}
