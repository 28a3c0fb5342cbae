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

// Quitting the demo's TUI says where the demo home is kept and the command
// that opens it again: the real binary in a real terminal (tmux), `q`.
func TestDemoQuitSaysHowToReopen(t *testing.T) {
	testbin.FullRunOnly(t, "vigil demo in a real terminal (tmux)")
	tmux := testbin.Tool(t, "tmux")
	bin := testbin.Vigil(t)
	tmp := t.TempDir()
	dir, errFile := filepath.Join(tmp, "my demo"), filepath.Join(tmp, "stderr")
	sock := fmt.Sprintf("vigil-demo-test-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { tm("kill-server") })
	if out, err := tm("new-session", "-d", "-s", "demo", "-x", "120", "-y", "40", "sh", "-c",
		fmt.Sprintf("TERM=xterm-256color VIGIL_HOME= %s demo --dir %s 2>%s; sleep 60", bin, shellQuote(dir), shellQuote(errFile))); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	testwait.For(t, 20*time.Second, func() error {
		if s, _ := tm("capture-pane", "-p", "-t", "demo"); !strings.Contains(s, "Approvals") {
			return fmt.Errorf("waiting for the TUI; screen:\n%s", s)
		}
		return nil
	})
	if out, err := tm("send-keys", "-t", "demo", "q"); err != nil {
		t.Fatalf("send-keys: %v %s", err, out)
	}
	want := "the demo home stays in " + dir + "; reopen it with: vigil --home '" + dir + "'\n"
	testwait.For(t, 10*time.Second, func() error {
		if b, _ := os.ReadFile(errFile); string(b) != want {
			return fmt.Errorf("stderr after quitting: %q, want %q", b, want)
		}
		return nil
	})
}
