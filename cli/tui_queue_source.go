package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
)

// errNotConnected is every read and decision of the shared queue before
// the TUI has reached it (or while its connection is lost): nothing is
// read from, or sent to, a server the screen is not connected to. It is
// the engine's approval.ErrDisconnected (errors.Is), so a screen knows it
// without knowing the transport.
var errNotConnected error = notConnected{}

type notConnected struct{}

func (notConnected) Error() string        { return "not connected to the shared queue" }
func (notConnected) Is(target error) bool { return target == approval.ErrDisconnected }

// refreshWait bounds a full read of the bucket on a full reload.
const refreshWait = 10 * time.Second

// sharedTasks is the Approvals pane's queue (an approval.Decider) over the
// shared queue from the moment the TUI opens, before the server could be
// reached: until the background connection (tuiQueue.connect) hands it the
// bucket's tasks it answers the list with why it has none (connecting, the
// last attempt's error, or an error that will not heal) and refuses every
// decision; then it tells the pane to reload everything and delegates. A
// decision is never held back to be sent once connected: it fails at
// once, and the person decides again on what the screen then shows.
type sharedTasks struct {
	url string // shown: the config refuses credentials in it

	mu        sync.Mutex
	tasks     *natsqueue.OperatorTasks
	nc        *nats.Conn
	status    error // why there are no tasks yet (nil once connected)
	closed    bool
	following bool // a Changes call is under way (the tasks' changes have one reader)

	wake   chan struct{}   // the status changed or the tasks arrived (holds at most one)
	ctx    context.Context // the full reads', ended by Close
	cancel context.CancelFunc
	quit   chan struct{}  // closed by Close
	pumps  sync.WaitGroup // Changes calls' goroutines
}

func newSharedTasks(url string) *sharedTasks {
	s := &sharedTasks{url: url, wake: make(chan struct{}, 1), quit: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.status = s.connecting(nil)
	return s
}

// connecting is the status while the server has not answered: the URL,
// that Vigil keeps trying, and the last attempt's error.
func (s *sharedTasks) connecting(last error) error {
	msg := fmt.Sprintf("connecting to %s — Vigil keeps trying and this pane goes live by itself once the server answers "+
		"(no restart needed)", s.url)
	if last != nil {
		return fmt.Errorf("%w yet: %s; last attempt: %w", errNotConnected, msg, last)
	}
	return fmt.Errorf("%w yet: %s", errNotConnected, msg)
}

// failed records an attempt that did not connect; final: the error will
// not heal by trying again, and nothing tries.
func (s *sharedTasks) failed(err error, final bool) {
	st := s.connecting(err)
	if final {
		st = fmt.Errorf("%w: %s cannot be used and Vigil stopped trying: %w; fix [queue] and start vigil again",
			errNotConnected, s.url, err)
	}
	s.mu.Lock()
	same := s.status != nil && s.status.Error() == st.Error()
	s.status = st
	s.mu.Unlock()
	if !same {
		s.poke()
	}
}

// ready hands over the bucket's tasks and the connection they came over;
// false when the source was closed meanwhile (the caller closes them).
func (s *sharedTasks) ready(tasks *natsqueue.OperatorTasks, nc *nats.Conn) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.tasks, s.nc, s.status = tasks, nc, nil
	s.mu.Unlock()
	s.poke()
	return true
}

func (s *sharedTasks) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Changes follows the shared queue until ctx ends or the source is
// closed: everything may have changed at each change of status (the pane
// then lists again, and shows why it has no tasks, or the bucket's), and
// once the tasks arrived their own changes (the bucket's watch: the ids
// it saw change, or everything when the watch started over). One call at
// a time: the tasks' changes have one reader.
func (s *sharedTasks) Changes(ctx context.Context) (<-chan approval.Change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, fmt.Errorf("%w: closed", errNotConnected)
	case s.following:
		return nil, errors.New("the shared queue's changes are already followed")
	}
	s.following = true
	out := make(chan approval.Change)
	s.pumps.Add(1)
	go s.pump(ctx, out)
	return out, nil
}

