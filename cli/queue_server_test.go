package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/natsqueue/natstest"
	"github.com/vigil-dev/vigil/internal/testbin"
)

// appendQueueURL points a home at a server that needs no credentials.
func appendQueueURL(t *testing.T, home, url string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "\n[queue]\nurl = %q\n", url)
}

// TestQueueRefusesTheDistroServer: against Debian's nats-server 2.9.10,
// run as the real process, `vigil serve` stops at once (exit 2, no retry
// loop), and submit, pending and doctor say the same: the version, the URL,
// the minimum and how to get a newer server.
func TestQueueRefusesTheDistroServer(t *testing.T) {
	p := natstest.Start(t)
	want := "nats-server " + p.Version + " at " + p.URL + " is too old: Vigil needs 2.10 or newer ("
	ex := newCrashHome(t, testbin.Vigil(t))
	appendQueueURL(t, ex.home, p.URL)
	start := time.Now()
	sc := ex.spawnServe()
	code := sc.wait(t)
	took := time.Since(start)
	if code != ExitBadInput || !strings.Contains(sc.stderr.String(), want) || took > 10*time.Second {
		t.Fatalf("serve on nats-server %s: exit %d after %s, want %d at once saying %q\n%s", p.Version, code,
			took.Round(time.Millisecond), ExitBadInput, want, sc.stderr.String())
	}

	home := t.TempDir()
	appendQueueURL(t, home, p.URL)
	manifest := filepath.Join(home, "m.json")
	if err := os.WriteFile(manifest, []byte(`{"task_id":"old-1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"submit", manifest}, {"pending"}, {"preview", "old-1"}} {
		_, errs, code := runReal(t, home, args...)
		if code != ExitExecution || !strings.Contains(errs, want) || !strings.Contains(errs, "go install github.com/nats-io/nats-server/v2@") {
			t.Errorf("vigil %s: exit %d, want %d saying %q\n%s", args[0], code, ExitExecution, want, errs)
		}
	}

	out, errs, code := runReal(t, home, "doctor", "--json")
	var rep struct {
		Checks []doctorCheck `json:"checks"`
	}
	if code != ExitCheck || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("doctor: exit %d, want %d\n%s%s", code, ExitCheck, out, errs)
	}
	if q := findCheck(rep.Checks, "queue"); q == nil || q.OK || !strings.Contains(q.Detail, want) {
		t.Fatalf("doctor's queue check: %+v, want a failure saying %q", q, want)
	}
}

func findCheck(cs []doctorCheck, name string) *doctorCheck {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

// waitHealth polls /healthz until its status is code and its body holds
// want, and fails the test after 20 s.
func waitHealth(t *testing.T, sc *servedChild, code int, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, body := httpGet(t, sc.url+"/healthz")
		if got == code && strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz stayed %d %q, want %d with %q\n%s", got, body, code, want, sc.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestServeHealthAndLogFollowTheQueue: on the embedded server (the
// version go.mod pins) `vigil serve` logs the server's version when it
// connects; /healthz answers 503 with the reason while the server is
// down, 200 once it is back (the log says lost and reconnected), and 503
// while a stream is missing. `vigil doctor` reports the version.
func TestServeHealthAndLogFollowTheQueue(t *testing.T) {
	r := newNatsRig(t)
	sc := r.startExecutor()
	defer sc.stop(t)
	waitHealth(t, sc, 200, "ok")
	if log := sc.stderr.String(); !strings.Contains(log, "shared queue: connected") ||
		!strings.Contains(log, "version="+server.VERSION) {
		t.Fatalf("serve's log does not say it connected, with the server's version:\n%s", log)
	}

	r.srv.Shutdown()
	r.srv.WaitForShutdown()
	waitHealth(t, sc, 503, "shared queue: not connected to "+r.url)
	r.startServer()
	waitHealth(t, sc, 200, "ok")
	if log := sc.stderr.String(); !strings.Contains(log, "lost the server") || !strings.Contains(log, "shared queue: reconnected") {
		t.Fatalf("serve's log does not say it lost and regained the server:\n%s", log)
	}

	_, js, _ := r.client("executor")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, natsqueue.AuditStream); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, sc, 503, "stream "+natsqueue.AuditStream+" is missing")

	res := r.must(ExitCheck, r.ops["alice"], "alice", "doctor", "--as", "operator")
	if !strings.Contains(res.out, "nats-server "+server.VERSION+" at "+r.url) ||
		!strings.Contains(res.out, "FAIL streams  stream "+natsqueue.AuditStream+" is missing") {
		t.Fatalf("doctor does not report the server's version and the missing stream:\n%s", res.out)
	}
}

// TestServeStopsWhenTheServerItWaitedForIsTooOld: `vigil serve` started
// while no server answers waits for one; when the one that comes up is
// Debian's 2.9, it logs the refusal and exits 2 rather than retrying.
func TestServeStopsWhenTheServerItWaitedForIsTooOld(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ex := newCrashHome(t, testbin.Vigil(t))
	appendQueueURL(t, ex.home, fmt.Sprintf("nats://127.0.0.1:%d", port))
	sc := ex.startServe()
	waitHealth(t, sc, 503, "shared queue: not connected to")
	p := natstest.Start(t, "-p", strconv.Itoa(port))
	want := "nats-server " + p.Version + " at " + p.URL + " is too old"
	if code := sc.wait(t); code != ExitBadInput || !strings.Contains(sc.stderr.String(), "refusing the server") ||
		!strings.Contains(sc.stderr.String(), want) {
		t.Fatalf("serve once nats-server %s came up: exit %d, want %d saying %q\n%s", p.Version, code, ExitBadInput,
			want, sc.stderr.String())
	}
}

// TestDoctorChecksTheHome: `vigil doctor --json` on a home without
// [queue] reports the home and the search backends; a config others may
// write fails it (exit 1); --as takes only the three roles.
func TestDoctorChecksTheHome(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runReal(t, home, "doctor", "--json")
	var rep struct {
		Checks []doctorCheck `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || findCheck(rep.Checks, "home") == nil ||
		findCheck(rep.Checks, "search") == nil || findCheck(rep.Checks, "queue") != nil {
		t.Fatalf("doctor --json: exit %d %v\n%s%s", code, err, out, errs)
	}
	if h := findCheck(rep.Checks, "home"); !h.OK {
		t.Fatalf("a private home: %+v", h)
	}
	if err := os.Chmod(filepath.Join(home, "config.toml"), 0o666); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runReal(t, home, "doctor")
	if code != ExitCheck || !strings.Contains(out, "FAIL home") || !strings.Contains(out, "config.toml (-rw-rw-rw-)") {
		t.Fatalf("doctor with a config others may write: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code := runReal(t, home, "doctor", "--as", "admin"); code != ExitBadInput || !strings.Contains(errs, "--as") {
		t.Fatalf("doctor --as admin: exit %d\n%s", code, errs)
	}
}
