package mcpserver

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// status reads a task's record and, once it is final, its signed result
// (nil while it is being stored). A task the queue does not know is
// approval.ErrNotFound.
func status(q approval.Reader, id string) (approval.Record, *task.Result, error) {
	rec, err := q.Get(id)
	if err != nil || !rec.State.Final() {
		return rec, nil, err
	}
	res, err := q.Result(id)
	if errors.Is(err, task.ErrNotFound) {
		return rec, nil, nil
	}
	if err == nil {
		// the local queue checks this itself; a shared queue's reader hands
		// out what its bucket holds, so the agent's side checks too
		err = approval.ResultAnswers(id, rec, res)
	}
	if err != nil {
		return rec, nil, err
	}
	return rec, res, nil
}

// changeFeed shares one Changes of the queue among the calls waiting on it:
// a local feed holds three file watches (and sweeps the inbox), a shared
// queue's a bucket watch, so a server keeps one, not one per waiting call.
// It runs while a call waits and stops when the last one is answered.
type changeFeed struct {
	q approval.Reader

	mu      sync.Mutex
	cur     *feedRun                 // the running Changes; nil when none
	waiters map[chan struct{}]string // each waiting call's wake-up → the task it waits on
}

// feedRun is one Changes call.
type feedRun struct{ stop context.CancelFunc }

func newChangeFeed(q approval.Reader) *changeFeed {
	return &changeFeed{q: q, waiters: map[chan struct{}]string{}}
}

// wait registers a call waiting on task id: wake gets a value when the task
// may have changed (a change that names it, or one that may have missed
// it). leave must be called when the call is answered. An error is a feed
// that could not start (the caller then re-reads on its own).
func (f *changeFeed) wait(id string) (wake <-chan struct{}, leave func(), err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil {
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := f.q.Changes(ctx)
		if err != nil {
			cancel()
			return nil, func() {}, err
		}
		f.cur = &feedRun{stop: cancel}
		go f.run(f.cur, ch)
	}
	w := make(chan struct{}, 1)
	f.waiters[w] = id
	return w, func() { f.leave(w) }, nil
}

func (f *changeFeed) leave(w chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.waiters, w)
	if len(f.waiters) == 0 && f.cur != nil {
		f.cur.stop()
		f.cur = nil
	}
}

// run wakes the calls each change concerns. A feed that ends while calls
// still wait (not stopped by leave) wakes them all; the next wait starts a
// new one.
func (f *changeFeed) run(r *feedRun, ch <-chan approval.Change) {
	for c := range ch {
		f.mu.Lock()
		for w, id := range f.waiters {
			if c.All || slices.Contains(c.IDs, id) {
				wakeUp(w)
			}
		}
		f.mu.Unlock()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == r {
		f.cur = nil
		for w := range f.waiters {
			wakeUp(w)
		}
	}
}

func wakeUp(w chan struct{}) {
	select {
	case w <- struct{}{}:
	default: // one wake-up pending is enough: the call reads the latest
	}
}
