// Package serve is `vigil serve`'s loop: it keeps the approval queue moving
// with nobody at a screen — expiring tasks on time, carrying out approvals
// whose process died before running them, running the queue's change feed
// (which sweeps the inbox) — and feeds the metrics and the notifications.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/metrics"
	"github.com/vigil-dev/vigil/exec/notify"
	"github.com/vigil-dev/vigil/exec/task"
)

// DefaultMaxTick is the longest the loop sleeps between passes when no
// deadline or change of the queue comes first.
const DefaultMaxTick = time.Second

// Options wire the loop to one home's queue.
type Options struct {
	Queue    *approval.Queue // the state machine: every transition goes through it
	TasksDir string          // tasks/ (the queue's folder: health check and timer spans)
	Audit    *audit.Log      // followed for the metrics, checked for /healthz
	Metrics  *metrics.Metrics
	// Notify is called for each event, one at a time, off the loop; a slow
	// or failing notifier delays only later notifications. Events that
	// come within NotifyWindow of a notification are told together after
	// it, once (notify.Burst: "29 new tasks"), not one run each.
	Notify       func(context.Context, notify.Event)
	NotifyWindow time.Duration // DefaultNotifyWindow when 0
	WarnBefore   time.Duration // an Expiring event this long before a deadline (notify.ExpiringBefore when 0)
	// SSHAddress is where people reach the SSH gate, "host:port" or
	// "user@host:port": [ssh] advertise, else the address `vigil serve
	// --ssh` listens on. Each event's SSH is the command that opens its
	// task there (config.SSHCommand); "" (or an unspecified host such as
	// 0.0.0.0) leaves it empty.
	SSHAddress string
	Now        func() time.Time
	MaxTick    time.Duration
	Log        *slog.Logger
}

// Server is one running loop.
type Server struct {
	o Options

	mu      sync.Mutex
	lastErr error // the last pass's problem, for /healthz
	feedErr error // what the change feed last could not do (an inbox sweep), nil once it could

	seen   map[string]bool // pending tasks announced as arrived
	warned map[string]bool // pending tasks announced as expiring
	events chan notify.Event
}

