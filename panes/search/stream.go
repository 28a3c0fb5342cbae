package searchpane

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/search"
)

// frame is the least time between two batches reaching the screen: a fast
// backend produces thousands of events a millisecond, and one message per
// ~frame keeps the UI goroutine free (the notes' 16–33 ms).
const frame = 25 * time.Millisecond

// stream is one running content search. The engine's emit callback (on
// Run's goroutine) appends to it under a lock; a pump command drains it at
// most once a frame into a batchMsg. Decoding never happens on the UI side.
type stream struct {
	gen    uint64
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when Run has returned (backends reaped)
	notify chan struct{} // capacity 1: "something to drain"

	mu       sync.Mutex
	events   []search.Event
	errs     []search.FileError
	scanned  int64
	finished bool
	resp     search.Response
	err      error

	last time.Time // only touched by the single pending pump
}

type batchMsg struct {
	gen      uint64
	events   []search.Event
	errs     []search.FileError
	scanned  int64
	finished bool
	resp     search.Response
	err      error
}

// Engine runs one content search, streaming batches to emit: search.Run,
// or a stand-in injected through Options so pane tests run without ugrep.
type Engine func(ctx context.Context, req search.Request, opts search.Options, emit func(search.Batch)) (search.Response, error)

func startStream(gen uint64, req search.Request, opts search.Options, run Engine) *stream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &stream{gen: gen, ctx: ctx, cancel: cancel, done: make(chan struct{}), notify: make(chan struct{}, 1)}
	go func() {
		defer close(s.done)
		resp, err := run(ctx, req, opts, func(b search.Batch) {
			s.mu.Lock()
			s.events = append(s.events, b.Events...)
			s.errs = append(s.errs, b.Errors...)
			s.scanned = b.FilesScanned
			s.mu.Unlock()
			s.signal()
		})
		resp.Matches = nil // the pane already has every event from the batches
		s.mu.Lock()
		s.finished, s.resp, s.err = true, resp, err
		s.mu.Unlock()
		s.signal()
	}()
	return s
}

func (s *stream) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// pump waits for news, holds it until a frame has passed since the last
// delivery, and returns everything gathered meanwhile as one message.
func (s *stream) pump() tea.Cmd {
	return func() tea.Msg {
		<-s.notify
		if wait := frame - time.Since(s.last); !s.last.IsZero() && wait > 0 {
			time.Sleep(wait)
		}
		s.last = time.Now()
		s.mu.Lock()
		defer s.mu.Unlock()
		m := batchMsg{gen: s.gen, events: s.events, errs: s.errs, scanned: s.scanned,
			finished: s.finished, resp: s.resp, err: s.err}
		s.events, s.errs = nil, nil
		return m
	}
}

// stop cancels the search; the engine kills the backend's process group.
func (s *stream) stop() {
	if s != nil {
		s.cancel()
	}
}

// ctxErr is for tests: whether the search has been cancelled.
func (s *stream) ctxErr() error { return s.ctx.Err() }
