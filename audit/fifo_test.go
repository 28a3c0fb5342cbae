package audit

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn has not returned after d.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", what, d)
	}
}

// The log's files replaced by a FIFO or a device: every append, check and
// read returns an error at once instead of blocking for ever (a FIFO) or
// reading without end (/dev/zero); a head that is not a file is damage.
func TestLogFilesThatAreNotRegularFiles(t *testing.T) {
	mk := map[string]func(t *testing.T, p string){
		"fifo": func(t *testing.T, p string) {
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal("mkfifo:", err)
			}
		},
		"dev-zero": func(t *testing.T, p string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Fatal("no /dev/zero")
			}
			os.Remove(p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, make := range mk {
		t.Run("head "+name, func(t *testing.T) {
			path := newLog(t, 3)
			make(t, HeadPath(path))
			within(t, 10*time.Second, "append", func() {
				_, err := openLog(t, path).Append(sampleEntry(3))
				var de *DamagedError
				if !errors.As(err, &de) {
					t.Errorf("append with a %s head: %v", name, err)
				}
			})
			within(t, 10*time.Second, "verify", func() {
				if rep, err := Verify(path); err == nil && rep.OK {
					t.Errorf("verify with a %s head: ok", name)
				}
			})
		})
		t.Run("log "+name, func(t *testing.T) {
			path := newLog(t, 3)
			l := openLog(t, path)
			make(t, path)
			within(t, 10*time.Second, "append", func() {
				if _, err := l.Append(sampleEntry(3)); err == nil {
					t.Errorf("append to a %s log: no error", name)
				}
			})
			within(t, 10*time.Second, "check end", func() {
				if err := l.CheckEnd(); err == nil {
					t.Errorf("check end of a %s log: no error", name)
				}
			})
			within(t, 10*time.Second, "verify", func() {
				if rep, err := Verify(path); err == nil && rep.OK {
					t.Errorf("verify a %s log: ok", name)
				}
			})
			within(t, 10*time.Second, "scan", func() {
				if _, err := Scan(path, 0, func(Line) bool { return true }); err == nil {
					t.Errorf("scan a %s log: no error", name)
				}
			})
			within(t, 10*time.Second, "tail", func() {
				if _, _, err := ReadTail(path, 5); err == nil {
					t.Errorf("tail of a %s log: no error", name)
				}
			})
			within(t, 10*time.Second, "end", func() {
				if _, err := EndOfCompleteLines(path); err == nil {
					t.Errorf("end of a %s log: no error", name)
				}
			})
			within(t, 10*time.Second, "open", func() {
				if _, err := Open(path, stepClock()); err == nil {
					t.Errorf("open a %s log: no error", name)
				}
			})
		})
	}
}
