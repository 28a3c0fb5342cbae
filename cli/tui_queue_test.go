package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/nats-io/nats.go"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/internal/testwait"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// The secrets a manifest plants in its media URI: they must never reach an
// operator's screen.
const (
	tuiQueueSecretURI = "https://ada:hunter2@media.example.com/live/stream.m3u8?api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc"
)

var tuiQueueSecrets = []string{"hunter2", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"}

// tuiOperator is the TUI of an operator's home on the rig's shared queue,
// in this process (the executor and the agent are real vigil processes).
// The test goroutine is its event loop: it runs the root model's commands
// in goroutines, feeds their messages to Update one at a time and reads
// the screen (Render) between them, as Bubble Tea's loop does. Its clock
// runs ahead on demand, so keys land after the pane's grace period
// without sleeping through it.
type tuiOperator struct {
	t     *testing.T
	app   *App
	m     *ui.Model
	msgs  chan tea.Msg
	done  chan struct{}
	ahead atomic.Int64
	seen  strings.Builder // every screen drawn, flattened
	close func()
	// shared is the TUI's side of the shared queue (nil when its config
	// cannot work)
	shared *tuiQueue
}

func newTUIOperator(t *testing.T, r *natsRig, user string) *tuiOperator {
	t.Helper()
	o := &tuiOperator{t: t, msgs: make(chan tea.Msg, 64), done: make(chan struct{})}
	app := NewApp()
	app.HomeFlag = r.ops[user]
	env := map[string]string{"VIGIL_HOME": r.ops[user], "VIGIL_TEST_NATS_USER": user, "VIGIL_TEST_NATS_PASSWORD": natsPassword(user)}
	app.Getenv = func(k string) string { return env[k] }
	app.Now = func() time.Time { return time.Now().UTC().Add(time.Duration(o.ahead.Load())) }
	if err := app.Load(); err != nil {
		t.Fatal(err)
	}
	if err := app.EnsureState(); err != nil {
		t.Fatal(err)
	}
	o.app = app
	pal, _ := themes.Palettes("dark")
	list, closeAll, shared := buildPanes(app, themes.New(pal))
	o.close, o.shared = closeAll, shared
	o.m = ui.New(ui.Options{Panes: list, Theme: "dark"})
	t.Cleanup(o.quit)
	o.run(o.m.Init())
	o.handle(tea.WindowSizeMsg{Width: 140, Height: 44})
	return o
}

// run runs a command off the loop; its message comes back to it.
func (o *tuiOperator) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		select {
		case o.msgs <- msg:
		case <-o.done:
		}
	}()
}

// handle is one turn of the loop.
func (o *tuiOperator) handle(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			o.run(c)
		}
	default:
		_, cmd := o.m.Update(msg)
		o.run(cmd)
	}
}

// quit stops the loop and releases the panes (the mirror, the watch).
func (o *tuiOperator) quit() {
	if o.close == nil {
		return
	}
	close(o.done)
	o.close()
	o.close = nil
}

// wait runs the loop until the screen shows every marker.
func (o *tuiOperator) wait(markers ...string) {
	o.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		screen := flatten(o.m.Render())
		o.seen.WriteString(screen + "\n")
		ok := true
		for _, m := range markers {
			ok = ok && strings.Contains(screen, m)
		}
		if ok {
			return
		}
		select {
		case msg := <-o.msgs:
			o.handle(msg)
		case <-deadline:
			o.t.Fatalf("the screen never showed %q:\n%s", markers, ansi.Strip(o.m.Render()))
		}
	}
}

// flatten is the screen's text without its escapes and spacing, so a
// marker matches however a line was wrapped or padded.
func flatten(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), " ") }

