package rules

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testwait"
)

// TestLiveRevokeBeforeDecide races decisions against revocations: no
// decision that starts after Revoke returned is made by the revoked rule,
// whatever the generation file's timestamps say. Each round adds a rule
// through one Store (another process, as it were) while four goroutines
// decide through a Live over another.
func TestLiveRevokeBeforeDecide(t *testing.T) {
	h := newStoreHome(t)
	live, err := NewLive(nil, h.open(t), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	other := h.open(t)
	var (
		revoked   atomic.Value // the id revoked last, once Revoke returned
		decisions atomic.Int64
		bad       atomic.Int64
		stop      atomic.Bool
		wg        sync.WaitGroup
	)
	revoked.Store("")
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				gone := revoked.Load().(string)
				v := live.Decide(kitchenPause, h.clock.Now())
				if v.Rule != nil && v.Rule.ID == gone {
					bad.Add(1)
				}
				decisions.Add(1)
			}
		}()
	}
	for round := range 16 {
		st, err := other.Add(pauseKitchen(Deny, time.Hour, h.clock.Now()), nil)
		if err != nil {
			t.Fatal(err)
		}
		n := decisions.Load()
		testwait.Until(t, 10*time.Second, "decisions", func() bool { return decisions.Load() > n+20 })
		if _, err := other.Revoke(st.ID, Actor{By: "operator:ada"}, "round over"); err != nil {
			t.Fatal(err)
		}
		revoked.Store(st.ID)
		n = decisions.Load()
		testwait.Until(t, 10*time.Second, "decisions", func() bool { return decisions.Load() > n+20 })
		if round == 8 {
			// past the reload window: the stat alone must tell the change
			p := filepath.Join(other.Dir(), GenerationFile)
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d decisions made by a rule revoked before they started (of %d)", bad.Load(), decisions.Load())
	}
}

// BenchmarkLiveDecide1000Rules: the queue's decision with 1,000 config
// rules and three runtime rules, the store unchanged (the steady state of
// a long-running serve): the config set's cost plus a stat.
func BenchmarkLiveDecide1000Rules(b *testing.B) {
	h := &storeHome{dir: b.TempDir(), clock: &testClock{t: at(12, 0)}}
	var err error
	if h.log, err = openLog(h); err != nil {
		b.Fatal(err)
	}
	s, err := OpenStore(filepath.Join(h.dir, "rules"), h.log, h.clock.Now)
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		if _, err := s.Add(pauseKitchen(Deny, time.Hour, h.clock.Now()), nil); err != nil {
			b.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(s.Dir(), GenerationFile), old, old)
	live, err := NewLive(benchRules(b), s, utc, nil)
	if err != nil {
		b.Fatal(err)
	}
	f := play("agent-8", "kitchen", "https://media.example.com/a.mp3")
	now := at(12, 0)
	if v := live.Decide(f, now); len(v.Matched) == 0 {
		b.Fatalf("the task should match some rules: %+v", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		live.Decide(f, now)
	}
}

// BenchmarkLiveReloadCheck: what each decision pays to see whether the
// store changed (a stat of the generation file), the store unchanged.
func BenchmarkLiveReloadCheck(b *testing.B) {
	h := &storeHome{dir: b.TempDir(), clock: &testClock{t: at(12, 0)}}
	var err error
	if h.log, err = openLog(h); err != nil {
		b.Fatal(err)
	}
	s, err := OpenStore(filepath.Join(h.dir, "rules"), h.log, h.clock.Now)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Add(pauseKitchen(Deny, time.Hour, h.clock.Now()), nil); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(s.Dir(), GenerationFile), old, old)
	live, err := NewLive(nil, s, utc, nil)
	if err != nil {
		b.Fatal(err)
	}
	live.refresh()
	b.ReportAllocs()
	for b.Loop() {
		live.refresh()
	}
}

// TestLiveRunSweepsOnTime: with no decision at all, Run writes a rule's
// rule_expired entry once its expiry has passed.
func TestLiveRunSweepsOnTime(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	if _, err := s.Add(pauseKitchen(Deny, time.Minute, h.clock.Now()), nil); err != nil {
		t.Fatal(err)
	}
	live, err := NewLive(nil, h.open(t), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); live.Run(ctx, time.Millisecond) }()
	defer func() { cancel(); <-done }()
	expired := func() bool {
		for _, e := range h.events(t) {
			if strings.HasPrefix(e, "rule_expired rule:rt-0001") {
				return true
			}
		}
		return false
	}
	time.Sleep(20 * time.Millisecond) // ticks before the expiry sweep nothing
	if expired() {
		t.Fatal("swept before its expiry")
	}
	h.clock.Add(time.Minute)
	testwait.Until(t, 10*time.Second, "the rule_expired entry", expired)
}
