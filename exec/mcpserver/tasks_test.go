package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// TestMCPWaitWakesOnTaskChange: with a backstop re-read far longer than the
// test, a waiting media call answers as soon as the person decides: the
// queue's change feed wakes it, nothing polls.
func TestMCPWaitWakesOnTaskChange(t *testing.T) {
	f := newFixture(t)
	d := f.deps
	followed := make(chan struct{}, 1)
	d.Poll, d.Tasks = time.Hour, &readsSeen{Queue: f.env.Queue, followed: followed}
	f.srv = New(d)
	cs := f.connect(t, "stdio")
	const id = "play-woken"
	q := f.env.Open()
	decided := make(chan time.Time, 1)
	go func() {
		select {
		case <-followed: // the call waits, following the queue: only its feed wakes it now
		case <-t.Context().Done():
			return
		}
		if _, _, err := q.Decide(context.Background(), id, approval.Decision{Approve: true,
			By: "operator:test", Via: "cli"}); err == nil {
			decided <- time.Now()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "media_play", Arguments: mediaArgs(t, f, id)})
	if err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	if res.IsError || !strings.Contains(text(res), `"SUCCESS"`) {
		t.Fatalf("not woken by the change: %s", text(res))
	}
	// the decision runs the device, then the result is stored: the answer
	// follows within a fraction of a second (the bound is for a loaded machine)
	d2 := answered.Sub(<-decided)
	if d2 > 3*time.Second {
		t.Fatalf("answered %s after the decision", d2)
	}
	t.Logf("answered %s after the decision", d2)
}

// readsSeen is this home's queue telling the test when a waiting call has
// read its task pending twice: a wait reads once, starts following the
// queue's changes, then reads again, so after the second read only the
// change feed (or the backstop re-read) brings it news.
type readsSeen struct {
	*approval.Queue
	followed chan struct{}

	mu      sync.Mutex
	pending int
}

func (r *readsSeen) Get(id string) (approval.Record, error) {
	rec, err := r.Queue.Get(id)
	if err == nil && rec.State == approval.Pending {
		r.mu.Lock()
		r.pending++
		if r.pending == 2 {
			r.followed <- struct{}{}
		}
		r.mu.Unlock()
	}
	return rec, err
}

// fakeReader is a queue whose one task the test moves, with a change feed
// the test drives.
type fakeReader struct {
	mu      sync.Mutex
	read    int // Gets so far
	rec     approval.Record
	res     *task.Result
	changes chan approval.Change
	started int
	stopped chan struct{}
}

func newFakeReader(rec approval.Record) *fakeReader {
	return &fakeReader{rec: rec, changes: make(chan approval.Change), stopped: make(chan struct{}, 8)}
}

func (f *fakeReader) Get(id string) (approval.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.read++
	if id != f.rec.TaskID {
		return approval.Record{}, fmt.Errorf("%w: %s", approval.ErrNotFound, id)
	}
	return f.rec, nil
}

func (f *fakeReader) Result(id string) (*task.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.res == nil {
		return nil, task.ErrNotFound
	}
	return f.res, nil
}

