package approvalspane

import (
	"context"
	"sync"

	tea "charm.land/bubbletea/v2"
)

// background is the pane's work off the UI goroutine: every read and
// decision runs as a command under the program's ctx (Init), and Close
// waits for the commands that started; a command that starts after Close
// does nothing. The zero value is not ready: start it first.
type background struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	closed bool
	wg     sync.WaitGroup
}

// start runs what starts from here on under a child of parent.
func (b *background) start(parent context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel != nil {
		b.cancel()
	}
	b.ctx, b.cancel = context.WithCancel(parent)
}

// enter counts a command in; false after close (the caller does nothing).
func (b *background) enter() (context.Context, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false
	}
	b.wg.Add(1)
	return b.ctx, true
}

// run makes f a command that runs under the pane's ctx and that close
// waits for.
func (b *background) run(f func(ctx context.Context) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		ctx, ok := b.enter()
		if !ok {
			return nil
		}
		defer b.wg.Done()
		return f(ctx)
	}
}

// close cancels the ctx and waits for the commands under way.
func (b *background) close() {
	b.mu.Lock()
	b.closed = true
	cancel := b.cancel
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	b.wg.Wait()
}

// context is the ctx the pane's work runs under now.
func (b *background) context() context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctx
}
