package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// servedChild is a running `vigil serve` child.
type servedChild struct {
	cmd       *exec.Cmd
	url       string // http://127.0.0.1:PORT
	stderr    *serveLogBuffer
	done      chan struct{}
	waitErr   error
	firstLine chan string
}

type serveLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *serveLogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *serveLogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs `vigil serve --metrics 127.0.0.1:0` and waits for it to
// say where its metrics are.
func (h *crashHome) startServe(env ...string) *servedChild {
	h.t.Helper()
	sc := h.spawnServe(env...)
	select {
	case line := <-sc.firstLine:
		const prefix = "vigil serve: metrics on "
		if !strings.HasPrefix(line, prefix) {
			h.t.Fatalf("serve said %q\n%s", line, sc.stderr.String())
		}
		sc.url = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), prefix), "/metrics")
	case <-time.After(20 * time.Second):
		h.t.Fatalf("serve did not start\n%s", sc.stderr.String())
	}
	return sc
}

// spawnServe starts `vigil serve --metrics 127.0.0.1:0` without waiting for it.
func (h *crashHome) spawnServe(env ...string) *servedChild {
	h.t.Helper()
	c := h.child("", "serve", "--metrics", "127.0.0.1:0")
	c.Env = append(c.Env, env...)
	out, err := c.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	sc := &servedChild{cmd: c, stderr: &serveLogBuffer{}, done: make(chan struct{}), firstLine: make(chan string, 1)}
	c.Stderr = sc.stderr
	if err := c.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		select {
		case <-sc.done:
		default:
			c.Process.Kill()
			<-sc.done
		}
	})
	go func() {
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		sc.firstLine <- line
		io.Copy(io.Discard, r)
	}()
	go func() { sc.waitErr = c.Wait(); close(sc.done) }()
	return sc
}

// stop sends SIGTERM and returns the exit code.
func (sc *servedChild) stop(t *testing.T) int {
	t.Helper()
	sc.cmd.Process.Signal(syscall.SIGTERM)
	return sc.wait(t)
}

func (sc *servedChild) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-sc.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not exit\n%s", sc.stderr.String())
	}
	if sc.waitErr == nil {
		return 0
	}
	if ee, ok := sc.waitErr.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("serve: %v", sc.waitErr)
	return -1
}

func (h *crashHome) events(id string) []string {
	var evs []string
	audit.Scan(filepath.Join(h.home, "audit.log"), 0, func(l audit.Line) bool {
		if l.Entry.TaskID == id {
			evs = append(evs, l.Entry.Event)
		}
		return true
	})
	return evs
}

func (h *crashHome) waitEvent(id, event string, within time.Duration) {
	h.t.Helper()
	testwait.For(h.t, within, func() error {
		if evs := h.events(id); !slices.Contains(evs, event) {
			return fmt.Errorf("%s: no %q entry (log: %v)", id, event, evs)
		}
		return nil
	})
}

// approveAndDie approves id in a child killed right after the approved
// entry is in the log: the decision is recorded, nothing ran.
func (h *crashHome) approveAndDie(id string) {
	h.t.Helper()
	err := h.child("approve.audit", "approve", id, "--yes").Run()
	if !killed(err) {
		h.t.Fatalf("approve was not killed at approve.audit: %v", err)
	}
	// (a running serve may already be carrying it out)
	if got := h.events(id); len(got) < 2 || got[0] != "submitted" || got[1] != "approved" {
		h.t.Fatalf("after the killed approval the log says %v", got)
	}
}

