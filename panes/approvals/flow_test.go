package approvalspane

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// The deadline shown is the earlier of the approval timeout and the
// lease's exp, says which, and keeps id, capability, device and deadline
// on the row at 80 and 60 columns (the agent name gives way first).
func TestNarrowWidthsKeepTheDeadline(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Manifest("short-lease", "MEDIA_PLAY", map[string]any{"media_uri": "/media/a.mkv", "target_device": "living-room"}, 40*time.Second))
	env.Submit(env.Play("long-lease", "/media/b.mkv"))
	p := loadedPane(t, env)
	for _, w := range []int{60, 80, 100} {
		out := ansi.Strip(p.View(w, 20))
		rows := strings.Split(out, "\n")
		row := func(id string) string {
			for _, r := range rows {
				if strings.Contains(r, id) {
					return r
				}
			}
			t.Fatalf("%d cols: no row for %s:\n%s", w, id, out)
			return ""
		}
		for id, dl := range map[string]string{"short-lease": "lease", "long-lease": "approval"} {
			r := row(id)
			for _, want := range []string{id, "MEDIA_PLAY", "living-room", dl} {
				if !strings.Contains(r, want) {
					t.Errorf("%d cols: row %q lacks %q", w, r, want)
				}
			}
			if strings.Contains(r, "…") && !strings.Contains(r, "agent") {
				// only the agent may be cut
				t.Errorf("%d cols: row %q cut something other than the agent", w, r)
			}
		}
		if !strings.Contains(row("short-lease"), "0:40") || !strings.Contains(row("long-lease"), "10m") {
			t.Errorf("%d cols: countdowns missing:\n%s", w, out)
		}
	}
	if r := ansi.Strip(p.View(100, 20)); !strings.Contains(r, "lease expires in 0:40") || !strings.Contains(r, "approval expires in 10m") {
		t.Fatalf("wide rows do not say which deadline:\n%s", r)
	}
	// a minute later the lease has lapsed: the screen says so, not "8:44"
	env.Clock.Advance(time.Minute)
	for _, r := range strings.Split(ansi.Strip(p.View(100, 20)), "\n") {
		if strings.Contains(r, "short-lease") && (!strings.Contains(r, "lease expired") || strings.Contains(r, "expires in")) {
			t.Fatalf("lapsed lease shown as %q", r)
		}
	}
}

// fakeHA is Home Assistant's REST API for one media_player, answering state
// reads with the real shape and service calls with a scripted refusal, or
// holding them until told. It checks the wire format of every request.
type fakeHA struct {
	t      *testing.T
	mu     sync.Mutex
	status int // service calls' status (0: 200)
	// hold, when set, keeps a service call from answering until it is
	// closed; entered is told (without blocking) that a call arrived
	hold    chan struct{}
	entered chan struct{}
	calls   int
}

func (f *fakeHA) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer test-token-0123456789abcdef" {
		f.t.Errorf("authorization %q", r.Header.Get("Authorization"))
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/states/media_player.kitchen":
		io.WriteString(w, `{"entity_id":"media_player.kitchen","state":"playing","attributes":{"media_content_id":"https://m.example.com/so-what.mp3",`+
			`"media_title":"So What","media_position":12,"media_position_updated_at":"2026-11-22T10:00:00+00:00","friendly_name":"Kitchen"},`+
			`"last_changed":"2026-11-22T09:00:00+00:00","last_updated":"2026-11-22T10:00:00+00:00","context":{"id":"x","parent_id":null,"user_id":null}}`)
	case r.Method == http.MethodPost && r.URL.Path == "/api/services/media_player/media_pause":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["entity_id"] != "media_player.kitchen" || len(body) != 1 {
			f.t.Errorf("media_pause body %v (%v)", body, err)
		}
		f.mu.Lock()
		f.calls++
		status, hold := f.status, f.hold
		f.mu.Unlock()
		if hold != nil {
			select {
			case f.entered <- struct{}{}:
			default:
			}
			<-hold
		}
		if status != 0 && status != http.StatusOK {
			w.WriteHeader(status)
			io.WriteString(w, `{"message":"Entity media_player.kitchen is unavailable"}`)
			return
		}
		io.WriteString(w, `[]`)
	default:
		f.t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

func haEnv(t *testing.T, f *fakeHA) *approvaltest.Env {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return approvaltest.New(t, config.DeviceConfig{ID: "kitchen", Driver: "hass", BaseURL: srv.URL,
		EntityID: "media_player.kitchen", TokenEnv: "HASS_TOKEN"})
}

