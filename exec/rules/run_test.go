package rules

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func untilRestart(h *storeHome) AddRequest {
	r := pauseKitchen(Deny, 0, h.clock.Now())
	r.ExpiresAt, r.UntilRestart = time.Time{}, true
	return r
}

func expiredReasons(t *testing.T, h *storeHome) []string {
	t.Helper()
	var out []string
	for _, e := range h.events(t) {
		if strings.HasPrefix(e, "rule_expired") {
			out = append(out, e)
		}
	}
	return out
}

// TestUntilRestart: a rule bound to the run of vigil serve decides in
// every process while that run lives and ends, audited, when it stops,
// when serve starts again, or when its process is found gone.
func TestUntilRestart(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	if _, err := s.Add(untilRestart(h), nil); err == nil || !strings.Contains(err.Error(), "no vigil serve is running") {
		t.Fatalf("until restart without a run: %v", err)
	}
	end, err := s.BeginRun()
	if err != nil {
		t.Fatal(err)
	}
	st, err := h.open(t).Add(untilRestart(h), nil) // another process
	if err != nil {
		t.Fatal(err)
	}
	if st.Run == "" || !st.ExpiresAt.Equal(h.clock.Now().Add(MaxRuntimeLifetime)) {
		t.Fatalf("stored %+v", st)
	}
	live, err := NewLive(nil, h.open(t), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Deny {
		t.Fatalf("while the run lives: %+v", v)
	}
	// serve stops
	if err := end(); err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Ask {
		t.Fatalf("after serve stopped: %+v", v)
	}
	// serve starts again: a rule of the run before ends
	if _, err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(untilRestart(h), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginRun(); err != nil {
		t.Fatal(err)
	}
	// a run whose process dies without a word (a crash): a serve in a
	// process of its own (here a sleep standing in for it)
	serve := exec.Command("sleep", "60")
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(Run{Token: "0123456789abcdef", PID: serve.Process.Pid, StartedAt: h.clock.Now()})
	if err := os.WriteFile(filepath.Join(s.Dir(), RunFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.bump(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(untilRestart(h), nil); err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Deny {
		t.Fatalf("the new run's rule: %+v", v)
	}
	serve.Process.Kill()
	serve.Wait()
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Ask {
		t.Fatalf("after serve's process is gone: %+v", v)
	}
	if _, err := s.Sweep(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rule_expired rule:rt-0001 vigil", "rule_expired rule:rt-0002 vigil", "rule_expired rule:rt-0003 vigil",
	}
	got := expiredReasons(t, h)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("rule_expired entries %v, want %v", got, want)
	}
	// and why each ended
	var reasons []string
	for _, e := range h.details(t, "rule_expired") {
		reasons = append(reasons, e["reason"].(string))
	}
	if len(reasons) != 3 || reasons[0] != "Vigil stopped" || reasons[1] != "Vigil restarted" || !strings.HasPrefix(reasons[2], "Vigil stopped (its process, pid") {
		t.Fatalf("reasons: %q", reasons)
	}
}
