package testwait

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPollReturnsOnceTheStateHolds: the check runs until it passes, and
// Poll returns at once then, well before its deadline.
func TestPollReturnsOnceTheStateHolds(t *testing.T) {
	var n atomic.Int32
	start := time.Now()
	err := Poll(time.Minute, func() error {
		if n.Add(1) < 5 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || n.Load() != 5 {
		t.Fatalf("err %v after %d checks, want nil after 5", err, n.Load())
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s: Poll waited for its deadline", d)
	}
}

// TestPollGivesTheLastErrorAtTheDeadline: a state that never comes ends
// with the last thing the check said, checked at least twice.
func TestPollGivesTheLastErrorAtTheDeadline(t *testing.T) {
	var n atomic.Int32
	err := Poll(20*time.Millisecond, func() error {
		n.Add(1)
		return errors.New("state " + strings.Repeat("x", int(n.Load())))
	})
	if err == nil || err.Error() != "state "+strings.Repeat("x", int(n.Load())) || n.Load() < 2 {
		t.Fatalf("err %v after %d checks", err, n.Load())
	}
}

// fakeT records a failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

// TestUntilFailsNamingWhatItWaitedFor: the failure message says what never
// happened; a state that holds fails nothing.
func TestUntilFailsNamingWhatItWaitedFor(t *testing.T) {
	f := &fakeT{TB: t}
	Until(f, 10*time.Millisecond, "the badge", func() bool { return false })
	if !strings.Contains(f.failed, "still waiting for the badge") {
		t.Fatalf("failure %q does not name what it waited for", f.failed)
	}
	f = &fakeT{TB: t}
	Until(f, time.Minute, "the badge", func() bool { return true })
	if f.failed != "" {
		t.Fatalf("a state that holds failed: %q", f.failed)
	}
}