// Decided tasks have a home: a Home Assistant refusal is listed as failed,
// with the driver's reason and the signed result, decided by the operator
// through the TUI.
func TestDecidedListShowsAFailedHomeAssistantCall(t *testing.T) {
	ha := &fakeHA{t: t, status: http.StatusBadRequest}
	env := haEnv(t, ha)
	env.Submit(env.Manifest("ha-pause", "MEDIA_PAUSE", map[string]any{"target_device": "kitchen"}, time.Hour))
	s, p := startPane(t, env, 120, 40, "playing at 0:12")
	env.Clock.Advance(2 * time.Second)
	s.key("a")
	s.wait("Approve ha-pause?")
	env.Clock.Advance(2 * time.Second)
	s.key("y")
	s.wait("EXECUTION_FAILED")
	// the decided list shows the selected task's signed result once read
	s.key("v")
	s.wait("Decided tasks (1)")
	waitState(t, p, func(s Snapshot) bool { return s.Result == "ha-pause" })
	out := s.final()
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Decided tasks (1)", "ha-pause", "failed", "operator:ada", "EXECUTION_FAILED",
		"400 Bad Request", "Home Assistant says: Entity media_player.kitchen is unavailable", "signed"} {
		if !strings.Contains(flat, want) {
			t.Errorf("decided view lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "decided elsewhere") {
		t.Errorf("own decision reported as decided elsewhere:\n%s", out)
	}
	if ha.calls != 1 {
		t.Errorf("%d service calls", ha.calls)
	}
	r, _ := env.Queue.Get("ha-pause")
	if r.DecidedVia != "" && r.DecidedVia != approval.ViaTUI {
		t.Errorf("decided via %q", r.DecidedVia)
	}
}

// A slow device: while this pane's own approval executes, reloads see the
// task leave the queue; the pane says "executing…", never "decided
// elsewhere". The device answers only when the test has looked.
func TestSlowExecutionIsNotDecidedElsewhere(t *testing.T) {
	ha := &fakeHA{t: t, hold: make(chan struct{}), entered: make(chan struct{}, 1)}
	env := haEnv(t, ha)
	env.Submit(env.Manifest("slow", "MEDIA_PAUSE", map[string]any{"target_device": "kitchen"}, time.Hour))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	clk.Advance(GraceMax)
	press(m, "a")
	clk.Advance(GraceMax)
	cmd := press(m, "y")
	if !p.busy {
		t.Fatal("y did not approve")
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- runBatch(cmd) }()
	<-ha.entered // the task is executing: the device has the call
	for range 2 {
		p.Update(p.reload(nil)()) // the watcher and tick reloads while the device is slow
		screen := ansi.Strip(m.Render())
		if strings.Contains(screen, "elsewhere") {
			t.Fatalf("own slow execution reported as decided elsewhere:\n%s", screen)
		}
		if !strings.Contains(screen, "slow executing…") {
			t.Fatalf("no executing… while the device is slow:\n%s", screen)
		}
	}
	close(ha.hold)
	p.Update(<-done)
	if screen := ansi.Strip(m.Render()); !strings.Contains(screen, "slow approved and executed") {
		t.Fatalf("outcome not shown:\n%s", screen)
	}
}

// runBatch runs a command, and the commands of a batch, returning the first
// message that is not nil.
func runBatch(cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			if m := runBatch(c); m != nil {
				return m
			}
		}
		return nil
	}
	return msg
}

// The manifest is edited on disk between the preview and the decision: the
// approval is refused, the screen shows what is there now, nothing runs.
func TestEditedManifestIsNotApproved(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("swap", "/media/shown.mkv"))
	s := start(t, env, 120, 40, "shown.mkv")
	env.Clock.Advance(2 * time.Second)
	s.key("a")
	s.wait("Approve swap?")
	// someone rewrites the stored request to play something else
	path := filepath.Join(env.TasksDir(), "swap", "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte("/media/shown.mkv"), []byte("/media/other.mkv")), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(2 * time.Second)
	s.key("y")
	waitAny(s, "request changed", "tampered", "damaged")
	out := s.final()
	t.Logf("screen after y:\n%s", out)
	if strings.Contains(out, "approved and executed") {
		t.Fatalf("an edited request was approved:\n%s", out)
	}
	for _, ev := range env.Events() {
		if ev == "approved" || ev == "executed" {
			t.Fatalf("audit has %s: %v", ev, env.Events())
		}
	}
	if st, err := os.ReadFile(filepath.Join(env.SimDir(), "living-room.json")); err == nil && bytes.Contains(st, []byte("media")) &&
		(bytes.Contains(st, []byte("other.mkv")) || bytes.Contains(st, []byte("shown.mkv"))) {
		t.Fatalf("the device played: %s", st)
	}
	if r, _ := env.Queue.Get("swap"); r.State == approval.Done || r.State == approval.Executing {
		t.Fatalf("state %s", r.State)
	}
}

// The preview the person approves is the one on screen: when the request
// behind it changes (a newer preview arrives), an open prompt closes and
// y does nothing.
func TestChangedPreviewClosesThePrompt(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("moving", "/media/a.mkv"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	clk.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm == nil {
		t.Fatal("no prompt")
	}
	v := *p.queue.view
	v.BindingHash = "0000000000000000"
	p.Update(viewMsg{id: "moving", view: v})
	clk.Advance(GraceMax)
	if press(m, "y"); p.busy || p.dialogs.confirm != nil {
		t.Fatal("y approved after the request changed")
	}
	if !strings.Contains(p.notice, "request changed") {
		t.Fatalf("notice %q", p.notice)
	}
	// approving for a hash that is not the task's: refused before deciding
	msg := p.approve("moving", "not-the-hash")()
	if om := msg.(outcomeMsg); om.err != approval.ErrPreviewChanged || om.view == nil {
		t.Fatalf("outcome %+v", om)
	}
	if r, _ := env.Queue.Get("moving"); r.State != approval.Pending {
		t.Fatalf("state %s", r.State)
	}
	_ = context.Background
	_ = lease.DefaultIssuer
}

func waitAny(s *session, markers ...string) {
	s.t.Helper()
	s.waitFn(func(b []byte) bool {
		for _, m := range markers {
			if bytes.Contains(b, []byte(m)) {
				return true
			}
		}
		return false
	})
}