// key sends a key after the grace period (the clock is moved past it).
func (o *tuiOperator) key(k string) {
	o.ahead.Add(int64(2 * time.Second))
	for _, r := range k {
		o.handle(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (o *tuiOperator) noSecrets() {
	o.t.Helper()
	for _, s := range tuiQueueSecrets {
		if strings.Contains(o.seen.String(), s) {
			o.t.Fatalf("secret %q reached the operator's screen", s)
		}
	}
}

func (r *natsRig) submitURI(id, uri string) map[string]any {
	r.t.Helper()
	res := r.must(0, r.agent, "agent", "submit", r.manifest(id, time.Hour, uri))
	var v map[string]any
	if err := json.Unmarshal([]byte(res.out), &v); err != nil || v["state"] != "pending" {
		r.t.Fatalf("submit %s: %v\n%s", id, err, res.out)
	}
	return v
}

// TestTUIQueueApprovesOverTheSharedQueue: an operator's TUI on another
// home sees a task an agent submitted through a real executor, shows its
// masked preview (the planted secret never reaches the screen), approves
// it, and the executor runs it once with the decision naming this operator.
func TestTUIQueueApprovesOverTheSharedQueue(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	o := newTUIOperator(t, r, "alice")
	o.key("3")
	o.wait("Pending approvals (0)", "shared queue · deciding as operator:alice")
	r.submitURI("tui-1", tuiQueueSecretURI)
	o.wait("Pending approvals (1)", "tui-1", "media.example.com")
	o.key("a")
	o.wait("Approve tui-1?")
	o.key("y")
	o.wait("tui-1 approved and executed")
	if n := r.exec.streamRuns(); n != 1 {
		t.Fatalf("device ran %d times", n)
	}
	_, _, c := r.client("bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, _, err := c.Get(ctx, "tui-1"); err != nil || v.Record.DecidedBy != "operator:alice" || v.Record.DecidedVia != "queue" {
		t.Fatalf("decided by %q via %q (%v), want operator:alice via queue", v.Record.DecidedBy, v.Record.DecidedVia, err)
	}
	// the decided list shows the result, checked with nothing: this home
	// has no copy of the executor's key, and says so
	o.key("v")
	o.wait("Decided tasks (1)", "NOT CHECKED")
	o.noSecrets()
}

// streamRuns counts the device actions on tuiQueueSecretURI's stream.
func (h *crashHome) streamRuns() int {
	b, _ := os.ReadFile(filepath.Join(h.home, "devices", "living-room.journal"))
	return bytes.Count(b, []byte("media.example.com/live/stream.m3u8"))
}

// TestTUIQueueTellsWhoWon: another operator's decision reaches the bucket
// first (the executor is down, so it waits there); this operator's approval
// is told who won and changes nothing; when the executor is back it
// applies the winner's decision.
func TestTUIQueueTellsWhoWon(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	v := r.submit("won-1", time.Hour)
	if code := ex.stop(t); code != 0 {
		t.Fatalf("serve exit %d", code)
	}
	o := newTUIOperator(t, r, "alice")
	o.key("3")
	o.wait("Pending approvals (1)", "won-1", "/media/won-1.mkv")
	o.key("a")
	o.wait("Approve won-1?")
	_, _, bob := r.client("bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := bob.Decide(ctx, "won-1", natsqueue.Decision{ID: "bob-1", Approve: false, By: "operator:bob",
		Reason: "not now", At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	o.key("y")
	o.wait("task won-1 already decided by operator:bob")
	ex = r.startExecutor()
	defer ex.stop(t)
	o.wait("Pending approvals (0)")
	if n := r.journalRuns("won-1"); n != 0 {
		t.Fatalf("device ran %d times", n)
	}
	if got, _ := bob.Outcome(ctx, "won-1", ""); got.Record.State != approval.Denied || got.Record.DecidedBy != "operator:bob" {
		t.Fatalf("outcome %s by %s", got.Record.State, got.Record.DecidedBy)
	}
	_ = v
}

// TestTUIQueueRefusesAChangedPreview: the view changes in the bucket after
// the person opened the approval; the approval names the preview shown,
// so it is refused, nothing runs, and the pane shows the new preview.
func TestTUIQueueRefusesAChangedPreview(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	r.submit("chg-1", time.Hour)
	o := newTUIOperator(t, r, "alice")
	o.key("3")
	o.wait("Pending approvals (1)", "chg-1", "/media/chg-1.mkv")
	o.key("a")
	o.wait("Approve chg-1?")
	// a new view of the task, as an executor republishing it would write
	nc, js, _ := r.client("executor")
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, natsqueue.TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	ent, err := kv.Get(ctx, natsqueue.TaskKey("chg-1"))
	if err != nil {
		t.Fatal(err)
	}
	var view natsqueue.TaskView
	if err := json.Unmarshal(ent.Value(), &view); err != nil {
		t.Fatal(err)
	}
	view.PreviewHash = "sha256:" + strings.Repeat("1", 64)
	view.Preview.Raw = strings.ReplaceAll(view.Preview.Raw, "/media/chg-1.mkv", "/media/changed.mkv")
	view.Preview.EstimatedEffect = strings.ReplaceAll(view.Preview.EstimatedEffect, "/media/chg-1.mkv", "/media/changed.mkv")
	b, _ := json.Marshal(view)
	if _, err := kv.Update(ctx, natsqueue.TaskKey("chg-1"), b, ent.Revision()); err != nil {
		t.Fatal(err)
	}
	o.key("y")
	o.wait("chg-1: the request changed", "nothing was approved", "/media/changed.mkv")
	if n := r.journalRuns("chg-1"); n != 0 {
		t.Fatalf("device ran %d times", n)
	}
	ent, err = kv.Get(ctx, natsqueue.TaskKey("chg-1"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(ent.Value(), &view)
	if view.Decision != nil || view.Record.State != approval.Pending {
		t.Fatalf("after the refused approval: %+v %s", view.Decision, view.Record.State)
	}
}

// TestTUIQueueAuditPaneFollowsTheExecutorsLog: the executor's entries
// appear in the operator's copy, which verifies as a log and is what the
// Audit pane shows; a second start of the TUI continues the copy without
// a line twice.
func TestTUIQueueAuditPaneFollowsTheExecutorsLog(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	r.submit("aud-1", time.Hour)
	o := newTUIOperator(t, r, "alice")
	o.key("4")
	o.wait("Audit (executor)", "aud-1")
	copyPath := queueAuditPath(o.app)
	execLog := filepath.Join(r.exec.home, "audit.log")
	sameAsExecutor(t, copyPath, execLog)
	o.wait("✓")
	o.quit()
	r.must(0, r.ops["bob"], "bob", "deny", "aud-1", "--reason", "no")
	r.submit("aud-2", time.Hour)
	// with a copy of the executor's operator key the decided task's result
	// is shown as signed: it verifies
	pub, err := os.ReadFile(filepath.Join(r.exec.home, "keys", lease.OperatorPubFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.ops["alice"], "keys", lease.OperatorPubFile), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	o = newTUIOperator(t, r, "alice")
	o.key("4")
	o.wait("Audit (executor)", "aud-2")
	sameAsExecutor(t, copyPath, execLog)
	o.wait("✓")
	if strings.Contains(o.seen.String(), "BROKEN") {
		t.Fatalf("the Audit pane says the copy is broken")
	}
	o.key("3")
	o.key("v")
	o.wait("Decided tasks (1)", "aud-1", "denied", "operator:bob", "· signed")
	if strings.Contains(o.seen.String(), "NOT CHECKED") || strings.Contains(o.seen.String(), "NOT VERIFIED") {
		t.Fatalf("a result that verifies is not shown as signed")
	}
}

// sameAsExecutor waits until the copy is the executor's log byte for byte
// and checks that it verifies.
func sameAsExecutor(t *testing.T, copyPath, execLog string) {
	t.Helper()
	testwait.For(t, 30*time.Second, func() error {
		want, _ := os.ReadFile(execLog)
		got, _ := os.ReadFile(copyPath)
		if len(want) == 0 || !bytes.Equal(got, want) {
			return fmt.Errorf("the copy (%d bytes) is not the executor's log (%d bytes)", len(got), len(want))
		}
		return nil
	})
	if rep, err := audit.Verify(copyPath); err != nil || !rep.OK {
		t.Fatalf("the copy does not verify: %+v %v", rep, err)
	}
}

var _ panes.Pane = executorAudit{}

// TestTUIQueueCatchesUpAfterTheServerRestarts: the server restarts under a
// running TUI; the tasks submitted after it reach the Approvals pane
// through the bucket's watch, a decision from the screen still runs once,
// and the Audit pane's copy catches up with the executor's log.
func TestTUIQueueCatchesUpAfterTheServerRestarts(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	r.submit("rs-1", time.Hour)
	o := newTUIOperator(t, r, "alice")
	o.key("3")
	o.wait("Pending approvals (1)", "rs-1", "/media/rs-1.mkv")
	r.restartServer(time.Second)
	t0 := time.Now()
	r.submit("rs-2", time.Hour)
	t1 := time.Now()
	o.wait("Pending approvals (2)", "rs-2")
	t.Logf("after the restart: submitted in %s, on screen %s later", t1.Sub(t0), time.Since(t1))
	// a bound far above the milliseconds it takes, far below the ~18 s a
	// watch takes to find its consumer gone by missed heartbeats alone
	if d := time.Since(t1); d > 10*time.Second {
		t.Errorf("the task reached the screen %s after it was submitted: the watch was not started over on reconnect", d)
	}
	o.key("j")
	o.wait("/media/rs-2.mkv")
	o.key("a")
	o.wait("Approve rs-2?")
	o.key("y")
	t2 := time.Now()
	o.wait("rs-2 approved and executed")
	t.Logf("the decision after the restart ran %s later", time.Since(t2))
	// the executor's own watch of the bucket is started over on reconnect
	// too (it took 18.7 s when it waited for missed heartbeats)
	if d := time.Since(t2); d > 10*time.Second {
		t.Errorf("the decision after the restart ran %s later: the executor's watch was not started over on reconnect", d)
	}
	if n, m := r.journalRuns("rs-2"), r.journalRuns("rs-1"); n != 1 || m != 0 {
		t.Fatalf("device ran rs-2 %d times, rs-1 %d times", n, m)
	}
	t3 := time.Now()
	sameAsExecutor(t, queueAuditPath(o.app), filepath.Join(r.exec.home, "audit.log"))
	t.Logf("the audit copy caught up %s after the decision", time.Since(t3))
}

// TestTUIQueueGoesLiveWhenTheServerComesUp: the TUI opens at once while
// the server is down, its Approvals pane says it is connecting (the URL,
// never the password) and refuses a decision without sending it; the
// server then starts on the same port with an executor, and with no key
// pressed the pane goes live: an agent's task appears, approving it runs
// it once on the device, and the Audit tab's copy catches up.
func TestTUIQueueGoesLiveWhenTheServerComesUp(t *testing.T) {
	r := newNatsRig(t) // the rig's first start picked a free port, kept for the restart
	r.srv.Shutdown()
	r.srv.WaitForShutdown()
	t0 := time.Now()
	o := newTUIOperator(t, r, "alice")
	opened := time.Since(t0)
	o.key("3")
	o.wait("not connected to the shared queue yet", "connecting to "+r.url, "Vigil keeps trying", "no restart needed",
		"last attempt: queue.url: cannot reach "+r.url)
	shown := time.Since(t0)
	t.Logf("opened in %s, the connecting notice on screen %s after the start", opened, shown)
	// generous bounds under -race; before, the pane waited up to 20 s
	if opened > 3*time.Second || shown > 10*time.Second {
		t.Errorf("opened in %s, notice after %s: the TUI waited for the server", opened, shown)
	}
	if strings.Contains(o.seen.String(), natsPassword("alice")) {
		t.Fatal("the password reached the screen")
	}
	src := o.shared.src
	if _, _, err := src.Decide(context.Background(), "early-1", approval.Decision{Approve: true, By: "operator:alice",
		PreviewHash: "sha256:" + strings.Repeat("0", 64)}); !errors.Is(err, errNotConnected) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("a decision before the connection: %v", err)
	}

	r.startServer()
	ex := r.startExecutor()
	defer ex.stop(t)
	r.submitURI("late-1", tuiQueueSecretURI)
	t1 := time.Now()
	o.wait("Pending approvals (1)", "late-1", "media.example.com")
	t.Logf("the task reached the screen %s after its submit answered", time.Since(t1))
	if strings.Contains(flatten(o.m.Render()), "not connected") {
		t.Fatalf("the pane still says it is not connected:\n%s", ansi.Strip(o.m.Render()))
	}
	o.key("a")
	o.wait("Approve late-1?")
	o.key("y")
	o.wait("late-1 approved and executed")
	if n := r.exec.streamRuns(); n != 1 {
		t.Fatalf("device ran %d times", n)
	}
	sameAsExecutor(t, queueAuditPath(o.app), filepath.Join(r.exec.home, "audit.log"))
	o.key("4")
	o.wait("Audit (executor)", "late-1")
	o.noSecrets()
	// the decision sent early never reached the bucket
	_, _, c := r.client("bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := c.Get(ctx, "early-1"); !errors.Is(err, natsqueue.ErrNoTask) {
		t.Fatalf("early-1 in the bucket: %v", err)
	}
	// the connection lost again: a decision fails at once, nothing is sent
	r.submit("late-2", time.Hour)
	o.key("3")
	o.wait("Pending approvals (1)", "late-2")
	r.srv.Shutdown()
	r.srv.WaitForShutdown()
	testwait.Until(t, time.Minute, "the connection to notice the server is gone", func() bool {
		return src.nc.Status() != nats.CONNECTED
	})
	t2 := time.Now()
	_, _, err := src.Decide(context.Background(), "late-2", approval.Decision{Approve: true, By: "operator:alice",
		PreviewHash: "sha256:" + strings.Repeat("0", 64)})
	// at once: a decision that waited for the connection would wait for
	// as long as the server stays down (here: for ever)
	if !errors.Is(err, errNotConnected) || !strings.Contains(err.Error(), "nothing was sent") || time.Since(t2) > 5*time.Second {
		t.Fatalf("a decision while reconnecting (after %s): %v", time.Since(t2), err)
	}
	r.startServer()
	if v, _, err := c.Get(ctx, "late-2"); err != nil || v.Decision != nil {
		t.Fatalf("late-2 after the server is back: decision %+v (%v)", v.Decision, err)
	}
}

// TestTUIQueueRefusedCredentialsStopTrying: a server that refuses the
// credentials will not accept them by being asked again: the pane says
// so, names the URL, and that Vigil stopped trying.
func TestTUIQueueRefusedCredentialsStopTrying(t *testing.T) {
	r := newNatsRig(t)
	r.ops["mallory"] = r.newHome("mallory") // no such NATS user
	o := newTUIOperator(t, r, "mallory")
	o.key("3")
	o.wait("not connected to the shared queue", r.url, "Vigil stopped trying", "Authorization Violation")
	if strings.Contains(o.seen.String(), natsPassword("mallory")) {
		t.Fatal("the password reached the screen")
	}
}

// TestTUIQueueBadCredsFileSaysSoAtOnce: a credentials file that is not one
// is an error that no retry heals; with the server down it is still said
// at once, naming its key, and nothing keeps trying.
func TestTUIQueueBadCredsFileSaysSoAtOnce(t *testing.T) {
	r := newNatsRig(t)
	r.srv.Shutdown()
	r.srv.WaitForShutdown()
	home := t.TempDir()
	creds := filepath.Join(home, "vigil.creds")
	if err := os.WriteFile(creds, []byte("not credentials\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"),
		[]byte(fmt.Sprintf("[queue]\nurl = %q\ncreds_file = \"vigil.creds\"\n", r.url)), 0o600); err != nil {
		t.Fatal(err)
	}
	r.ops["carol"] = home
	t0 := time.Now()
	o := newTUIOperator(t, r, "carol")
	o.key("3")
	o.wait("approvals are unavailable", "queue.creds_file", "is not a NATS credentials file")
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("the bad credentials file was said %s after the start", d)
	}
	if o.shared != nil {
		t.Fatal("a shared queue is kept trying with a credentials file that cannot work")
	}
}
