package sshgate

import (
	"context"
	"sync/atomic"
	"time"

	"charm.land/ssh"
)

// idle ends a session nobody typed in for d: every byte the person sends
// resets it. Output does not (the TUI's countdowns redraw every second, and
// a screen left open on a desk is what the timeout is for), nor do the
// client's keep-alives, which are not input.
type idle struct {
	d     time.Duration
	timer *time.Timer
	fired atomic.Bool
}

// newIdle starts the watch; end runs once d passes without input.
func newIdle(d time.Duration, end context.CancelFunc) *idle {
	i := &idle{d: d}
	i.timer = time.AfterFunc(d, func() {
		i.fired.Store(true)
		end()
	})
	return i
}

// touch restarts the wait: the person typed.
func (i *idle) touch() {
	if !i.fired.Load() {
		i.timer.Reset(i.d)
	}
}

// stop ends the watch when the session ends first.
func (i *idle) stop() { i.timer.Stop() }

// typed is a session whose reads count as the person typing.
type typed struct {
	ssh.Session
	idle *idle
}

func (t typed) Read(p []byte) (int, error) {
	n, err := t.Session.Read(p)
	if n > 0 {
		t.idle.touch()
	}
	return n, err
}