func (f *fakeReader) Changes(ctx context.Context) (<-chan approval.Change, error) {
	f.mu.Lock()
	f.started++
	f.mu.Unlock()
	out := make(chan approval.Change)
	go func() {
		defer close(out)
		defer func() { f.stopped <- struct{}{} }()
		for {
			select {
			case <-ctx.Done():
				return
			case c := <-f.changes:
				select {
				case out <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

func (f *fakeReader) reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.read
}

func (f *fakeReader) starts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

func (f *fakeReader) set(state approval.State, res *task.Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec.State, f.res = state, res
}

func waitServer(q approval.Reader) *server {
	return &server{d: Deps{Now: time.Now, Poll: time.Hour, Log: slog.New(slog.DiscardHandler)}, feed: newChangeFeed(q)}
}

// TestMCPWaitOutlastsTheDeadlineForTheExpiry: a shared queue records an
// expiry at its executor's next pass, after the deadline; the wait takes
// that expiry rather than answer "pending" on a task past its deadline
// (the cause of TestQueueMcpWaitEndsAtTheDeadline's flakes: the wait ended
// one second after the deadline, the executor's pass came up to a second
// later).
func TestMCPWaitOutlastsTheDeadlineForTheExpiry(t *testing.T) {
	clk := approvaltest.NewClock()
	q := newFakeReader(approval.Record{TaskID: "t1", State: approval.Pending,
		ExpiresAt: clk.Now().Add(200 * time.Millisecond)})
	s := waitServer(q)
	s.d.Now = clk.Now
	answered := make(chan *mcp.CallToolResult, 1)
	go func() { answered <- s.wait(t.Context(), nil, q, "t1", time.Minute) }()
	// past the deadline by more than a second, the call reads the task
	// still pending (a change wakes it: the feed takes one only once the
	// call follows the queue) and must wait on
	clk.Advance(200*time.Millisecond + 1500*time.Millisecond)
	n := q.reads()
	change := func() {
		t.Helper()
		select {
		case q.changes <- approval.Change{IDs: []string{"t1"}}:
		case res := <-answered:
			t.Fatalf("answered before the expiry was recorded: %s", text(res))
		}
	}
	change()
	testwait.Until(t, 10*time.Second, "a read past the deadline", func() bool { return q.reads() > n })
	// the executor's pass records the expiry
	q.set(approval.Expired, &task.Result{TaskID: "t1", Status: task.StatusFailure,
		Error: task.Errorf(task.ApprovalTimeout, "expired")})
	// from here an answer is right, whether the change or one of the call's
	// own re-reads past the deadline finds the expiry first
	var res *mcp.CallToolResult
	select {
	case q.changes <- approval.Change{IDs: []string{"t1"}}:
		res = <-answered
	case res = <-answered:
	}
	if !res.IsError || !strings.Contains(text(res), string(task.ApprovalTimeout)) {
		t.Fatalf("not the expiry: %s", text(res))
	}
}

// TestMCPWaitReadsAgainAtTheDeadline: this home's queue expires a task
// when it is read at its deadline; with no change and no poll, the wait
// reads it then.
func TestMCPWaitReadsAgainAtTheDeadline(t *testing.T) {
	q := newFakeReader(approval.Record{TaskID: "t1", State: approval.Pending,
		ExpiresAt: time.Now().Add(300 * time.Millisecond)})
	s := waitServer(q)
	rq := &expiringReader{fakeReader: q}
	start := time.Now()
	res := s.wait(t.Context(), nil, rq, "t1", time.Minute)
	if !res.IsError || !strings.Contains(text(res), string(task.ApprovalTimeout)) {
		t.Fatalf("not the expiry: %s", text(res))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("answered %s after the start", d)
	}
}

// expiringReader expires the task when it is read at or past its deadline,
// as approval.Queue.Get does.
type expiringReader struct{ *fakeReader }

func (e *expiringReader) Get(id string) (approval.Record, error) {
	r, err := e.fakeReader.Get(id)
	if err == nil && r.State == approval.Pending && !time.Now().Before(r.ExpiresAt) {
		e.set(approval.Expired, &task.Result{TaskID: id, Status: task.StatusFailure,
			Error: task.Errorf(task.ApprovalTimeout, "expired")})
		return e.fakeReader.Get(id)
	}
	return r, err
}

// TestChangeFeedWakesTheCallsItConcerns: one feed for every waiting call,
// each woken by a change naming its task or by All, started by the first
// and stopped when the last one leaves.
func TestChangeFeedWakesTheCallsItConcerns(t *testing.T) {
	q := newFakeReader(approval.Record{})
	f := newChangeFeed(q)
	a, leaveA, err := f.wait("a")
	if err != nil {
		t.Fatal(err)
	}
	b, leaveB, _ := f.wait("b")
	woken := func(w <-chan struct{}) bool {
		select {
		case <-w:
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}
	q.changes <- approval.Change{IDs: []string{"b", "c"}}
	if !woken(b) || woken(a) {
		t.Fatal("a change woke the wrong call")
	}
	q.changes <- approval.Change{All: true}
	if !woken(a) || !woken(b) {
		t.Fatal("All did not wake every call")
	}
	if n := q.starts(); n != 1 {
		t.Fatalf("%d feeds for two calls", n)
	}
	leaveA()
	leaveB()
	select {
	case <-q.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the feed runs on with no call waiting")
	}
	if _, leave, err := f.wait("c"); err != nil || q.starts() != 2 {
		t.Fatalf("a later call: %d feeds, %v", q.starts(), err)
	} else {
		leave()
	}
}

// A feed that cannot start leaves the call to its re-reads.
func TestChangeFeedThatCannotStart(t *testing.T) {
	f := newChangeFeed(brokenReader{})
	if _, leave, err := f.wait("a"); err == nil {
		t.Fatal("no error")
	} else {
		leave()
	}
}

type brokenReader struct{ approval.Reader }

func (brokenReader) Changes(context.Context) (<-chan approval.Change, error) {
	return nil, errors.New("too many open files")
}

// A call answered at once (a final task, a wait of 0) follows nothing: a
// local feed would cost three file watches and an inbox sweep.
func TestMCPWaitAnsweredAtOnceFollowsNothing(t *testing.T) {
	q := newFakeReader(approval.Record{TaskID: "t1", State: approval.Done, ExpiresAt: time.Now().Add(time.Hour)})
	q.set(approval.Done, &task.Result{TaskID: "t1", Status: task.StatusSuccess})
	s := waitServer(q)
	if res := s.wait(t.Context(), nil, q, "t1", time.Minute); res.IsError {
		t.Fatalf("final task: %s", text(res))
	}
	q.set(approval.Pending, nil)
	if res := s.wait(t.Context(), nil, q, "t1", 0); res.IsError || !strings.Contains(text(res), "pending") {
		t.Fatalf("wait 0: %s", text(res))
	}
	if n := q.starts(); n != 0 {
		t.Fatalf("%d feeds started", n)
	}
}

// A wait whose queue's changes cannot be followed re-reads often, not at
// the backstop's pace.
func TestMCPWaitUnfollowedReadsOften(t *testing.T) {
	q := newFakeReader(approval.Record{TaskID: "t1", State: approval.Pending, ExpiresAt: time.Now().Add(time.Hour)})
	br := &unfollowable{q}
	s := waitServer(br)
	go func() {
		// the call read the task, failed to follow the queue and read it
		// again: it pauses now, and only re-reading brings the news
		if testwait.Poll(10*time.Second, func() error {
			if q.reads() < 2 {
				return errors.New("not read twice")
			}
			return nil
		}) == nil {
			q.set(approval.Done, &task.Result{TaskID: "t1", Status: task.StatusSuccess})
		}
	}()
	start := time.Now()
	if res := s.wait(t.Context(), nil, br, "t1", 10*time.Second); res.IsError || !strings.Contains(text(res), "SUCCESS") {
		t.Fatalf("not read again: %s", text(res))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("read again %s later", d)
	}
}

type unfollowable struct{ *fakeReader }

func (unfollowable) Changes(context.Context) (<-chan approval.Change, error) {
	return nil, errors.New("too many open files")
}
