package media

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// harness is an executor wired to real leases, a real results folder and
// real drivers; only the clock and the retry sleeper are injected.
type harness struct {
	t      testing.TB
	issuer ed25519.PrivateKey
	signer *task.Signer
	store  *task.Store
	exec   *Executor
	sleeps []time.Duration
	mu     sync.Mutex
}

func newHarness(t testing.TB, devices []config.DeviceConfig, mod func(*Options)) *harness {
	t.Helper()
	_, issuer, _ := ed25519.GenerateKey(rand.Reader)
	_, opKey, _ := ed25519.GenerateKey(rand.Reader)
	v, err := lease.NewVerifier(lease.Options{Keys: []lease.Key{{KID: "local", Alg: lease.AlgEdDSA, Public: issuer.Public()}},
		Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := task.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, issuer: issuer, signer: task.NewSigner(opKey), store: st}
	opts := Options{Devices: devices, Leases: v, Store: st, Signer: h.signer, Now: func() time.Time { return t0 },
		SimDir: t.TempDir(), Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			h.sleeps = append(h.sleeps, d)
			h.mu.Unlock()
			return ctx.Err()
		}}
	if mod != nil {
		mod(&opts)
	}
	h.exec, err = New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) manifest(taskID, capability, inputs string, caps ...string) *task.Manifest {
	h.t.Helper()
	if len(caps) == 0 {
		caps = []string{capability}
	}
	tok, err := lease.Issue(h.issuer, lease.IssueOptions{Subject: "agent-1", TaskID: taskID, Caps: caps,
		Now: func() time.Time { return t0 }, JTI: "jti-" + taskID})
	if err != nil {
		h.t.Fatal(err)
	}
	doc := fmt.Sprintf(`{"task_id":%q,"capability_id":%q,"inputs":%s,"lease":%q}`, taskID, capability, inputs, tok)
	m, err := task.ParseManifest([]byte(doc))
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

func approval(taskID string) *Approval {
	return &Approval{TaskID: taskID, PreviewHash: "preview", DecidedBy: "operator:test", DecidedAt: t0}
}

func (h *harness) run(m *task.Manifest) *task.Result {
	h.t.Helper()
	r, err := h.exec.Execute(context.Background(), m, approval(m.TaskID))
	if err != nil {
		h.t.Fatal(err)
	}
	if err := task.Verify(r, h.signer.Public()); err != nil {
		h.t.Fatalf("result does not verify: %v", err)
	}
	return r
}

func wantFailure(t testing.TB, r *task.Result, code task.Code, msg string) {
	t.Helper()
	if r.Status != task.StatusFailure || r.Error == nil || r.Error.Code != code || !strings.Contains(r.Error.Message, msg) {
		t.Fatalf("want FAILURE %s containing %q, got %s %+v", code, msg, r.Status, r.Error)
	}
}

var simDevices = []config.DeviceConfig{{ID: "living-room", Driver: "sim"}, {ID: "den", Driver: "sim"}}

// counting wraps a driver and counts the commands sent to the device.
type counting struct {
	Driver
	calls atomic.Int32
}

func (c *counting) Do(ctx context.Context, p Plan) error {
	c.calls.Add(1)
	return c.Driver.Do(ctx, p)
}

func TestSimPlayPauseSeekStop(t *testing.T) {
	h := newHarness(t, simDevices, nil)
	sim := h.exec.drivers["living-room"].(*Sim)
	steps := []struct {
		cap, inputs string
		want        SimState
	}{
		{CapPlay, `{"target_device":"living-room","media_uri":"/music/a.flac"}`, SimState{"living-room", "playing", "/music/a.flac", 0}},
		{CapPause, `{"target_device":"living-room"}`, SimState{"living-room", "paused", "/music/a.flac", 0}},
		{CapSeek, `{"target_device":"living-room","position_seconds":12}`, SimState{"living-room", "paused", "/music/a.flac", 12}},
		{CapStop, `{"target_device":"living-room"}`, SimState{"living-room", "idle", "", 0}},
	}
	for i, s := range steps {
		before, _ := sim.State(context.Background())
		r := h.run(h.manifest(fmt.Sprintf("t-%d", i), s.cap, s.inputs))
		if r.Status != task.StatusSuccess {
			t.Fatalf("%s: %+v", s.cap, r.Error)
		}
		want := fmt.Sprintf(`{"task_id":"t-%d","capability_id":%q,"device":"living-room","status":"applied"}`, i, s.cap)
		if string(r.Output) != want {
			t.Fatalf("output %s, want %s", r.Output, want)
		}
		got, _ := sim.Read()
		if got != s.want {
			t.Fatalf("%s: state %+v, want %+v", s.cap, got, s.want)
		}
		after, _ := sim.State(context.Background())
		if r.ContentHashBefore != StateHash(before) || r.ContentHashAfter != StateHash(after) {
			t.Fatalf("%s: hashes do not match the device's state", s.cap)
		}
		if r.ExecutedAt != "2026-03-01T12:00:00Z" {
			t.Fatalf("executed_at %s", r.ExecutedAt)
		}
	}
	// Another process sees the same device: a second Sim on the same folder.
	other, _ := NewSim("living-room", h.exec.opts.SimDir)
	if st, _ := other.Read(); st.State != "idle" {
		t.Fatalf("other process sees %+v", st)
	}
}

func TestIdempotencyConcurrent(t *testing.T) {
	var c *counting
	h := newHarness(t, simDevices, func(o *Options) {
		sim, _ := NewSim("living-room", o.SimDir)
		c = &counting{Driver: sim}
		o.Drivers = map[string]Driver{"living-room": c}
	})
	m := h.manifest("t-once", CapPlay, `{"target_device":"living-room","media_uri":"/music/a.flac"}`)
	var wg sync.WaitGroup
	results := make([]*task.Result, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := h.exec.Execute(context.Background(), m, approval(m.TaskID))
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		}()
	}
	wg.Wait()
	if n := c.calls.Load(); n != 1 {
		t.Fatalf("50 concurrent executions made %d device calls", n)
	}
	for _, r := range results {
		if r == nil || r.Signature.Value != results[0].Signature.Value {
			t.Fatal("executions returned different results")
		}
	}
	// A repeat returns the stored result with no device call.
	r := h.run(m)
	if r.Signature.Value != results[0].Signature.Value || c.calls.Load() != 1 {
		t.Fatal("repeat touched the device or changed the result")
	}
	// Same task_id, other inputs: refused, nothing sent.
	m2 := h.manifest("t-once", CapPlay, `{"target_device":"living-room","media_uri":"/music/b.flac"}`)
	if _, err := h.exec.Execute(context.Background(), m2, approval(m2.TaskID)); err == nil ||
		!strings.Contains(err.Error(), "already executed with different inputs") {
		t.Fatalf("different inputs: %v", err)
	}
	if c.calls.Load() != 1 {
		t.Fatal("refused task touched the device")
	}
}

