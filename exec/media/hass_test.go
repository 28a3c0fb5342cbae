package media

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

const hassToken = "hass-long-lived-token-123"

type seen struct {
	method, path, body string
	header             http.Header
}

// fakeHass is a Home Assistant REST endpoint on httptest that records every
// request and answers service calls with the status the test scripts.
type fakeHass struct {
	mu       sync.Mutex
	calls    []seen
	statuses []int // answers for service calls, in order; then 200
	state    string
	hang     bool
}

func (f *fakeHass) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, seen{r.Method, r.URL.Path, string(body), r.Header.Clone()})
	status := http.StatusOK
	if strings.HasPrefix(r.URL.Path, "/api/services/") && len(f.statuses) > 0 {
		status, f.statuses = f.statuses[0], f.statuses[1:]
	}
	hang := f.hang && strings.HasPrefix(r.URL.Path, "/api/services/")
	state := f.state
	f.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+hassToken {
		http.Error(w, `{"message":"Invalid authentication"}`, http.StatusUnauthorized)
		return
	}
	if status != http.StatusOK {
		http.Error(w, "boom", status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		io.WriteString(w, `{"entity_id":"media_player.kitchen","state":"`+state+`","attributes":{"volume_level":0.4,"media_content_id":"x"},"last_changed":"`+time.Now().String()+`","last_updated":"now","context":{"id":"1"}}`)
		return
	}
	f.mu.Lock()
	if strings.HasSuffix(r.URL.Path, "/media_pause") {
		f.state = "paused"
	} else {
		f.state = "playing"
	}
	f.mu.Unlock()
	io.WriteString(w, `[]`)
}

func (f *fakeHass) serviceCalls() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []seen
	for _, c := range f.calls {
		if c.method == http.MethodPost {
			out = append(out, c)
		}
	}
	return out
}

func hassHarness(t *testing.T, f *fakeHass, dev config.DeviceConfig, mod func(*Options)) *harness {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	dev.ID, dev.Driver, dev.BaseURL, dev.EntityID = "kitchen", "hass", srv.URL, "media_player.kitchen"
	return newHarness(t, []config.DeviceConfig{dev}, func(o *Options) {
		o.Getenv = func(k string) string {
			if k == "HASS_TOKEN" {
				return hassToken
			}
			return ""
		}
		if mod != nil {
			mod(o)
		}
	})
}

func TestHassRequestsByteForByte(t *testing.T) {
	f := &fakeHass{state: "idle"}
	h := hassHarness(t, f, config.DeviceConfig{TokenEnv: "HASS_TOKEN"}, nil)
	cases := []struct {
		cap, inputs, path, body string
	}{
		{CapPlay, `{"target_device":"kitchen","media_uri":"https://radio.example/stream.mp3"}`, "/api/services/media_player/play_media",
			`{"entity_id":"media_player.kitchen","media_content_id":"https://radio.example/stream.mp3","media_content_type":"music"}`},
		{CapPlay, `{"target_device":"kitchen","media_uri":"media-source://media_source/local/a.mp4","media_content_type":"video"}`, "/api/services/media_player/play_media",
			`{"entity_id":"media_player.kitchen","media_content_id":"media-source://media_source/local/a.mp4","media_content_type":"video"}`},
		{CapPause, `{"target_device":"kitchen"}`, "/api/services/media_player/media_pause", `{"entity_id":"media_player.kitchen"}`},
		{CapStop, `{"target_device":"kitchen"}`, "/api/services/media_player/media_stop", `{"entity_id":"media_player.kitchen"}`},
		{CapSeek, `{"target_device":"kitchen","position_seconds":12.5}`, "/api/services/media_player/media_seek", `{"entity_id":"media_player.kitchen","seek_position":12.5}`},
	}
	for i, c := range cases {
		n := len(f.serviceCalls())
		r := h.run(h.manifest("h-"+string(rune('a'+i)), c.cap, c.inputs))
		if r.Status != task.StatusSuccess {
			t.Fatalf("%s: %+v", c.cap, r.Error)
		}
		calls := f.serviceCalls()
		if len(calls) != n+1 {
			t.Fatalf("%s: %d service calls", c.cap, len(calls)-n)
		}
		got := calls[n]
		if got.method != "POST" || got.path != c.path || got.body != c.body {
			t.Fatalf("%s: sent %s %s %s\nwant POST %s %s", c.cap, got.method, got.path, got.body, c.path, c.body)
		}
		for k, v := range map[string]string{"Authorization": "Bearer " + hassToken, "Content-Type": "application/json",
			"Accept": "application/json", "User-Agent": "vigil"} {
			if got.header.Get(k) != v {
				t.Fatalf("%s: header %s = %q, want %q", c.cap, k, got.header.Get(k), v)
			}
		}
		if c.cap == CapPause && r.ContentHashBefore == r.ContentHashAfter {
			t.Fatal("pause did not change the hashed state")
		}
	}
	// The state read is GET /api/states/<entity> with the token.
	f.mu.Lock()
	first := f.calls[0]
	f.mu.Unlock()
	if first.method != "GET" || first.path != "/api/states/media_player.kitchen" || first.header.Get("Authorization") != "Bearer "+hassToken {
		t.Fatalf("state read: %s %s", first.method, first.path)
	}
}

