package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
)

// nextSharedChange is the next change on ch, failing when none comes or ch closed.
func nextSharedChange(t *testing.T, ch <-chan approval.Change) approval.Change {
	t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			t.Fatal("the changes ended")
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no change came")
	}
	return approval.Change{}
}

// closes waits for ch to close, failing when a change comes instead.
func closes(t *testing.T, ch <-chan approval.Change) {
	t.Helper()
	select {
	case c, ok := <-ch:
		if ok {
			t.Fatalf("a change (%+v) instead of the end", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the changes did not end")
	}
}

// Before the server answers, the shared queue is the engine's
// "disconnected" to a screen: each change of status tells the pane to list
// again (and Pending says why there is nothing), no decision is sent, and
// its changes end with the pane's ctx and with Close.
func TestSharedTasksBeforeTheConnection(t *testing.T) {
	s := newSharedTasks("nats://queue.example:4222")
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Changes(ctx); err == nil {
		t.Fatal("a second reader of the changes was let in")
	}
	s.failed(errors.New("connection refused"), false)
	if c := nextSharedChange(t, ch); !c.All {
		t.Fatalf("a change of status is %+v, want All", c)
	}
	if _, err := s.Pending(); !errors.Is(err, approval.ErrDisconnected) || !errors.Is(err, errNotConnected) {
		t.Fatalf("pending before the connection: %v", err)
	}
	_, _, err = s.Decide(context.Background(), "t-1", approval.Decision{Approve: true, By: "operator:ada"})
	if !errors.Is(err, approval.ErrDisconnected) {
		t.Fatalf("a decision before the connection: %v", err)
	}
	cancel()
	closes(t, ch)
	// a new reader once the first has gone; Close ends it
	ch, err = s.Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	closes(t, ch)
	if _, err := s.Changes(context.Background()); err == nil {
		t.Fatal("changes followed after Close")
	}
}
