package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesAHomeOthersMayWrite: `vigil serve` on a home its group
// may write, or with a config everyone may write, or under a folder
// everyone may write, stops before doing anything (exit 2) naming the
// path, its mode and owner, and the chmod that tightens it.
func TestServeRefusesAHomeOthersMayWrite(t *testing.T) {
	for _, c := range []struct {
		name  string
		loose func(root, home string) string
		mode  os.FileMode
		want  string
	}{
		{"group-writable home", func(_, home string) string { return home }, 0o770, "its group may write it"},
		{"world-writable config", func(_, home string) string { return filepath.Join(home, "config.toml") }, 0o666,
			"its group and everyone may write it"},
		{"loose parent", func(root, _ string) string { return root }, 0o777, "a folder above the home"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, "home")
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, "config.toml"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			p := c.loose(root, home)
			if err := os.Chmod(p, c.mode); err != nil {
				t.Fatal(err)
			}
			out, errs, code := runReal(t, home, "serve")
			want := p + " (" + statMode(t, p) + ") owned by "
			if code != ExitBadInput || !strings.Contains(errs, "refusing to start") || !strings.Contains(errs, want) ||
				!strings.Contains(errs, c.want) || !strings.Contains(errs, "chmod go-w "+p) {
				t.Fatalf("serve on a %s: exit %d, want %d naming %q and chmod go-w\nstdout: %s\nstderr: %s", c.name, code,
					ExitBadInput, want, out, errs)
			}
			if _, err := os.Stat(filepath.Join(home, "audit.log")); err == nil {
				t.Fatal("serve wrote the audit log before refusing")
			}
		})
	}
}

// statMode is p's mode as homeguard prints it.
func statMode(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return (fi.Mode() & (os.ModePerm | os.ModeSticky | os.ModeDir)).String()
}
