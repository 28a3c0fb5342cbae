// Package approvaltest builds a real approval queue in a temp folder — real
// keys, leases, results store, sim devices and audit log — with a settable
// clock, for the queue's own tests and the screens that show it.
package approvaltest

import (
	"context"
	"crypto"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
)

// Clock is a settable, goroutine-safe clock.
type Clock struct{ ns atomic.Int64 }

// NewClock starts at 2026-11-22 10:00 UTC.
func NewClock() *Clock {
	c := &Clock{}
	c.ns.Store(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixNano())
	return c
}

// Now reads the clock.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Env is a home with a queue over it.
type Env struct {
	T       testing.TB
	Dir     string
	Clock   *Clock
	Issuer  crypto.Signer
	Queue   *approval.Queue
	Audit   *audit.Log
	Results *task.Store
	Devices []config.DeviceConfig
	Scopes  []config.ScopeConfig // set, then Open, for SEARCH_* tasks
	Getenv  func(string) string
	// Leeway is the lease verifier's clock-skew leeway for queues opened
	// after it is set (zero: none, exact exp checks).
	Leeway time.Duration
	// RequireOperatorKey is [decisions] require_operator_key for queues
	// opened after it is set.
	RequireOperatorKey bool
	// Rules decide tasks at submission for queues opened after it is set.
	Rules approval.Rules
}

// Paths inside Dir.
func (e *Env) TasksDir() string  { return filepath.Join(e.Dir, "tasks") }
func (e *Env) InboxDir() string  { return filepath.Join(e.Dir, "inbox") }
func (e *Env) AuditPath() string { return filepath.Join(e.Dir, "audit.log") }
func (e *Env) SimDir() string    { return filepath.Join(e.Dir, "devices") }

// New makes keys and opens a queue with the sim device "living-room" plus
// any extra devices.
func New(t testing.TB, extra ...config.DeviceConfig) *Env {
	t.Helper()
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if _, _, err := lease.InitKeys(keys, nil, false); err != nil {
		t.Fatal(err)
	}
	issuer, _, err := lease.LoadPrivateKey(filepath.Join(keys, lease.IssuerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Dir: dir, Clock: NewClock(), Issuer: issuer,
		Devices: append([]config.DeviceConfig{{ID: "living-room", Driver: "sim"}}, extra...),
		Getenv:  func(string) string { return "test-token-0123456789abcdef" }}
	e.Queue = e.Open()
	return e
}

// Reopen opens a queue over an Env's folder from another process (the keys
// are already there). The clock starts at the same instant as New's.
func Reopen(t testing.TB, dir string) *Env {
	t.Helper()
	issuer, _, err := lease.LoadPrivateKey(filepath.Join(dir, "keys", lease.IssuerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Dir: dir, Clock: NewClock(), Issuer: issuer,
		Devices: []config.DeviceConfig{{ID: "living-room", Driver: "sim"}},
		Getenv:  func(string) string { return "test-token-0123456789abcdef" }}
	e.Queue = e.Open()
	return e
}

// Open opens another queue over the same folders, as a second process would.
func (e *Env) Open() *approval.Queue {
	t := e.T
	t.Helper()
	keys := filepath.Join(e.Dir, "keys")
	local, _, err := lease.LocalIssuer(keys)
	if err != nil {
		t.Fatal(err)
	}
	leeway := lease.NoLeeway
	if e.Leeway > 0 {
		leeway = e.Leeway
	}
	leases, err := lease.NewVerifier(lease.Options{Issuer: lease.DefaultIssuer, Audience: lease.DefaultAudience,
		Leeway: leeway, Keys: []lease.Key{local}, Now: e.Clock.Now})
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
	ex, err := media.New(media.Options{Devices: e.Devices, Leases: leases, Store: res, Signer: signer, Now: e.Clock.Now,
		SimDir: e.SimDir(), Getenv: e.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(e.AuditPath(), e.Clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	q, err := approval.Open(context.Background(), approval.Options{Dir: e.TasksDir(), Inbox: e.InboxDir(),
		Executor: ex, Devices: e.Devices, Leases: leases, Results: res, Signer: signer, Audit: log,
		Scopes: e.Scopes, Timeout: 10 * time.Minute, Now: e.Clock.Now, RequireOperatorKey: e.RequireOperatorKey, Rules: e.Rules})
	if err != nil {
		t.Fatal(err)
	}
	e.Audit, e.Results = log, res
	return q
}

// Manifest builds a signed manifest; caps default to the capability itself.
func (e *Env) Manifest(taskID, capID string, inputs map[string]any, ttl time.Duration, caps ...string) []byte {
	e.T.Helper()
	if len(caps) == 0 {
		caps = []string{capID}
	}
	tok, err := lease.Issue(e.Issuer, lease.IssueOptions{Subject: "agent:planner", TaskID: taskID, Caps: caps, TTL: ttl,
		Now: e.Clock.Now, JTI: "jti-" + taskID})
	if err != nil {
		e.T.Fatal(err)
	}
	in, _ := json.Marshal(inputs)
	b, _ := json.Marshal(map[string]any{"task_id": taskID, "capability_id": capID, "inputs": json.RawMessage(in), "lease": tok})
	return b
}

// Play is a MEDIA_PLAY manifest for the sim device.
func (e *Env) Play(taskID, uri string) []byte {
	return e.Manifest(taskID, "MEDIA_PLAY", map[string]any{"media_uri": uri, "target_device": "living-room"}, 30*time.Minute)
}

// Submit submits raw through the queue and fails the test on an I/O error.
func (e *Env) Submit(raw []byte) approval.Outcome {
	e.T.Helper()
	out, err := e.Queue.Submit(context.Background(), raw, "cli")
	if err != nil {
		e.T.Fatal(err)
	}
	return out
}

// Events lists the audit log's events after checking the chain verifies.
func (e *Env) Events() []string {
	t := e.T
	t.Helper()
	var ev []string
	if _, err := audit.Scan(e.AuditPath(), 0, func(l audit.Line) bool {
		if l.Err != nil {
			t.Fatalf("bad audit line at %d: %v", l.Offset, l.Err)
		}
		ev = append(ev, l.Entry.Event)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(e.AuditPath())
	if err != nil || !rep.OK {
		t.Fatalf("audit chain: %v %+v", err, rep)
	}
	return ev
}
