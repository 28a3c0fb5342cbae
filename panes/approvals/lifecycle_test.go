package approvalspane

import (
	"context"
	"testing"
	"time"

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
	return New(Options{Source: src, Operator: "operator:ada", Now: env.Clock.Now}, styles()), src
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
