package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
)

// errNotConnected is every read and decision of the shared queue before
// the TUI has reached it (or while its connection is lost): nothing is
// read from, or sent to, a server the screen is not connected to.
var errNotConnected = errors.New("not connected to the shared queue")

// sharedTasks is the Approvals pane's Source over the shared queue from the
// moment the TUI opens, before the server could be reached: until the
// background connection (tuiQueue.connect) hands it the bucket's tasks it
// answers the list with why it has none (connecting, the last attempt's
// error, or an error that will not heal) and refuses every decision; then
// it tells the pane to reload everything and delegates. A decision is
// never held back to be sent once connected: it fails at once, and the
// person decides again on what the screen then shows.
type sharedTasks struct {
	url string // shown: the config refuses credentials in it

	mu     sync.Mutex
	tasks  *natsqueue.OperatorTasks
	nc     *nats.Conn
	status error // why there are no tasks yet (nil once connected)
	closed bool

	wake chan struct{} // the status changed or the tasks arrived (holds at most one)
	out  chan []string // Changes
	quit chan struct{} // closed by Close
	done chan struct{} // closed when pump returned
}

func newSharedTasks(url string) *sharedTasks {
	s := &sharedTasks{url: url, wake: make(chan struct{}, 1), out: make(chan []string), quit: make(chan struct{}),
		done: make(chan struct{})}
	s.status = s.connecting(nil)
	go s.pump()
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

// pump tells the pane to reload everything at each change of status; once
// the tasks arrived it passes on their changes until they are closed.
func (s *sharedTasks) pump() {
	defer close(s.done)
	defer close(s.out)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		select {
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
		select {
		case s.out <- nil:
		case <-s.quit:
			return
		}
		if changes == nil {
			continue
		}
		for c := range changes {
			ids := c.IDs
			if c.All {
				ids = nil
			}
			select {
			case s.out <- ids:
			case <-s.quit:
				return
			}
		}
		return
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

// Changes implements approvalspane.Follower.
func (s *sharedTasks) Changes() <-chan []string { return s.out }

// Refresh implements approvalspane.Refresher (nothing to read before the tasks
// arrived: Pending says why).
func (s *sharedTasks) Refresh(ctx context.Context) error {
	if t := s.known(); t != nil {
		return t.Refresh(ctx)
	}
	return nil
}

// Pending is where the pane says why it has no tasks yet.
func (s *sharedTasks) Pending() ([]approval.Record, error) {
	if t := s.known(); t != nil {
		return t.Pending()
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

func (s *sharedTasks) SweepInbox(context.Context) ([]approval.Outcome, error) { return nil, nil }

// restart starts the tasks' watch over (the connection is back).
func (s *sharedTasks) restart() {
	if t := s.known(); t != nil {
		t.Restart()
	}
}

// Close stops passing on changes and closes the tasks.
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
	if tasks != nil {
		tasks.Close() // ends pump's pass of their changes
	}
	<-s.done
}

var (
	_ approvalspane.Source    = (*sharedTasks)(nil)
	_ approvalspane.Follower  = (*sharedTasks)(nil)
	_ approvalspane.Refresher = (*sharedTasks)(nil)
)
