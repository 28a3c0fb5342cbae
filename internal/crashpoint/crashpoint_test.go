//go:build unix

package crashpoint

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestHelperCrash is not a test: TestHitKills re-runs the binary with it.
func TestHelperCrash(t *testing.T) {
	dir := os.Getenv("CRASHPOINT_DIR")
	if dir == "" {
		return
	}
	for i := 1; i <= 3; i++ {
		os.WriteFile(filepath.Join(dir, "reached"), []byte{byte('0' + i)}, 0o600)
		Hit("point")
		Hit("other")
	}
	os.Exit(0)
}

func TestHitKills(t *testing.T) {
	for _, c := range []struct {
		env     string
		killed  bool
		reached string
	}{
		{"", false, "3"},
		{"point", true, "1"},
		{"point@2", true, "2"},
		{"point@9", false, "3"},
		{"nowhere", false, "3"},
	} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrash$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CRASHPOINT_DIR="+dir, Env+"="+c.env)
		err := cmd.Run()
		var ee *exec.ExitError
		wasKilled := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() &&
			ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		if wasKilled != c.killed {
			t.Errorf("%q: killed=%v (%v)", c.env, wasKilled, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "reached")); string(b) != c.reached {
			t.Errorf("%q: reached hit %s, want %s", c.env, b, c.reached)
		}
	}
}
