package natsqueue

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"sync"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// changeSub is one Changes call's reader: the changes noted for it pile up
// (merged, each id once) while it is busy, so the watch never waits for a
// reader.
type changeSub struct {
	mu      sync.Mutex
	pending approval.Change
	ids     map[string]bool
	has     bool
	wake    chan struct{} // holds at most one
}

func newChangeSub() *changeSub { return &changeSub{wake: make(chan struct{}, 1)} }

// add merges c into what waits to be delivered. All takes the place of
// any ids: the reader reloads everything.
func (s *changeSub) add(c approval.Change) {
	s.mu.Lock()
	switch {
	case c.All || s.pending.All:
		s.pending, s.ids = approval.Change{All: true}, nil
	default:
		if s.ids == nil {
			s.ids = map[string]bool{}
		}
		for _, id := range c.IDs {
			if !s.ids[id] {
				s.ids[id] = true
				s.pending.IDs = append(s.pending.IDs, id)
			}
		}
	}
	s.has = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // a wake-up is already waiting; it takes this change too
	}
}

// take returns and forgets what waits, sorted (false: nothing).
func (s *changeSub) take() (approval.Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.pending, s.has
	s.pending, s.ids, s.has = approval.Change{}, nil, false
	slices.Sort(c.IDs)
	return c, ok
}

// deliver hands what piles up to out until ctx ends or quit is closed
// (nil: never), then closes out.
func (s *changeSub) deliver(ctx context.Context, quit <-chan struct{}, out chan<- approval.Change) {
	defer close(out)
	for {
		select {
		case <-ctx.Done():
			return
		case <-quit:
			return
		case <-s.wake:
		}
		c, ok := s.take()
		if !ok {
			continue
		}
		select {
		case out <- c:
		case <-ctx.Done():
			return
		case <-quit:
			return
		}
	}
}

// taskIDOfKey is the task id a bucket key names (TaskKey's inverse).
func taskIDOfKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "task.")
	if !ok {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || task.ValidateTaskID(string(raw)) != nil || TaskKey(string(raw)) != key {
		return "", false
	}
	return string(raw), true
}