// metricsWith scrapes /metrics until it holds want (or within has passed)
// and returns the last answer.
func metricsWith(t *testing.T, base, want string, within time.Duration) (int, string) {
	t.Helper()
	var code int
	var body string
	_ = testwait.Poll(within, func() error {
		if code, body = httpGet(t, base+"/metrics"); code != 200 || !strings.Contains(body, want) {
			return errors.New("not yet")
		}
		return nil
	})
	return code, body
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// An approval whose process was killed after the approved entry, before
// anything ran, is carried out exactly once by `vigil serve`, which nothing
// else prompts (no command opens the queue meanwhile).
func TestServeRunsAnApprovalWhoseProcessDied(t *testing.T) {
	testbin.FullRunOnly(t, "kills real processes")
	h := newCrashHome(t, testbin.Vigil(t))
	h.must(0, "submit", h.manifest("orphan", "30m"))
	h.approveAndDie("orphan")
	journal := filepath.Join(h.home, "devices", "living-room.journal")
	if b, _ := os.ReadFile(journal); len(b) != 0 {
		t.Fatalf("the device ran before serve: %s", b)
	}
	sc := h.startServe()
	h.waitEvent("orphan", "executed", 10*time.Second)
	// the counters follow the log on their own schedule: wait for the entry to be counted
	code, body := metricsWith(t, sc.url, `abos_executor_requests_total{action="MEDIA_PLAY",status="executed"} 1`, 10*time.Second)
	if code != 200 || !strings.Contains(body, `abos_executor_requests_total{action="MEDIA_PLAY",status="executed"} 1`) ||
		!strings.Contains(body, "abos_executor_approvals_pending 0") || !strings.Contains(body, "vigil_build_info{") {
		t.Fatalf("/metrics %d:\n%s", code, body)
	}
	if code, body := httpGet(t, sc.url+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz %d %q", code, body)
	}
	// an approving process that dies while serve runs: serve notices (the
	// log changed) and carries the approval out, once
	h.must(0, "submit", h.manifest("orphan-2", "30m"))
	h.approveAndDie("orphan-2")
	h.waitEvent("orphan-2", "executed", 5*time.Second)
	if code := sc.stop(t); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, sc.stderr.String())
	}
	b, _ := os.ReadFile(journal)
	if n := strings.Count(string(b), "/media/orphan-2.mkv"); n != 1 {
		t.Fatalf("the device ran orphan-2 %d times:\n%s", n, b)
	}
	if got := strings.Join(h.events("orphan-2"), ","); got != "submitted,approved,executed" {
		t.Fatalf("orphan-2 log: %s", got)
	}
	if n := strings.Count(string(b), "/media/orphan.mkv"); n != 1 {
		t.Fatalf("the device ran it %d times:\n%s", n, b)
	}
	if got := strings.Join(h.events("orphan"), ","); got != "submitted,approved,executed" {
		t.Fatalf("log: %s", got)
	}
	recs := h.checkInvariants("after serve")
	if recs["orphan"].State != "done" || recs["orphan-2"].State != "done" {
		t.Fatalf("record %+v", recs["orphan"])
	}
	// a second serve finds nothing to do: still once (its first pass has
	// ended when its counters have read the log: both executions, no third)
	sc = h.startServe()
	const executed = `abos_executor_requests_total{action="MEDIA_PLAY",status="executed"} 2`
	if code, body := metricsWith(t, sc.url, executed, 10*time.Second); code != 200 || !strings.Contains(body, executed) {
		t.Fatalf("/metrics of the second serve %d:\n%s", code, body)
	}
	if code := sc.stop(t); code != 0 {
		t.Fatalf("second serve exit %d", code)
	}
	b, _ = os.ReadFile(journal)
	if n := strings.Count(string(b), "/media/orphan.mkv"); n != 1 {
		t.Fatalf("after a second serve the device ran it %d times", n)
	}
}

// SIGTERM while serve carries out an execution: the device call finishes,
// the outcome is recorded, then serve exits 0.
func TestServeGracefulShutdownDuringExecution(t *testing.T) {
	testbin.FullRunOnly(t, "kills real processes")
	bin := testbin.Vigil(t)
	// started: the approval is carried out while serve opens the queue;
	// running: an approver dies while serve is up, and serve's pass runs it
	for _, when := range []string{"started", "running"} {
		t.Run(when, func(t *testing.T) { gracefulShutdown(t, bin, when == "running") })
	}
}