func TestHassTokenFileAndPlan(t *testing.T) {
	f := &fakeHass{state: "idle"}
	tokFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokFile, []byte(hassToken+"\n"), 0o600)
	h := hassHarness(t, f, config.DeviceConfig{TokenFile: tokFile}, nil)
	p, err := h.exec.Prepare(h.manifest("tf", CapPause, `{"target_device":"kitchen"}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Plan.Method != "POST" || !strings.HasSuffix(p.Plan.URL, "/api/services/media_player/media_pause") ||
		p.Plan.Headers["Authorization"] != "Bearer "+hassToken || string(p.Plan.Body) != `{"entity_id":"media_player.kitchen"}` {
		t.Fatalf("plan %+v", p.Plan)
	}
	if len(f.serviceCalls()) != 0 {
		t.Fatal("planning touched the device")
	}
	if r := h.run(h.manifest("tf", CapPause, `{"target_device":"kitchen"}`)); r.Status != task.StatusSuccess {
		t.Fatalf("%+v", r.Error)
	}
}

func TestHass401IsFinal(t *testing.T) {
	f := &fakeHass{state: "idle"}
	h := hassHarness(t, f, config.DeviceConfig{TokenEnv: "HASS_TOKEN"}, nil)
	f.statuses = nil
	h.exec.drivers["kitchen"].(*Hass).getenv = func(string) string { return "wrong-token" }
	r := h.run(h.manifest("h401", CapPause, `{"target_device":"kitchen"}`))
	wantFailure(t, r, task.ExecutionFailed, "401 Unauthorized: check the token")
	if strings.Contains(r.Error.Message, "wrong-token") {
		t.Fatal("the token leaked into the error")
	}
	if len(h.sleeps) != 0 {
		t.Fatalf("401 was retried: %v", h.sleeps)
	}
}

func TestHass500IsRetried(t *testing.T) {
	f := &fakeHass{state: "idle", statuses: []int{500, 502, 503}}
	h := hassHarness(t, f, config.DeviceConfig{TokenEnv: "HASS_TOKEN"}, nil)
	r := h.run(h.manifest("h500", CapPause, `{"target_device":"kitchen"}`))
	if r.Status != task.StatusSuccess {
		t.Fatalf("%+v", r.Error)
	}
	if n := len(f.serviceCalls()); n != 4 {
		t.Fatalf("%d service calls, want 4 (3 failures then success)", n)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	if len(h.sleeps) != 3 || h.sleeps[0] != want[0] || h.sleeps[1] != want[1] || h.sleeps[2] != want[2] {
		t.Fatalf("backoff %v, want %v", h.sleeps, want)
	}

	// Four 500s: three retries are spent, the task fails.
	f2 := &fakeHass{state: "idle", statuses: []int{500, 500, 500, 500, 500}}
	h2 := hassHarness(t, f2, config.DeviceConfig{TokenEnv: "HASS_TOKEN"}, nil)
	r = h2.run(h2.manifest("h500b", CapPause, `{"target_device":"kitchen"}`))
	wantFailure(t, r, task.ExecutionFailed, "500 Internal Server Error")
	if n := len(f2.serviceCalls()); n != 4 {
		t.Fatalf("%d service calls, want 1 + 3 retries", n)
	}
}

func TestBackoffCapsAtTenSeconds(t *testing.T) {
	f := &fakeHass{state: "idle", statuses: []int{500, 500, 500, 500, 500, 500, 500}}
	h := hassHarness(t, f, config.DeviceConfig{TokenEnv: "HASS_TOKEN"}, func(o *Options) {
		o.Retry = &RetryPolicy{MaxRetries: 6, Initial: time.Second, Max: 10 * time.Second}
	})
	h.run(h.manifest("cap", CapPause, `{"target_device":"kitchen"}`))
	want := []time.Duration{1, 2, 4, 8, 10, 10}
	for i, w := range want {
		if h.sleeps[i] != w*time.Second {
			t.Fatalf("backoff %v", h.sleeps)
		}
	}
}

func TestHassTimeoutIsResourceExhausted(t *testing.T) {
	f := &fakeHass{state: "idle", hang: true}
	h := hassHarness(t, f, config.DeviceConfig{TokenEnv: "HASS_TOKEN"}, func(o *Options) {
		o.ActionTimeout = 100 * time.Millisecond
	})
	r := h.run(h.manifest("slow", CapStop, `{"target_device":"kitchen"}`))
	wantFailure(t, r, task.ResourceExhausted, "MEDIA_STOP on kitchen did not finish within 100ms")
}

func TestHassRefusesRedirects(t *testing.T) {
	var leaked bool
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("Authorization") != ""
	}))
	defer evil.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	hs, err := NewHass("k", srv.URL, "media_player.k", "T", "", func(string) string { return hassToken }, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := hs.Plan(Action{Capability: CapPause})
	if err := hs.Do(context.Background(), p); err == nil {
		t.Fatal("a redirect counted as success")
	}
	if leaked {
		t.Fatal("the token followed a redirect")
	}
}
