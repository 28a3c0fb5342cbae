package auditpane

import (
	"context"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// life runs the pane's background work under the program's context and
// lets Close wait for it: a command that runs after Close does nothing, and
// Close returns only once every read (and the verification, which writes
// the record beside the log) has returned.
type life struct {
	ctx     context.Context
	cancels []context.CancelFunc // every context start made: close ends them all
	mu      sync.Mutex
	closed  bool
	wg      sync.WaitGroup
}

// start runs the pane's work started from now on under parent (Init's
// context; New's background one until then). Work started before goes on
// under its own context, which close ends too.
func (l *life) start(parent context.Context) {
	if parent == nil {
		parent = context.Background()
	}
	var cancel context.CancelFunc
	l.ctx, cancel = context.WithCancel(parent)
	l.cancels = append(l.cancels, cancel)
}

// enter counts a goroutine in, unless the pane is closed.
func (l *life) enter() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.wg.Add(1)
	return true
}

func (l *life) leave() { l.wg.Done() }

// close cancels the work and waits for it.
func (l *life) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	for _, cancel := range l.cancels {
		cancel()
	}
	l.wg.Wait()
}

// cmd is a command that runs work as one of the pane's goroutines: nothing
// (a nil message) once the pane is closed.
func (l *life) cmd(work func() tea.Msg) tea.Cmd {
	return func() tea.Msg {
		if !l.enter() {
			return nil
		}
		defer l.leave()
		return work()
	}
}
