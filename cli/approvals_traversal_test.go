package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// A task id that climbs out of tasks/ never reaches a decision or a file:
// every command refuses it as bad input (exit 2) and touches nothing.
func TestApproveRefusesPathTraversal(t *testing.T) {
	h := newCLIHome(t)
	outside := filepath.Join(h.home, "x")
	os.MkdirAll(outside, 0o700)
	for _, id := range []string{"../x", "..", "./x", "/etc", "x/../y", ".hidden", "a\x00b"} {
		for _, args := range [][]string{{"approve", id, "--yes"}, {"deny", id, "--reason", "no"}, {"preview", id}, {"result", id}} {
			if _, _, code := runReal(t, h.home, args...); code != ExitBadInput {
				t.Errorf("vigil %q: exit %d, want %d", args, code, ExitBadInput)
			}
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("files made outside tasks/: %v", ents)
	}
}