func gracefulShutdown(t *testing.T, bin string, serveFirst bool) {
	var posts atomic.Int32
	inCall := make(chan struct{}, 1)
	release := make(chan struct{}) // the device answers once serve has the signal
	var once sync.Once
	defer once.Do(func() { close(release) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			posts.Add(1)
			select {
			case inCall <- struct{}{}:
			default:
			}
			<-release // a device still busy when the signal comes
			io.WriteString(w, "[]")
			return
		}
		io.WriteString(w, `{"entity_id":"media_player.kitchen","state":"idle","attributes":{}}`)
	}))
	defer srv.Close()
	h := newCrashHome(t, bin)
	cfg := `[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[[devices]]
id = "kitchen"
driver = "hass"
base_url = "` + srv.URL + `"
entity_id = "media_player.kitchen"
token_file = "hass-token.txt"
`
	os.WriteFile(filepath.Join(h.home, "hass-token.txt"), []byte("test-token-0123456789abcdef\n"), 0o600)
	os.WriteFile(filepath.Join(h.home, "config.toml"), []byte(cfg), 0o600)
	m := filepath.Join(h.home, "slow.json")
	tok := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:crash", "--task-id", "slow", "--cap", "MEDIA_PLAY", "--ttl", "30m"))
	os.WriteFile(m, []byte(`{"task_id":"slow","capability_id":"MEDIA_PLAY","lease":"`+tok+
		`","inputs":{"media_uri":"https://media.example/a.mp3","target_device":"kitchen"}}`), 0o600)
	h.must(0, "submit", m)
	var sc *servedChild
	if serveFirst {
		sc = h.startServe()
	}
	h.approveAndDie("slow")
	if !serveFirst {
		if posts.Load() != 0 {
			t.Fatal("the device was called before serve")
		}
		// the signal must come during the device call, even before serve
		// says it is up
		sc = h.spawnServe()
	}
	select {
	case <-inCall:
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not run the approved task\n%s", sc.stderr.String())
	}
	sc.cmd.Process.Signal(syscall.SIGTERM)
	waitSignalTaken(t, sc.cmd.Process.Pid)
	once.Do(func() { close(release) })
	if code := sc.wait(t); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, sc.stderr.String())
	}
	if got := strings.Join(h.events("slow"), ","); got != "submitted,approved,executed" {
		t.Fatalf("log after shutdown: %s\n%s", got, sc.stderr.String())
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("the device was called %d times", n)
	}
	b, err := os.ReadFile(filepath.Join(h.home, "tasks", "slow", "record.json"))
	var rec struct {
		State   string `json:"state"`
		LogFrom *int64 `json:"log_from"`
	}
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.State != "done" || rec.LogFrom != nil {
		t.Fatalf("record after shutdown: %s %v", b, err)
	}
}

func TestServeMetricsAddressMustBeLoopback(t *testing.T) {
	home := t.TempDir()
	_, errs, code := runReal(t, home, "serve", "--metrics", "0.0.0.0:9464")
	if code != ExitBadInput || !strings.Contains(errs, "not a loopback address") || !strings.Contains(errs, "--allow-remote") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, errs, code = runReal(t, home, "serve", "--metrics", "9464")
	if code != ExitBadInput || !strings.Contains(errs, "--metrics: must be host:port") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, c := range []struct {
		in, want string
		remote   bool
	}{{":9464", "127.0.0.1:9464", false}, {"localhost:1", "localhost:1", false}, {"[::1]:2", "[::1]:2", false},
		{"192.0.2.1:3", "192.0.2.1:3", true}} {
		got, err := metricsAddr(c.in, c.remote)
		if err != nil || got != c.want {
			t.Errorf("%q: %q %v", c.in, got, err)
		}
	}
}

// waitSignalTaken waits until the process pid has taken the signals sent
// to it (none is pending in /proc/pid/status any more): its handler has them.
func waitSignalTaken(t *testing.T, pid int) {
	t.Helper()
	testwait.For(t, 10*time.Second, func() error {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return nil // gone: nothing pending
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && (f[0] == "ShdPnd:" || f[0] == "SigPnd:") && strings.Trim(f[1], "0") != "" {
				return fmt.Errorf("process %d: %s", pid, l)
			}
		}
		return nil
	})
}
