package search

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binary = "ug" is accepted (its --version says ugrep); run as "ug" it
// would load a .ugrep config file from its working directory, inside the
// searched tree, and a repository could run commands through filter=.
func TestUgBinaryLoadsNoRepoConfig(t *testing.T) {
	ug, err := exec.LookPath("ug")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ug (part of Debian's ugrep package) is required in CI: %v", err)
		}
		t.Skip("ug not installed")
	}
	base := t.TempDir()
	root := filepath.Join(base, "sb")
	marker := filepath.Join(base, "PWNED")
	write(t, root, "a.txt", "needle\n")
	write(t, root, ".ugrep", "filter=txt:touch "+marker+"\n")
	opts := DefaultOptions(root)
	opts.Search.Binary = ug
	opts.Search.FallbackBinary = ""
	opts.Backend = "ugrep"
	be, err := selectBackend(opts)
	t.Logf("selected %+v err=%v", be, err)
	resp, err := Run(context.Background(), Request{Pattern: "needle"}, opts, nil)
	t.Logf("resp=%s err=%v", dump(resp), err)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a .ugrep file in the searched tree ran a command (binary %s)", ug)
	}
}
