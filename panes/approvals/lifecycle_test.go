package approvalspane

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/task"
)

// heldSource is the env's queue whose Preview and Decide wait: Preview for
// its ctx to end, Decide for release. It says when each started.
type heldSource struct {
	*approval.Queue
	previewing, deciding chan context.Context
	release              chan struct{}
}

func (s *heldSource) Preview(ctx context.Context, id string) (approval.View, error) {
	s.previewing <- ctx
	<-ctx.Done()
	return approval.View{}, ctx.Err()
}

func (s *heldSource) Decide(ctx context.Context, id string, d approval.Decision) (approval.Record, *task.Result, error) {
	s.deciding <- ctx
	<-s.release
	return s.Queue.Decide(ctx, id, d)
}

func heldPane(t *testing.T) (*Pane, *heldSource) {
	env := approvaltest.New(t)
	env.Submit(env.Play("held", "/media/a.mkv"))
	src := &heldSource{Queue: env.Queue, previewing: make(chan context.Context, 1), deciding: make(chan context.Context, 1),
		release: make(chan struct{})}
	return New(Options{Queue: src, Operator: "operator:ada", Now: env.Clock.Now}, styles()), src
}

// closed reports whether Close returned within a moment (it is expected
// not to while something it waits for is held, so the moment is short).
func closed(done <-chan struct{}, wait time.Duration) bool {
	select {
	case <-done:
		return true
	case <-time.After(wait):
		return false
	}
}

// The pane's reads run under the ctx Init received: ending it ends them.
func TestReadsRunUnderTheProgramsContext(t *testing.T) {
	p, src := heldPane(t)
	ctx, cancel := context.WithCancel(context.Background())
	p.Init(ctx)
	out := make(chan any, 1)
	go func() { out <- p.loadView("held")() }()
	got := <-src.previewing
	cancel()
	if got.Err() == nil {
		t.Fatal("the preview's ctx did not end with the program's")
	}
	if m := (<-out).(viewMsg); m.err == nil {
		t.Fatal("the read did not end with the program's ctx")
	}
	p.Close()
}

// Close ends the reads under way and returns once they have; after it a
// command does nothing.
func TestCloseWaitsForTheReadsUnderWay(t *testing.T) {
	p, src := heldPane(t)
	p.Init(context.Background())
	out := make(chan any, 1)
	go func() { out <- p.loadView("held")() }()
	<-src.previewing
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	if !closed(done, 10*time.Second) {
		t.Fatal("Close did not end the read under way")
	}
	select {
	case <-out:
	default:
		t.Fatal("Close returned before the read it ended had returned")
	}
	if msg := p.loadView("held")(); msg != nil {
		t.Fatalf("a command ran after Close: %#v", msg)
	}
	select {
	case <-src.previewing:
		t.Fatal("the source was read after Close")
	default:
	}
}

// A decision under way is not cancelled by Close, which waits for it: the
// engine records how it ended.
func TestCloseWaitsForADecisionUnderWay(t *testing.T) {
	p, src := heldPane(t)
	p.Init(context.Background())
	out := make(chan any, 1)
	go func() { out <- p.denyTask("held", "not now")() }()
	dctx := <-src.deciding
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	if closed(done, 50*time.Millisecond) {
		t.Fatal("Close returned while a decision was under way")
	}
	if dctx.Err() != nil {
		t.Fatal("Close cancelled a decision under way")
	}
	close(src.release)
	<-done
	m := (<-out).(outcomeMsg)
	if m.err != nil || m.rec.State != approval.Denied {
		t.Fatalf("the decision did not finish: %+v", m)
	}
}

// feedSource is the env's queue with a feed the test writes.
type feedSource struct {
	*approval.Queue
	ch chan approval.Change
}

