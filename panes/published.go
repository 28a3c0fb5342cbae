package panes

import "sync"

// Published holds the state a pane last published for those outside the
// program (tests, chiefly) and wakes whoever waits for the next one: a
// test reads the state and waits on Changed while it is not the one it
// wants — a wait on state, never on time. The zero value is ready.
type Published[T any] struct {
	mu   sync.Mutex
	cur  T
	next chan struct{} // closed at the next Publish; nil: nobody waits
}

// Load returns the state last published.
func (p *Published[T]) Load() T {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// Changed returns a channel closed at the next Publish.
func (p *Published[T]) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == nil {
		p.next = make(chan struct{})
	}
	return p.next
}

// Publish stores s and wakes those waiting.
func (p *Published[T]) Publish(s T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = s
	if p.next != nil {
		close(p.next)
		p.next = nil
	}
}
