package natsqueue

import (
	"context"
	"slices"
	"testing"

	"github.com/vigil-dev/vigil/exec/approval"
)

// A reader that is busy gets what piled up as one change, each id once; All
// takes the place of the ids.
func TestChangeSubMergesWhileTheReaderIsBusy(t *testing.T) {
	s := newChangeSub()
	s.add(approval.Change{IDs: []string{"b"}})
	s.add(approval.Change{IDs: []string{"a", "b"}})
	if c, ok := s.take(); !ok || !slices.Equal(c.IDs, []string{"a", "b"}) || c.All {
		t.Fatalf("merged %+v", c)
	}
	if _, ok := s.take(); ok {
		t.Fatal("taken twice")
	}
	s.add(approval.Change{IDs: []string{"c"}})
	s.add(approval.Change{All: true})
	s.add(approval.Change{IDs: []string{"d"}})
	if c, _ := s.take(); !c.All || len(c.IDs) != 0 {
		t.Fatalf("after All %+v", c)
	}
	// delivered to the reader, closed when its ctx ends
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan approval.Change)
	go s.deliver(ctx, nil, out)
	s.add(approval.Change{IDs: []string{"e"}})
	if c := <-out; !slices.Equal(c.IDs, []string{"e"}) {
		t.Fatalf("delivered %+v", c)
	}
	cancel()
	if _, ok := <-out; ok {
		t.Fatal("not closed when ctx ended")
	}
}

func TestTaskIDOfKey(t *testing.T) {
	if id, ok := taskIDOfKey(TaskKey("play-1")); !ok || id != "play-1" {
		t.Fatalf("%q %v", id, ok)
	}
	for _, k := range []string{"decision.x", "task.!!", "task." + "Li4vZXRj"} { // "../etc"
		if id, ok := taskIDOfKey(k); ok {
			t.Fatalf("%s read as %q", k, id)
		}
	}
}