func (s *feedSource) Changes(ctx context.Context) (<-chan approval.Change, error) {
	out := make(chan approval.Change)
	go func() {
		defer close(out)
		for {
			select {
			case c := <-s.ch:
				select {
				case out <- c:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// The pane takes its changes from the feed alone: ids reload those tasks,
// All reloads everything, one reload is in flight at a time and what comes
// meanwhile runs next, merged.
func TestFeedChangesReloadWhatTheyName(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("first", "/media/a.mkv"))
	src := &feedSource{Queue: env.Queue, ch: make(chan approval.Change)}
	p := New(Options{Queue: src, Operator: "operator:ada", Now: env.Clock.Now, Tick: time.Hour}, styles())
	t.Cleanup(p.Close)
	p.Init(context.Background())
	reloadPane(p)
	env.Submit(env.Play("second", "/media/b.mkv"))
	go func() { src.ch <- approval.Change{IDs: []string{"second"}} }()
	msg := p.waitChange()()
	cmd := p.Update(msg)
	if !p.load.loading || p.load.reloads != 2 {
		t.Fatalf("a change did not start a reload (%d reloads)", p.load.reloads)
	}
	// meanwhile: everything may have changed, and a task changed
	p.Update(changeMsg{c: approval.Change{All: true}})
	p.Update(changeMsg{c: approval.Change{IDs: []string{"first"}}})
	if p.load.reloads != 2 {
		t.Fatal("a reload started while one was in flight")
	}
	tasks := awaitMsg[tasksMsg](t, cmd)
	next := p.Update(tasks)
	if got := p.Snapshot().Pending; got != 2 {
		t.Fatalf("%d pending after the change, want 2", got)
	}
	if !p.load.loading || p.load.reloads != 3 || !p.load.work.empty() {
		t.Fatal("what came meanwhile did not run next, merged")
	}
	awaitMsg[listMsg](t, next) // All: everything is reloaded
}

// awaitMsg runs a command's parts (some wait on the feed, forever here)
// each on its own and returns the first message of type T.
func awaitMsg[T tea.Msg](t *testing.T, cmd tea.Cmd) T {
	t.Helper()
	out := make(chan tea.Msg, 16)
	var start func(tea.Cmd)
	start = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					start(c)
				}
				return
			}
			out <- msg
		}()
	}
	start(cmd)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case msg := <-out:
			if m, ok := msg.(T); ok {
				return m
			}
		case <-timeout:
			var zero T
			t.Fatalf("no %T came", zero)
			return zero
		}
	}
}

// Close stops the feed and returns once it has ended.
func TestCloseEndsTheFeed(t *testing.T) {
	env := approvaltest.New(t)
	p := New(Options{Queue: env.Queue, Operator: "operator:ada", Now: env.Clock.Now}, styles())
	p.Init(context.Background())
	ch := p.load.changes
	if ch == nil {
		t.Fatal("the pane does not follow the queue's feed")
	}
	waiting := make(chan tea.Msg, 1)
	go func() { waiting <- p.waitChange()() }()
	p.Close()
	if _, open := <-ch; open {
		t.Fatal("the feed goes on after Close")
	}
	if msg := <-waiting; msg != nil {
		t.Fatalf("the wait on the feed answered %#v after Close", msg)
	}
}

// What the feed could not do (an inbox sweep that failed) is shown with
// the reload it asks for, as the pane's own sweep's error was.
func TestFeedErrorIsShown(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("first", "/media/a.mkv"))
	p := loadedPane(t, env)
	cmd := p.Update(changeMsg{c: approval.Change{Err: errors.New("inbox: cannot move m.json")}})
	p.Update(awaitMsg[tasksMsg](t, cmd))
	if out := ansi.Strip(strings.Join(mustRender(p, 100, 30), "\n")); !strings.Contains(out, "queue error: inbox: cannot move m.json") {
		t.Fatalf("the feed's error is not shown:\n%s", out)
	}
	if p.Snapshot().Pending != 1 {
		t.Fatal("the feed's error emptied the queue")
	}
}