func TestNoApprovalNoAction(t *testing.T) {
	var c *counting
	h := newHarness(t, simDevices, func(o *Options) {
		sim, _ := NewSim("living-room", o.SimDir)
		c = &counting{Driver: sim}
		o.Drivers = map[string]Driver{"living-room": c}
	})
	m := h.manifest("t-1", CapPause, `{"target_device":"living-room"}`)
	for name, ap := range map[string]*Approval{
		"missing":      nil,
		"other task":   approval("t-2"),
		"no preview":   {TaskID: "t-1", DecidedBy: "operator:x", DecidedAt: t0},
		"no decider":   {TaskID: "t-1", PreviewHash: "p", DecidedAt: t0},
		"no timestamp": {TaskID: "t-1", PreviewHash: "p", DecidedBy: "operator:x"},
	} {
		if _, err := h.exec.Execute(context.Background(), m, ap); !errors.Is(err, ErrNotApproved) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if c.calls.Load() != 0 {
		t.Fatal("an unapproved task reached the device")
	}
	if _, err := h.store.Load("t-1"); !errors.Is(err, task.ErrNotFound) {
		t.Fatal("an unapproved task stored a result")
	}
	// An approval for a different plan is refused too.
	ap := approval("t-1")
	ap.PlanHash = "0000"
	r, err := h.exec.Execute(context.Background(), m, ap)
	if err != nil {
		t.Fatal(err)
	}
	wantFailure(t, r, task.ExecutionFailed, "request changed after approval")
	if c.calls.Load() != 0 {
		t.Fatal("a task whose plan changed reached the device")
	}
	// With the right plan hash it runs.
	p, err := h.exec.Prepare(h.manifest("t-3", CapPause, `{"target_device":"living-room"}`))
	if err != nil {
		t.Fatal(err)
	}
	ap = approval("t-3")
	ap.PlanHash = p.PlanHash
	r, err = h.exec.Execute(context.Background(), h.manifest("t-3", CapPause, `{"target_device":"living-room"}`), ap)
	if err != nil || r.Status != task.StatusSuccess {
		t.Fatalf("approved plan: %v %+v", err, r)
	}
}

func TestInputValidation(t *testing.T) {
	h := newHarness(t, simDevices, nil)
	cases := []struct {
		cap, inputs string
		code        task.Code
		msg         string
	}{
		{"MEDIA_VOLUME", `{"target_device":"living-room"}`, task.UnsupportedCapability, "supports only MEDIA_PLAY, MEDIA_PAUSE, MEDIA_STOP, MEDIA_SEEK"},
		{CapPlay, `{"target_device":"living-room"}`, task.ExecutionFailed, "inputs.media_uri: required for MEDIA_PLAY"},
		{CapPlay, `{"target_device":"living-room","media_uri":"some jazz for dinner"}`, task.ExecutionFailed, "inputs.media_uri: must be an absolute path or absolute URI (no search phrases)"},
		{CapPlay, `{"target_device":"living-room","media_uri":"music/a.flac"}`, task.ExecutionFailed, "inputs.media_uri: must be an absolute path or absolute URI"},
		{CapPlay, `{"target_device":"living-room","media_uri":"ytdl://ytsearch:jazz"}`, task.ExecutionFailed, `inputs.media_uri: scheme "ytdl" is not allowed`},
		{CapPlay, `{"target_device":"living-room","media_uri":"https:///x"}`, task.ExecutionFailed, "must name a host"},
		{CapPlay, `{"target_device":"living-room","media_uri":7}`, task.ExecutionFailed, "inputs.media_uri: must be a string, got a number"},
		{CapPause, `{}`, task.ExecutionFailed, "inputs.target_device: required"},
		{CapPause, `{"target_device":"garage"}`, task.ExecutionFailed, `inputs.target_device: "garage" is not an allowlisted device`},
		{CapPause, `{"target_device":"living-room","Target_Device":"den"}`, task.ExecutionFailed, "inputs.Target_Device: unknown field"},
		{CapPause, `{"target_device":"living-room","position_seconds":3}`, task.ExecutionFailed, "inputs.position_seconds: only allowed for MEDIA_SEEK"},
		{CapSeek, `{"target_device":"living-room"}`, task.ExecutionFailed, "inputs.position_seconds: required for MEDIA_SEEK"},
		{CapSeek, `{"target_device":"living-room","position_seconds":-1}`, task.ExecutionFailed, "inputs.position_seconds: must be >= 0, got -1"},
		{CapSeek, `{"target_device":"living-room","position_seconds":"12"}`, task.ExecutionFailed, "inputs.position_seconds: must be a number, got a string"},
		{CapSeek, `{"target_device":"living-room","position_seconds":null}`, task.ExecutionFailed, "inputs.position_seconds: must be a number, got null"},
		{CapPlay, `{"target_device":"living-room","media_uri":"/a.mp3","media_content_type":"podcast"}`, task.ExecutionFailed, "inputs.media_content_type: must be one of"},
	}
	for i, c := range cases {
		r := h.run(h.manifest(fmt.Sprintf("v-%d", i), c.cap, c.inputs))
		wantFailure(t, r, c.code, c.msg)
	}
	// Seeking an idle simulated player is the device's refusal.
	r := h.run(h.manifest("v-idle", CapSeek, `{"target_device":"den","position_seconds":1}`))
	wantFailure(t, r, task.ExecutionFailed, "nothing is playing on den")
}

func TestLeaseChecksAtExecution(t *testing.T) {
	h := newHarness(t, simDevices, nil)
	// A lease for another capability: UNSUPPORTED_CAPABILITY, device untouched.
	m := h.manifest("l-1", CapPause, `{"target_device":"living-room"}`, CapPlay)
	wantFailure(t, h.run(m), task.UnsupportedCapability, "capability check failed")
	// A lease limited to another device.
	tok, _ := lease.Issue(h.issuer, lease.IssueOptions{Subject: "a", TaskID: "l-2", Caps: []string{CapPause},
		Devices: []string{"den"}, Now: func() time.Time { return t0 }})
	m2, _ := task.ParseManifest([]byte(`{"task_id":"l-2","capability_id":"MEDIA_PAUSE","inputs":{"target_device":"living-room"},"lease":"` + tok + `"}`))
	wantFailure(t, h.run(m2), task.InvalidLease, `device "living-room" is not in the lease's constraints.devices`)
	// An expired lease at execution time (approved too late).
	old, _ := lease.Issue(h.issuer, lease.IssueOptions{Subject: "a", TaskID: "l-3", Caps: []string{CapPause},
		Now: func() time.Time { return t0.Add(-time.Hour) }})
	m3, _ := task.ParseManifest([]byte(`{"task_id":"l-3","capability_id":"MEDIA_PAUSE","inputs":{"target_device":"den"},"lease":"` + old + `"}`))
	wantFailure(t, h.run(m3), task.LeaseExpired, "expiry check failed")
}

// blocking never answers until its context ends.
type blocking struct{ Sim }

func (b *blocking) Do(ctx context.Context, p Plan) error { <-ctx.Done(); return ctx.Err() }

func TestActionTimeIsBounded(t *testing.T) {
	h := newHarness(t, simDevices, func(o *Options) {
		sim, _ := NewSim("living-room", o.SimDir)
		o.Drivers = map[string]Driver{"living-room": &blocking{*sim}}
		o.ActionTimeout = 50 * time.Millisecond
	})
	r := h.run(h.manifest("slow", CapPause, `{"target_device":"living-room"}`))
	wantFailure(t, r, task.ResourceExhausted, "MEDIA_PAUSE on living-room did not finish within 50ms")
}

func TestNewRejectsBadDevices(t *testing.T) {
	for name, devs := range map[string][]config.DeviceConfig{
		"duplicate id":     {{ID: "a", Driver: "sim"}, {ID: "a", Driver: "sim"}},
		"unknown driver":   {{ID: "a", Driver: "vlc"}},
		"relative socket":  {{ID: "a", Driver: "mpv", Socket: "mpv.sock"}},
		"hass no token":    {{ID: "a", Driver: "hass", BaseURL: "http://h:8123", EntityID: "media_player.a"}},
		"hass bad entity":  {{ID: "a", Driver: "hass", BaseURL: "http://h:8123", EntityID: "light.a", TokenEnv: "T"}},
		"hass bad baseurl": {{ID: "a", Driver: "hass", BaseURL: "ftp://h", EntityID: "media_player.a", TokenEnv: "T"}},
	} {
		if _, err := New(Options{Devices: devs, Leases: &lease.Verifier{}, Store: &task.Store{}, Signer: task.NewSigner(make(ed25519.PrivateKey, 64)),
			SimDir: t.TempDir()}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestPlanHashStable(t *testing.T) {
	p := Plan{Method: "POST", URL: "http://h/x", Headers: map[string]string{"B": "2", "A": "1"}, Body: []byte(`{"a":1}`)}
	q := Plan{Method: "POST", URL: "http://h/x", Headers: map[string]string{"A": "1", "B": "2"}, Body: []byte(`{"a":1}`), Effect: "words"}
	if p.Hash() != q.Hash() {
		t.Fatal("plan hash depends on map order or the effect sentence")
	}
	q.Body = []byte(`{"a":2}`)
	if p.Hash() == q.Hash() {
		t.Fatal("plan hash ignores the body")
	}
}

func BenchmarkExecuteSim(b *testing.B) {
	h := newHarness(b, simDevices, nil)
	ms := make([]*task.Manifest, 0, 1024)
	i := 0
	for b.Loop() {
		if len(ms) == 0 {
			b.StopTimer()
			for j := 0; j < 1024; j++ {
				ms = append(ms, h.manifest(fmt.Sprintf("b-%d", i), CapPause, `{"target_device":"living-room"}`))
				i++
			}
			b.StartTimer()
		}
		m := ms[0]
		ms = ms[1:]
		if _, err := h.exec.Execute(context.Background(), m, approval(m.TaskID)); err != nil {
			b.Fatal(err)
		}
	}
}