// pump passes a change on at each change of status; once the tasks arrived
// it passes on theirs until they are closed.
func (s *sharedTasks) pump(ctx context.Context, out chan<- approval.Change) {
	defer s.pumps.Done()
	defer close(out)
	defer func() {
		s.mu.Lock()
		s.following = false
		s.mu.Unlock()
	}()
	send := func(c approval.Change) bool {
		select {
		case out <- c:
			return true
		case <-ctx.Done():
		case <-s.quit:
		}
		return false
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case <-s.wake:
		}
		s.mu.Lock()
		tasks := s.tasks
		s.mu.Unlock()
		var changes <-chan approval.Change
		if tasks != nil {
			changes, _ = tasks.Changes(ctx) // followed before the reload: nothing falls between
		}
		if !send(approval.Change{All: true}) {
			return
		}
		if changes == nil {
			continue
		}
		for {
			select {
			case c, open := <-changes:
				if !open || !send(c) {
					return
				}
			case <-ctx.Done():
				return
			case <-s.quit:
				return
			}
		}
	}
}

// live is the tasks when connected now; otherwise the error that says why
// not (connecting, or the connection lost and being made again).
func (s *sharedTasks) live() (*natsqueue.OperatorTasks, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.tasks == nil:
		return nil, s.status
	case s.nc != nil && s.nc.Status() != nats.CONNECTED:
		return nil, fmt.Errorf("%w: the connection to %s is lost; Vigil is reconnecting", errNotConnected, s.url)
	}
	return s.tasks, nil
}

// known is the tasks once they arrived, connected now or not: the records
// the watch kept are still what the bucket last said.
func (s *sharedTasks) known() *natsqueue.OperatorTasks {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasks
}

// Pending is where the pane says why it has no tasks yet. Once they
// arrived it first reads again what the bucket's watch may have missed (a
// watch that stalled across a server restart until its heartbeats told
// it): the pane lists everything only at its start, on ctrl+r, every five
// minutes and when told that everything may have changed.
func (s *sharedTasks) Pending() ([]approval.Record, error) {
	if t := s.known(); t != nil {
		ctx, cancel := context.WithTimeout(s.ctx, refreshWait)
		err := t.Refresh(ctx)
		cancel()
		list, perr := t.Pending()
		return list, errors.Join(err, perr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.status
}

func (s *sharedTasks) Decided(limit int) ([]approval.Record, error) {
	if t := s.known(); t != nil {
		return t.Decided(limit)
	}
	return nil, nil // Pending has said why
}

func (s *sharedTasks) Get(id string) (approval.Record, error) {
	if t := s.known(); t != nil {
		return t.Get(id)
	}
	return approval.Record{}, fmt.Errorf("%w: %s", approval.ErrNotFound, id)
}

func (s *sharedTasks) Tasks(ids []string) []approval.Record {
	if t := s.known(); t != nil {
		return t.Tasks(ids)
	}
	return nil
}

// Preview reads the bucket only over a live connection.
func (s *sharedTasks) Preview(ctx context.Context, id string) (approval.View, error) {
	t, err := s.live()
	if err != nil {
		return approval.View{}, err
	}
	return t.Preview(ctx, id)
}

// Decide sends a decision only over a live connection: one made while the
// server cannot be reached fails at once, naming why, and is not kept to
// be sent later.
func (s *sharedTasks) Decide(ctx context.Context, id string, d approval.Decision) (approval.Record, *task.Result, error) {
	t, err := s.live()
	if err != nil {
		return approval.Record{}, nil, fmt.Errorf("%w; nothing was sent", err)
	}
	return t.Decide(ctx, id, d)
}

func (s *sharedTasks) Result(id string) (*task.Result, error) {
	t, err := s.live()
	if err != nil {
		return nil, err
	}
	return t.Result(id)
}

// restart starts the tasks' watch over (the connection is back).
func (s *sharedTasks) restart() {
	if t := s.known(); t != nil {
		t.Restart()
	}
}

// Close stops passing on changes, ends the full reads under way and closes
// the tasks.
func (s *sharedTasks) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	tasks := s.tasks
	s.mu.Unlock()
	close(s.quit)
	s.cancel()
	if tasks != nil {
		tasks.Close()
	}
	s.pumps.Wait()
}

var _ approval.Decider = (*sharedTasks)(nil)
