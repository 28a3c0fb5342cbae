//go:build linux

package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vigil-dev/vigil/internal/testbin"
)

// TestTUIWithoutTerminalSaysSoAndExits2 runs the real binary in a new
// session (no controlling terminal, as under cron, CI or an agent's shell):
// `vigil` and `vigil demo` print one clear line pointing at the headless
// commands and exit 2, never bubbletea's "could not open TTY".
func TestTUIWithoutTerminalSaysSoAndExits2(t *testing.T) {
	bin := testbin.Vigil(t)
	home := t.TempDir()
	_, pty := openPTY(t)
	cases := []struct {
		name   string
		args   []string
		stdout *os.File // nil: a pipe
		want   string
	}{
		{"pipes", []string{"--home", home}, nil, "vigil: the TUI needs a terminal; use the headless commands, e.g. vigil search --json"},
		{"a terminal to draw on but none to read keys from", []string{"--home", home}, pty, "the TUI needs a terminal"},
		{"demo", []string{"demo", "--dir", filepath.Join(home, "demo")}, nil, "vigil demo --no-open builds the demo home"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			cmd := exec.Command(bin, c.args...)
			cmd.Env = append(os.Environ(), "VIGIL_HOME=")
			cmd.Stdin = nil // /dev/null
			cmd.Stdout, cmd.Stderr = &out, &errb
			if c.stdout != nil {
				cmd.Stdout = c.stdout
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitBadInput {
				t.Fatalf("exit: %v, want 2\n%s%s", err, out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), c.want) || strings.Contains(errb.String(), "TTY") {
				t.Fatalf("stderr = %q, want %q", errb.String(), c.want)
			}
			if strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
				t.Fatalf("want one line, got %q", errb.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(home, "demo")); !os.IsNotExist(err) {
		t.Fatalf("the demo home was built although it could not be opened: %v", err)
	}
}