// New checks the options.
func New(o Options) (*Server, error) {
	if o.Queue == nil || o.Audit == nil || o.TasksDir == "" {
		return nil, errors.New("serve: Queue, Audit and TasksDir are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxTick <= 0 {
		o.MaxTick = DefaultMaxTick
	}
	if o.WarnBefore <= 0 {
		o.WarnBefore = notify.ExpiringBefore
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Metrics != nil {
		o.Metrics.SetTimer(RecordTimer(o.TasksDir))
	}
	return &Server{o: o, seen: map[string]bool{}, warned: map[string]bool{}, events: make(chan notify.Event, 64)}, nil
}

// Run works until ctx ends, then returns nil once the pass in flight is
// over: an execution that started is finished and recorded (executions run
// on a context of their own), and no new task is started after ctx ends.
//
// A pass runs when the queue's change feed says something changed (it
// sweeps the inbox itself), at the soonest deadline or expiry warning, and
// at least every MaxTick (which also carries out approvals whose process
// died, and sweeps what such a process left in the inbox).
func (s *Server) Run(ctx context.Context) error {
	if err := os.MkdirAll(s.o.TasksDir, 0o700); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	changes, err := s.o.Queue.Changes(ctx)
	if err != nil {
		s.o.Log.Warn("serve: no change feed, polling every tick", "err", err)
	}
	nctx, stopNotify := context.WithCancel(context.WithoutCancel(ctx))
	var nwg sync.WaitGroup
	nwg.Add(1)
	go func() {
		defer nwg.Done()
		s.notifier(nctx)
	}()
	defer func() {
		close(s.events)
		// a notification under way is cancelled; only the last window's burst
		// is still told (flushTimeout)
		stopNotify()
		nwg.Wait()
	}()

	timer := time.NewTimer(0)
	defer timer.Stop()
	sweep := changes == nil // the feed sweeps when it starts
	for {
		if ctx.Err() != nil {
			return nil
		}
		next := s.pass(ctx, sweep)
		if ctx.Err() != nil {
			return nil
		}
		timer.Reset(s.sleep(next))
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			sweep = true
		case c, ok := <-changes:
			timer.Stop() // Go ≥ 1.23: no stale tick is left to drain
			if !ok {
				changes, sweep = nil, true // the feed ended: every tick sweeps
				continue
			}
			s.mu.Lock()
			s.feedErr = c.Err
			s.mu.Unlock()
			sweep = false // the feed swept what arrived
		}
	}
}

// sleep is how long the loop waits for a change before the next pass: until
// next (a deadline or warning; zero: none), at most MaxTick.
func (s *Server) sleep(next time.Time) time.Duration {
	sleep := s.o.MaxTick
	if !next.IsZero() {
		if d := next.Sub(s.o.Now()); d < sleep {
			sleep = max(d, 0)
		}
	}
	return sleep
}

// Pass runs one pass now, sweeping the inbox too, for tests; not while Run
// runs.
func (s *Server) Pass(ctx context.Context) time.Time { return s.pass(ctx, true) }

// Health is /healthz's check: the audit log can take an entry and the
// queue's folder can be read, and the last pass had no problem.
func (s *Server) Health() error {
	if err := s.o.Audit.CheckEnd(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if _, err := os.ReadDir(s.o.TasksDir); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// pass sweeps the inbox when asked (the change feed sweeps it otherwise),
// brings every task up to date through the queue (repair, expiry,
// approved-but-not-run executions), refreshes the pending gauge, notifies,
// and returns when the next pass is due at the latest (a deadline or an
// expiry warning; zero: none).
func (s *Server) pass(ctx context.Context, sweep bool) time.Time {
	var errs []error
	q := s.o.Queue
	if sweep {
		_, err := q.SweepInbox(context.WithoutCancel(ctx))
		if err != nil {
			errs = append(errs, fmt.Errorf("inbox: %w", err))
		}
		s.mu.Lock()
		s.feedErr = nil // this sweep's outcome replaces the feed's last
		s.mu.Unlock()
	}
	s.mu.Lock()
	if s.feedErr != nil {
		errs = append(errs, fmt.Errorf("change feed: %w", s.feedErr))
	}
	s.mu.Unlock()
	ids, err := s.openIDs()
	if err != nil {
		errs = append(errs, fmt.Errorf("queue: %w", err))
	}
	now := s.o.Now()
	var next time.Time
	soonest := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	pending := map[string]bool{}
	for _, id := range ids {
		if ctx.Err() != nil {
			break // shutting down: start nothing new
		}
		// Get repairs what a crash left (running an approval that was
		// recorded but not carried out) and expires an overdue task, under
		// the task's lock, skipping a task another process holds.
		r, err := q.Get(id)
		if err != nil || r.State != approval.Pending {
			continue
		}
		pending[id] = true
		at, _ := r.Deadline()
		s.announce(r, at, s.o.Now()) // a pass that ran executions took time
		soonest(at)
		if !s.warned[id] {
			soonest(at.Add(-s.o.WarnBefore))
		}
	}
	if ctx.Err() == nil {
		for id := range s.seen {
			if !pending[id] {
				delete(s.seen, id)
				delete(s.warned, id)
			}
		}
		if s.o.Metrics != nil {
			s.o.Metrics.SetPending(len(pending))
		}
	}
	if err := s.follow(); err != nil {
		errs = append(errs, err)
	}
	s.mu.Lock()
	s.lastErr = errors.Join(errs...)
	s.mu.Unlock()
	if s.lastErr != nil {
		s.o.Log.Warn("serve: pass", "err", s.lastErr)
	}
	return next
}

// openIDs names the open tasks from the queue's index (tasks/.index/open):
// a pass reads only what can still change, never the finished history. An
// index that cannot be read is the queue's to rebuild: Pending does that and
// names the same tasks.
func (s *Server) openIDs() ([]string, error) {
	ents, err := os.ReadDir(s.o.Queue.OpenTasksDir())
	if err == nil {
		ids := make([]string, 0, len(ents))
		for _, e := range ents {
			if e.Type().IsRegular() && task.ValidateTaskID(e.Name()) == nil {
				ids = append(ids, e.Name())
			}
		}
		return ids, nil
	}
	recs, err := s.o.Queue.Pending()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, r.TaskID)
	}
	return ids, nil
}

// announce queues the notifications a pending task is due: arrived the
// first time it is seen, expiring once within WarnBefore of its deadline
// (folded into the arrival when it arrives that late).
func (s *Server) announce(r approval.Record, at, now time.Time) {
	if r.RuleDeciding(now) {
		return // a rule is deciding it: nobody is told, unless that fails
	}
	id := r.TaskID
	ev := notify.Event{TaskID: id, Agent: r.Agent, Action: r.CapabilityID, Device: r.Device, ExpiresIn: at.Sub(now)}
	if task.ValidateTaskID(id) == nil { // the queue checked it at submission; a command line takes no chances
		ev.SSH = config.SSHCommand(s.o.SSHAddress, "preview", id)
	}
	late := !now.Before(at.Add(-s.o.WarnBefore))
	switch {
	case !s.seen[id]:
		s.seen[id] = true
		s.warned[id] = late
		ev.Kind = notify.Arrived
	case late && !s.warned[id]:
		s.warned[id] = true
		ev.Kind = notify.Expiring
	default:
		return
	}
	if s.o.Notify == nil {
		return
	}
	select {
	case s.events <- ev:
	default:
		s.o.Log.Warn("serve: notification dropped, too many waiting", "task_id", id, "event", ev.Kind)
	}
}

// flushTimeout bounds the one notification serve still gives when it
// stops: the burst gathered in the last window.
const flushTimeout = 2 * time.Second

// DefaultNotifyWindow is the least time between two runs of the notify
// command: 30 tasks submitted at once are two notifications, the first
// and "29 new tasks", not thirty pushes to a phone.
const DefaultNotifyWindow = 5 * time.Second

// notifier tells each event that comes after a quiet window at once, and
// folds the events of the window after it into one.
func (s *Server) notifier(ctx context.Context) {
	window := s.o.NotifyWindow
	if window <= 0 {
		window = DefaultNotifyWindow
	}
	for ev := range s.events {
		s.tell(ctx, ev)
		b, open := s.gather(window)
		if b.Len() > 0 {
			ev := b.Event()
			if ev.Kind == notify.Several {
				ev.SSH = config.SSHCommand(s.o.SSHAddress) // the Approvals pane, with all of them
			}
			if !open {
				// serve is stopping: what was gathered is still told, not
				// lost with the window, for at most flushTimeout
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
				defer cancel()
				ctx = fctx
			}
			s.tell(ctx, ev)
		}
		if !open {
			return
		}
	}
}

// gather collects the events of one window; open is false when the
// events channel closed meanwhile (serve is stopping).
func (s *Server) gather(window time.Duration) (b notify.Burst, open bool) {
	t := time.NewTimer(window)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return b, false
			}
			b.Add(ev)
		case <-t.C:
			return b, true
		}
	}
}

func (s *Server) tell(ctx context.Context, ev notify.Event) {
	if ctx.Err() == nil && s.o.Notify != nil {
		s.o.Notify(ctx, ev)
	}
}

func (s *Server) follow() error {
	if s.o.Metrics == nil {
		return nil
	}
	if err := s.o.Metrics.Follow(s.o.Audit.Path()); err != nil {
		s.o.Log.Warn("serve: metrics", "err", err)
		return err
	}
	return nil
}
