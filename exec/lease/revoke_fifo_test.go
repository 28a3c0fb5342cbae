package lease

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A revocation list replaced by a FIFO or a device fails every check closed
// at once: never a check blocked for ever on the FIFO, or reading /dev/zero
// without end.
func TestRevocationListThatIsNotAFile(t *testing.T) {
	k := getKeys(t)
	tok := issue(t, k.ed, "ed-1", nil)
	for name, mkfile := range map[string]func(p string) error{
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"dev-zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		path := filepath.Join(t.TempDir(), "revoked.txt")
		if err := mkfile(path); err != nil {
			t.Fatal(name, err)
		}
		v := newVerifier(t, k, path)
		done := make(chan error, 1)
		go func() { _, err := v.Check(tok, req); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "revocation list unreadable") {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the check is still running after 10s", name)
		}
	}
}
