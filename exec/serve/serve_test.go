package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/metrics"
	"github.com/vigil-dev/vigil/exec/notify"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// realEnv is a queue on the real clock with a short approval timeout: serve
// is about time passing with nothing else running.
type realEnv struct {
	*approvaltest.Env
	q *approval.Queue
}

func newRealEnv(t *testing.T, timeout time.Duration) *realEnv {
	t.Helper()
	base := approvaltest.New(t) // keys, folders
	e := &realEnv{Env: base}
	e.q = e.open(timeout)
	return e
}

// open opens a queue over the env's folders on the real clock, as another
// process would.
func (e *realEnv) open(timeout time.Duration) *approval.Queue {
	t := e.T
	keys := filepath.Join(e.Dir, "keys")
	local, _, err := lease.LocalIssuer(keys)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := lease.NewVerifier(lease.Options{Issuer: lease.DefaultIssuer, Audience: lease.DefaultAudience,
		Leeway: lease.NoLeeway, Keys: []lease.Key{local}, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	res, err := task.OpenStore(filepath.Join(e.Dir, "results"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := task.LoadSigner(filepath.Join(keys, lease.OperatorKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := media.New(media.Options{Devices: e.Devices, Leases: leases, Store: res, Signer: signer, Now: time.Now,
		SimDir: e.SimDir(), Getenv: e.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(e.AuditPath(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	q, err := approval.Open(context.Background(), approval.Options{Dir: e.TasksDir(), Inbox: e.InboxDir(),
		Executor: ex, Devices: e.Devices, Leases: leases, Results: res, Signer: signer, Audit: log,
		Timeout: timeout, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.Audit = log
	return q
}

func (e *realEnv) submit(id string) {
	e.T.Helper()
	out, err := e.q.Submit(context.Background(), e.manifest(id), "cli")
	if err != nil || out.State != "pending" {
		e.T.Fatalf("submit %s: %+v %v", id, out, err)
	}
}

// manifest is a MEDIA_PLAY request with a lease on the real clock.
func (e *realEnv) manifest(id string) []byte {
	e.T.Helper()
	tok, err := lease.Issue(e.Issuer, lease.IssueOptions{Subject: "agent:planner", TaskID: id, Caps: []string{"MEDIA_PLAY"},
		TTL: 30 * time.Minute, JTI: "jti-" + id})
	if err != nil {
		e.T.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/" + id + ".mkv", "target_device": "living-room"}})
	return b
}

// recordState reads record.json directly: going through a queue would
// expire the task itself and prove nothing about serve.
func (e *realEnv) recordState(id string) string {
	b, err := os.ReadFile(filepath.Join(e.TasksDir(), id, "record.json"))
	if err != nil {
		return ""
	}
	var r struct {
		State string `json:"state"`
	}
	json.Unmarshal(b, &r)
	return r.State
}

type events struct {
	mu  sync.Mutex
	got []notify.Event
	at  []time.Time
}

func (ev *events) add(_ context.Context, e notify.Event) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.got = append(ev.got, e)
	ev.at = append(ev.at, time.Now())
}

func (ev *events) list() ([]notify.Event, []time.Time) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return append([]notify.Event(nil), ev.got...), append([]time.Time(nil), ev.at...)
}

func start(t *testing.T, o Options) (*Server, func()) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stop := func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	}
	return s, stop
}

// The task expires at its deadline, not at the next tick (the tick here is
// far longer than the wait), with nothing else opening the queue; the
// person is told when it arrives and when it is about to expire.
func TestServeExpiresOnTime(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	e := newRealEnv(t, timeout)
	q := e.open(timeout) // serve's own queue, as in its own process
	var ev events
	m := metrics.New(metrics.Build{})
	_, stop := start(t, Options{Queue: q, TasksDir: e.TasksDir(), Audit: e.Audit, Metrics: m, Notify: ev.add,
		WarnBefore: time.Second, MaxTick: 30 * time.Second, NotifyWindow: 10 * time.Millisecond})
	defer stop()
	submitted := time.Now()
	e.submit("expire-me")
	deadline := submitted.Add(timeout)
	var expiredAt time.Time
	var expired audit.Entry
	testwait.For(t, 10*time.Second, func() error {
		audit.Scan(e.AuditPath(), 0, func(l audit.Line) bool {
			if l.Entry.Event == audit.EventExpired {
				expired, expiredAt = l.Entry, time.Now()
			}
			return true
		})
		if expiredAt.IsZero() {
			return fmt.Errorf("not expired (state %q)", e.recordState("expire-me"))
		}
		return nil
	})
	// the tick is 30 s: an expiry well before it was scheduled by the
	// deadline (the bound is a third of the tick, not a latency: a loaded
	// machine is late, never 10 s late)
	if late := expiredAt.Sub(deadline); late > 10*time.Second {
		t.Fatalf("expired %s after its deadline", late)
	}
	if st := e.recordState("expire-me"); st != "expired" {
		t.Fatalf("record state %q", st)
	}
	if expired.TaskID != "expire-me" || expired.ErrorCode != string(task.ApprovalTimeout) || expired.Actor != "vigil" {
		t.Fatalf("expired entry %+v", expired)
	}
	// arrival (within a tick of the submission: the tasks/ folder is watched) and the warning before the deadline
	var got []notify.Event
	var at []time.Time
	testwait.Until(t, 5*time.Second, "two notifications", func() bool {
		got, at = ev.list()
		return len(got) >= 2
	})
	if len(got) != 2 || got[0].Kind != notify.Arrived || got[1].Kind != notify.Expiring ||
		got[0].TaskID != "expire-me" || got[0].Agent != "agent:planner" || got[0].Action != "MEDIA_PLAY" || got[0].Device != "living-room" {
		t.Fatalf("events %+v", got)
	}
	if d := at[0].Sub(submitted); d > 10*time.Second {
		t.Errorf("arrival told %s after submission, not within a tick", d)
	}
	// the warning is never early, and comes before the expiry it warns of
	if d := at[1].Sub(deadline.Add(-time.Second)); d < -50*time.Millisecond || at[1].After(expiredAt) {
		t.Errorf("expiry warning %s off its moment (after the expiry: %v)", d, at[1].After(expiredAt))
	}
}

// A hanging notifier changes nothing: expiry still happens on time.
func TestServeHangingNotifierChangesNothing(t *testing.T) {
	const timeout = time.Second
	e := newRealEnv(t, timeout)
	sh := filepath.Join(t.TempDir(), "hang.sh")
	os.WriteFile(sh, []byte("#!/bin/sh\nexec sleep 30\n"), 0o700)
	cmd := notify.Command{Argv: []string{sh, "{agent}"}, Timeout: 20 * time.Second}
	_, stop := start(t, Options{Queue: e.open(timeout), TasksDir: e.TasksDir(), Audit: e.Audit,
		Notify: func(ctx context.Context, ev notify.Event) { cmd.Run(ctx, ev) }})
	e.submit("a")
	e.submit("b")
	testwait.For(t, 10*time.Second, func() error {
		if a, b := e.recordState("a"), e.recordState("b"); a != "expired" || b != "expired" {
			return fmt.Errorf("states %q %q", a, b)
		}
		return nil
	})
	t0 := time.Now()
	stop() // the hanging command is killed at shutdown
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("shutdown took %s", d)
	}
}

// Metrics follow the log as serve runs: the pending gauge and the counters
// of decisions taken by another process.
func TestServeKeepsMetricsCurrent(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	m := metrics.New(metrics.Build{})
	s, stop := start(t, Options{Queue: e.open(time.Minute), TasksDir: e.TasksDir(), Audit: e.Audit, Metrics: m})
	defer stop()
	e.submit("p1")
	e.submit("p2")
	gauge := func() float64 {
		fams, _ := m.Registry().Gather()
		for _, f := range fams {
			if f.GetName() == metrics.ApprovalPending {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return -1
	}
	waitFor(t, "gauge 2", func() bool { return gauge() == 2 })
	if _, _, err := e.q.Decide(context.Background(), "p1", approval.Decision{Approve: true, By: "operator:tui", Via: "tui"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "gauge 1", func() bool { return gauge() == 1 })
	executed := func() float64 {
		fams, _ := m.Registry().Gather()
		for _, f := range fams {
			if f.GetName() == metrics.RequestsTotal {
				for _, mm := range f.GetMetric() {
					return mm.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	waitFor(t, "executed counted", func() bool { return executed() == 1 })
	if err := s.Health(); err != nil {
		t.Fatalf("health: %v", err)
	}
}

// A manifest dropped in the inbox is taken in, and its arrival told, at
// once: the queue's change feed that wakes serve sweeps the inbox (the
// tick here is far longer than the wait).
func TestServeTakesInTheInboxAtOnce(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	var ev events
	_, stop := start(t, Options{Queue: e.open(time.Minute), TasksDir: e.TasksDir(), Audit: e.Audit, Notify: ev.add,
		MaxTick: time.Hour, NotifyWindow: 10 * time.Millisecond})
	defer stop()
	if err := os.MkdirAll(e.q.InboxNew(), 0o700); err != nil {
		t.Fatal(err)
	}
	drop := func(id string) {
		tmp := filepath.Join(e.InboxDir(), id+".tmp")
		if err := os.WriteFile(tmp, e.manifest(id), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(e.q.InboxNew(), id+".json")); err != nil {
			t.Fatal(err)
		}
	}
	drop("inbox-1")
	arrived := func(id string) bool {
		got, _ := ev.list()
		for _, g := range got {
			if g.TaskID == id && g.Kind == notify.Arrived {
				return true
			}
		}
		return false
	}
	waitFor(t, "inbox-1 arrived", func() bool { return arrived("inbox-1") })
	drop("inbox-2")
	waitFor(t, "inbox-2 arrived", func() bool { return arrived("inbox-2") })
	if st := e.recordState("inbox-2"); st != "pending" {
		t.Fatalf("record state %q", st)
	}
	if left, _ := os.ReadDir(e.q.InboxNew()); len(left) != 0 {
		t.Fatalf("the inbox still holds %d files", len(left))
	}
}

// What the change feed could not do (a sweep of an inbox whose processing
// folder is not a folder) is /healthz's to report, as serve's own sweep's
// failure was; serve's next sweep of its own settles it.
func TestServeReportsWhatTheFeedCouldNotDo(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	s, stopRun := start(t, Options{Queue: e.open(time.Minute), TasksDir: e.TasksDir(), Audit: e.Audit, MaxTick: time.Hour})
	var once sync.Once
	stop := func() { once.Do(stopRun) }
	defer stop()
	if err := os.MkdirAll(e.q.InboxNew(), 0o700); err != nil {
		t.Fatal(err)
	}
	processing := filepath.Join(e.InboxDir(), "processing")
	if err := os.RemoveAll(processing); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(processing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.q.InboxNew(), "m.json"), e.manifest("feed-err"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the feed's error reported", func() bool {
		err := s.Health()
		return err != nil && strings.Contains(err.Error(), "change feed")
	})
	stop()
	if err := os.Remove(processing); err != nil {
		t.Fatal(err)
	}
	s.Pass(context.Background())
	if err := s.Health(); err != nil {
		t.Fatalf("after serve's own sweep: %v", err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, what, ok)
}

func TestRecordTimer(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	timer := RecordTimer(e.TasksDir())
	e.submit("t1")
	if _, _, ok := timer("t1"); ok {
		t.Fatal("a pending task has no span")
	}
	if _, _, ok := timer("../../etc"); ok {
		t.Fatal("an invalid id was read")
	}
	if _, _, err := e.q.Decide(context.Background(), "t1", approval.Decision{Approve: true, By: "operator:x", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	from, to, ok := timer("t1")
	if !ok || to.Before(from) || to.Sub(from) > 5*time.Second {
		t.Fatalf("span %v → %v %v", from, to, ok)
	}
}

// /healthz's check fails, with the reason, when the audit log's end was
// altered (no decision could be recorded) or the queue cannot be read.
func TestHealthReportsAnUnusableLogOrQueue(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	e.submit("h1")
	s, err := New(Options{Queue: e.q, TasksDir: e.TasksDir(), Audit: e.Audit})
	if err != nil {
		t.Fatal(err)
	}
	s.Pass(context.Background())
	if err := s.Health(); err != nil {
		t.Fatalf("healthy home: %v", err)
	}
	b, _ := os.ReadFile(e.AuditPath())
	altered := []byte(strings.Replace(string(b), `"agent:planner"`, `"agent:plannex"`, 1))
	if err := os.WriteFile(e.AuditPath(), altered, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(); err == nil || !strings.Contains(err.Error(), "audit log") {
		t.Fatalf("altered log: %v", err)
	}
	os.WriteFile(e.AuditPath(), b, 0o600)
	if err := s.Health(); err != nil {
		t.Fatalf("restored: %v", err)
	}
	os.Rename(e.TasksDir(), e.TasksDir()+".moved")
	if err := s.Health(); err == nil || !strings.Contains(err.Error(), "queue") {
		t.Fatalf("no tasks folder: %v", err)
	}
}

// A pass names only the open tasks, from the queue's index: a finished
// task is not read again, however long the history. When the index is
// gone the queue rebuilds it and the pass names the same tasks.
func TestPassReadsOnlyOpenTasks(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	for _, id := range []string{"open-1", "done-1", "open-2"} {
		e.submit(id)
	}
	if _, _, err := e.q.Decide(context.Background(), "done-1", approval.Decision{By: "operator:x", Reason: "no", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Queue: e.q, TasksDir: e.TasksDir(), Audit: e.Audit})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s.openIDs()
	if err != nil || strings.Join(ids, ",") != "open-1,open-2" {
		t.Fatalf("open ids %v %v", ids, err)
	}
	if err := os.RemoveAll(filepath.Join(e.TasksDir(), ".index")); err != nil {
		t.Fatal(err)
	}
	ids, err = s.openIDs()
	if err != nil || strings.Join(ids, ",") != "open-1,open-2" {
		t.Fatalf("open ids after losing the index %v %v", ids, err)
	}
	s.o.Notify = func(context.Context, notify.Event) {} // the pass queues events; no notifier runs
	s.Pass(context.Background())
	var arrived []string
	for len(s.events) > 0 {
		if ev := <-s.events; ev.Kind == notify.Arrived {
			arrived = append(arrived, ev.TaskID)
		}
	}
	if strings.Join(arrived, ",") != "open-1,open-2" {
		t.Fatalf("arrivals %v", arrived)
	}
}
