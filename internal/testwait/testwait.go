// Package testwait makes tests wait for a state, not for a time: a test
// polls the condition it needs (a file's contents, a screen, a process's
// answer) until it holds or a deadline passes. A loaded machine then only
// makes a test slower, never wrong. Only tests import it.
package testwait

import (
	"fmt"
	"testing"
	"time"
)

// Polling starts fast (a state that is nearly there is seen at once) and
// backs off, so a slow wait costs few reads.
const (
	firstPoll = 2 * time.Millisecond
	maxPoll   = 50 * time.Millisecond
)

// For polls check until it returns nil and fails t after within, with the
// last error check returned (so the failure says what the state was).
func For(t testing.TB, within time.Duration, check func() error) {
	t.Helper()
	if err := Poll(within, check); err != nil {
		t.Fatalf("after %s: %v", within, err)
	}
}

// Until polls ok until it returns true and fails t after within, naming
// what it waited for.
func Until(t testing.TB, within time.Duration, what string, ok func() bool) {
	t.Helper()
	For(t, within, func() error {
		if ok() {
			return nil
		}
		return fmt.Errorf("still waiting for %s", what)
	})
}

// Poll polls check until it returns nil or within passes, and returns the
// last error (nil once the state held). It never fails a test itself, so a
// goroutine other than the test's may use it.
func Poll(within time.Duration, check func() error) error {
	deadline := time.Now().Add(within)
	pause := firstPoll
	for {
		err := check()
		if err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, maxPoll)
	}
}
