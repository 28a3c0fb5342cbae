package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
)

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type storeHome struct {
	dir   string
	clock *testClock
	log   *audit.Log
	n     int
}

func newStoreHome(t *testing.T) *storeHome {
	t.Helper()
	dir := t.TempDir()
	c := &testClock{t: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	l, err := audit.Open(filepath.Join(dir, "audit.log"), c.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &storeHome{dir: dir, clock: c, log: l}
}

// open opens a Store over the home, as another process would.
func (h *storeHome) open(t *testing.T) *Store {
	t.Helper()
	s, err := OpenStore(filepath.Join(h.dir, "rules"), h.log, h.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	s.NewID = func() string { h.n++; return fmt.Sprintf("rt-%04d", h.n) }
	return s
}

func (h *storeHome) events(t *testing.T) []string {
	t.Helper()
	var out []string
	audit.Scan(h.log.Path(), 0, func(l audit.Line) bool {
		out = append(out, l.Entry.Event+" "+l.Entry.Target+" "+l.Entry.Actor)
		return true
	})
	return out
}

func pauseKitchen(d Decision, dur time.Duration, now time.Time) AddRequest {
	return AddRequest{Decision: d, Agents: []string{"claude-home"}, Capabilities: []string{"MEDIA_PAUSE"},
		Devices: []string{"kitchen"}, ExpiresAt: now.Add(dur), Reason: "busy afternoon",
		Actor: Actor{By: "operator:ada", Via: "cli"}}
}

var kitchenPause = Facts{Agent: "claude-home", Capability: "MEDIA_PAUSE", Device: "kitchen"}

func TestStoreAddRequestChecks(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	now := h.clock.Now()
	for name, c := range map[string]struct {
		req  AddRequest
		want string
	}{
		"no reason":      {AddRequest{Decision: Deny, ExpiresAt: now.Add(time.Hour)}, "reason: must say why"},
		"no expiry":      {AddRequest{Decision: Deny, Reason: "x"}, "expires: a rule added at run time must expire"},
		"past expiry":    {AddRequest{Decision: Deny, Reason: "x", ExpiresAt: now.Add(-time.Second)}, "expires: must be after now"},
		"too long":       {AddRequest{Decision: Deny, Reason: "x", ExpiresAt: now.Add(31 * 24 * time.Hour)}, "at most 30 days"},
		"allow no caps":  {AddRequest{Decision: Allow, Reason: "x", ExpiresAt: now.Add(time.Hour)}, "rules[0].capabilities: an allow rule must name"},
		"bad decision":   {AddRequest{Decision: "maybe", Reason: "x", ExpiresAt: now.Add(time.Hour)}, "rules[0].decision"},
		"bad host glob":  {AddRequest{Decision: Deny, Reason: "x", ExpiresAt: now.Add(time.Hour), MediaHosts: []string{"Ads.example.com"}}, "rules[0].media_hosts[0]: must be lower-case"},
		"bad glob":       {AddRequest{Decision: Deny, Reason: "x", ExpiresAt: now.Add(time.Hour), Devices: []string{"[kitchen"}}, "rules[0].devices[0]"},
		"control reason": {AddRequest{Decision: Deny, Reason: strings.Repeat("x", MaxReasonBytes+1), ExpiresAt: now.Add(time.Hour)}, "reason: longer than"},
	} {
		_, err := s.Add(c.req, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if ev := h.events(t); len(ev) != 0 {
		t.Fatalf("refused adds were audited: %v", ev)
	}
}

// TestStoreLifecycle adds, revokes and expires rules, checking the audit
// entries (one each) and that a Live over another Store instance — as in
// another process — sees each change at the next decision.
func TestStoreLifecycle(t *testing.T) {
	h := newStoreHome(t)
	cfgSet, err := FromConfig(config.Config{Rules: []config.RuleConfig{{ID: "no-living-room", Decision: "deny", Devices: []string{"living-room"}}}}, Options{}, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	live, err := NewLive(cfgSet, h.open(t), Options{Location: time.UTC}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Ask || v.Rule != nil {
		t.Fatalf("before any runtime rule: %+v", v)
	}
	cli := h.open(t)
	st, err := cli.Add(pauseKitchen(Allow, 15*time.Minute, h.clock.Now()), []string{"no-living-room"})
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != "rt-0001" || st.State != StateActive || st.CreatedBy != "operator:ada" {
		t.Fatalf("added %+v", st)
	}
	v := live.Decide(kitchenPause, h.clock.Now())
	if v.Decision != Allow || v.Rule == nil || v.Rule.ID != "rt-0001" || v.Rule.Source != SourceRuntime {
		t.Fatalf("the live set did not see the added rule: %+v", v)
	}
	// strictest wins across config and runtime rules
	lr := kitchenPause
	lr.Device = "living-room"
	if _, err := cli.Add(AddRequest{Decision: Allow, Capabilities: []string{"MEDIA_*"}, ExpiresAt: h.clock.Now().Add(time.Hour), Reason: "x", Actor: Actor{By: "operator:ada"}}, nil); err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(lr, h.clock.Now()); v.Decision != Deny || v.Rule.ID != "no-living-room" || len(v.Matched) != 2 {
		t.Fatalf("config deny vs runtime allow: %+v", v)
	}
	// revoke: the next decision no longer sees it
	if _, err := cli.Revoke("rt-0002", Actor{By: "operator:ada"}, "done"); err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(lr, h.clock.Now()); len(v.Matched) != 1 {
		t.Fatalf("a revoked rule still matches: %+v", v)
	}
	if _, err := cli.Revoke("rt-0002", Actor{By: "operator:ada"}, "again"); err == nil || !strings.Contains(err.Error(), "no such runtime rule") {
		t.Fatalf("revoking twice: %v", err)
	}
	// expiry: on time, then swept once by the first decision after it
	h.clock.Add(15*time.Minute - time.Second)
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Allow {
		t.Fatalf("a second before expiry: %+v", v)
	}
	h.clock.Add(time.Second)
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Ask {
		t.Fatalf("at expiry: %+v", v)
	}
	live.Decide(kitchenPause, h.clock.Now())
	if _, err := cli.Sweep(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rule_added rule:rt-0001 operator:ada", "rule_added rule:rt-0002 operator:ada",
		"rule_revoked rule:rt-0002 operator:ada", "rule_expired rule:rt-0001 vigil",
	}
	if got := h.events(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("audit:\n%v\nwant\n%v", got, want)
	}
	if act, _ := cli.Active(); len(act) != 0 {
		t.Fatalf("still active: %+v", act)
	}
}

// TestStoreExpiryAcrossRestart: a rule persisted by one process is seen
// by a new one, which lets it expire at the same moment.
func TestStoreExpiryAcrossRestart(t *testing.T) {
	h := newStoreHome(t)
	if _, err := h.open(t).Add(pauseKitchen(Deny, time.Hour, h.clock.Now()), nil); err != nil {
		t.Fatal(err)
	}
	h.clock.Add(30 * time.Minute)
	live, err := NewLive(nil, h.open(t), Options{}, nil) // a new process
	if err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now().Add(30*time.Minute-time.Nanosecond)); v.Decision != Deny {
		t.Fatalf("just before expiry, after a restart: %+v", v)
	}
	h.clock.Add(30 * time.Minute)
	live2, err := NewLive(nil, h.open(t), Options{}, nil) // restarted at the expiry: swept on open
	if err != nil {
		t.Fatal(err)
	}
	if v := live2.Decide(kitchenPause, h.clock.Now()); v.Decision != Ask {
		t.Fatalf("at expiry, after a restart: %+v", v)
	}
	live.Decide(kitchenPause, h.clock.Now()) // the old process sweeps too: nothing left to audit
	n := 0
	for _, e := range h.events(t) {
		if strings.HasPrefix(e, "rule_expired") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d rule_expired entries: %v", n, h.events(t))
	}
}

// TestStoreRecovery leaves each transition half done, as a crash would,
// and checks what the next locked operation makes of it.
func TestStoreRecovery(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	// an add whose entry never made it: rolled back
	st := pauseKitchen(Allow, time.Hour, h.clock.Now()).stored("rt-lost", h.clock.Now())
	from := int64(0)
	st.State, st.LogFrom = StateAdding, &from
	os.MkdirAll(s.Dir(), 0o700)
	if err := s.write(st); err != nil {
		t.Fatal(err)
	}
	// an add whose entry was written: completed
	st2 := pauseKitchen(Deny, time.Hour, h.clock.Now()).stored("rt-kept", h.clock.Now())
	st2.State, st2.LogFrom = StateAdding, &from
	if err := s.write(st2); err != nil {
		t.Fatal(err)
	}
	if err := s.appendAdded(st2); err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	act, _ := s.Active()
	if len(act) != 1 || act[0].ID != "rt-kept" {
		t.Fatalf("after recovery: %+v", act)
	}
	// an end whose entry never made it: written once, then removed
	end := int64(0)
	st2.State, st2.LogFrom, st2.End = StateEnding, &end, &Ending{Event: audit.EventRuleRevoked, By: "operator:ada", Reason: "r"}
	if err := s.write(st2); err != nil {
		t.Fatal(err)
	}
	live, err := NewLive(nil, h.open(t), Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Ask {
		t.Fatalf("an ending rule still decides: %+v", v)
	}
	if err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	if err := s.Recover(); err != nil {
		t.Fatal(err)
	}
	want := []string{"rule_added rule:rt-kept operator:ada", "rule_revoked rule:rt-kept operator:ada"}
	if got := h.events(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("audit %v, want %v", got, want)
	}
	if _, err := s.Lookup("rt-kept"); err == nil {
		t.Fatal("an ended rule's file is left")
	}
}

func TestLiveHashMatchesAudit(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	if _, err := s.Add(pauseKitchen(Deny, time.Hour, h.clock.Now()), nil); err != nil {
		t.Fatal(err)
	}
	live, err := NewLive(nil, s, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := live.Decide(kitchenPause, h.clock.Now())
	var added string
	audit.Scan(h.log.Path(), 0, func(l audit.Line) bool {
		added = string(l.Entry.Details)
		return true
	})
	if v.Rule == nil || !strings.Contains(added, `"hash":"`+v.Rule.Hash+`"`) {
		t.Fatalf("the rule_added entry does not carry the hash decisions record: %s vs %+v", added, v.Rule)
	}
}

func openLog(h *storeHome) (*audit.Log, error) {
	return audit.Open(filepath.Join(h.dir, "audit.log"), h.clock.Now)
}

// TestLiveDamagedStoreFailsSafe: a rule file that cannot be read makes no
// runtime rule decide (the person decides) rather than the rules loaded
// before, one of which may have been revoked since.
func TestLiveDamagedStoreFailsSafe(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	if _, err := os.Stat(s.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("opening the store made its folder: %v", err)
	}
	live, err := NewLive(nil, s, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(pauseKitchen(Deny, time.Hour, h.clock.Now()), nil); err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Deny {
		t.Fatalf("%+v", v)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), "rt-0002.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.bump(); err != nil {
		t.Fatal(err)
	}
	if v := live.Decide(kitchenPause, h.clock.Now()); v.Decision != Ask || v.Rule != nil {
		t.Fatalf("a damaged store still decides: %+v", v)
	}
	if _, err := s.Add(pauseKitchen(Deny, time.Hour, h.clock.Now()), nil); err == nil || !strings.Contains(err.Error(), "rt-0002.json") {
		t.Fatalf("adding to a damaged store: %v", err)
	}
}

// TestRevokeExpiredRule: revoking a rule that expired before anything
// swept it records its expiry, not a revocation, and says so.
func TestRevokeExpiredRule(t *testing.T) {
	h := newStoreHome(t)
	s := h.open(t)
	if _, err := s.Add(pauseKitchen(Deny, time.Minute, h.clock.Now()), nil); err != nil {
		t.Fatal(err)
	}
	h.clock.Add(time.Minute)
	_, err := s.Revoke("rt-0001", Actor{By: "operator:ada"}, "late")
	if !errors.Is(err, ErrUnknownRule) || !strings.Contains(err.Error(), "expired at") {
		t.Fatalf("revoke after expiry: %v", err)
	}
	want := []string{"rule_added rule:rt-0001 operator:ada", "rule_expired rule:rt-0001 vigil"}
	if got := h.events(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("audit %v, want %v", got, want)
	}
}

// details are the details of the home's entries of event.
func (h *storeHome) details(t *testing.T, event string) []map[string]any {
	t.Helper()
	var out []map[string]any
	audit.Scan(h.log.Path(), 0, func(l audit.Line) bool {
		if l.Entry.Event == event {
			var d map[string]any
			json.Unmarshal(l.Entry.Details, &d)
			out = append(out, d)
		}
		return true
	})
	return out
}
