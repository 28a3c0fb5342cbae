package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/internal/crashpoint"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// crashHome is a home with keys, a sim device and the vigil binary built
// once, for tests that SIGKILL real vigil processes.
type crashHome struct {
	t    *testing.T
	home string
	bin  string
}

func newCrashHome(t *testing.T, bin string) *crashHome {
	t.Helper()
	home := t.TempDir()
	cfg := `[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[[devices]]
id = "living-room"
driver = "sim"
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &crashHome{t: t, home: home, bin: bin}
	h.must(0, "keys", "init")
	return h
}

func (h *crashHome) must(want int, args ...string) string {
	h.t.Helper()
	out, errs, code := runReal(h.t, h.home, args...)
	if code != want {
		h.t.Fatalf("vigil %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
	}
	return out
}

// runReal runs the CLI in-process against home on the real clock (the
// children run on it too).
func runReal(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &errb
	app.In = strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd = home
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	if err != nil {
		var ee *ExitError
		if !(errors.As(err, &ee) && ee.Quiet) {
			fmt.Fprintln(&errb, "vigil: "+err.Error())
		}
	}
	return out.String(), errb.String(), ExitCode(err)
}

// dropAll writes manifests for ids into inbox/new (leases signed here with
// the home's issuer key) and lets one `vigil pending` submit them all.
func (h *crashHome) dropAll(ids []string, ttl time.Duration) {
	h.t.Helper()
	key, _, err := lease.LoadPrivateKey(filepath.Join(h.home, "keys", lease.IssuerKeyFile))
	if err != nil {
		h.t.Fatal(err)
	}
	dir := filepath.Join(h.home, "inbox", "new")
	os.MkdirAll(dir, 0o700)
	for _, id := range ids {
		tok, err := lease.Issue(key, lease.IssueOptions{KID: lease.LocalIssuerKID, Subject: "agent:crash", TaskID: id,
			Caps: []string{"MEDIA_PLAY"}, TTL: ttl, Issuer: lease.DefaultIssuer, Audience: lease.DefaultAudience})
		if err != nil {
			h.t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
			"inputs": map[string]any{"media_uri": "/media/" + id + ".mkv", "target_device": "living-room"}})
		if err := os.WriteFile(filepath.Join(dir, id+".json"), b, 0o600); err != nil {
			h.t.Fatal(err)
		}
	}
	if h.bin != "" {
		// the binary (built without -race) sweeps hundreds of files faster
		if out, err := h.child("", "pending").CombinedOutput(); err != nil {
			h.t.Fatalf("pending: %v\n%s", err, out)
		}
		return
	}
	h.must(0, "pending")
}

// pastDeadline waits until task id's deadline, read from its record, has
// passed: the next vigil process (on the real clock) finds it overdue.
func (h *crashHome) pastDeadline(id string) {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.home, "tasks", id, "record.json"))
	var rec approval.Record
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	deadline, _ := rec.Deadline()
	if err != nil || deadline.IsZero() {
		h.t.Fatalf("%s: no deadline in its record (%v): %s", id, err, b)
	}
	testwait.Until(h.t, 30*time.Second, id+"'s deadline", func() bool { return time.Now().After(deadline) })
}

// manifest writes a MEDIA_PLAY manifest for id (media /media/<id>.mkv) and
// returns its path.
func (h *crashHome) manifest(id string, ttl string) string {
	h.t.Helper()
	tok := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:crash", "--task-id", id, "--cap", "MEDIA_PLAY", "--ttl", ttl))
	b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/" + id + ".mkv", "target_device": "living-room"}})
	p := filepath.Join(h.home, id+".json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// child runs the vigil binary with VIGIL_CRASHPOINT=point (none if empty).
func (h *crashHome) child(point string, args ...string) *exec.Cmd {
	c := exec.Command(h.bin, append([]string{"--home", h.home}, args...)...)
	c.Env = append(os.Environ(), "VIGIL_HOME="+h.home)
	if point != "" {
		c.Env = append(c.Env, crashpoint.Env+"="+point)
	}
	return c
}

func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// taskLog is what the audit log says about one task.
type taskLog struct {
	submitted, decisions, outcomes int
	decision                       string // approved | denied | expired | tampered
	outcome                        string // executed | failed
}

// checkInvariants reopens nothing itself: call it after a command that
// opened the queue (recovery ran). It checks the chain, that every task has
// at most one decision and one outcome entry, that records agree with the
// log, that no record is left mid-transition, and that the device saw each
// task at most once (exactly once when done).
func (h *crashHome) checkInvariants(label string) map[string]approval.Record {
	t := h.t
	t.Helper()
	rep, err := audit.Verify(filepath.Join(h.home, "audit.log"))
	if err != nil || !rep.OK {
		t.Fatalf("%s: audit verify: %v %s", label, err, rep)
	}
	logs := map[string]*taskLog{}
	audit.Scan(filepath.Join(h.home, "audit.log"), 0, func(l audit.Line) bool {
		e := l.Entry
		if e.TaskID == "" {
			return true
		}
		tl := logs[e.TaskID]
		if tl == nil {
			tl = &taskLog{}
			logs[e.TaskID] = tl
		}
		switch e.Event {
		case audit.EventSubmitted:
			tl.submitted++
		case audit.EventApproved, audit.EventDenied, audit.EventExpired, "tampered":
			tl.decisions++
			tl.decision = e.Event
		case audit.EventExecuted, audit.EventFailed:
			tl.outcomes++
			tl.outcome = e.Event
		}
		return true
	})
	journal, _ := os.ReadFile(filepath.Join(h.home, "devices", "living-room.journal"))
	recs := map[string]approval.Record{}
	ents, _ := os.ReadDir(filepath.Join(h.home, "tasks"))
	for _, ent := range ents {
		id := ent.Name()
		b, err := os.ReadFile(filepath.Join(h.home, "tasks", id, "record.json"))
		if errors.Is(err, os.ErrNotExist) {
			if logs[id] != nil && (logs[id].decisions > 0 || logs[id].outcomes > 0) {
				t.Fatalf("%s: %s has log entries but no record", label, id)
			}
			continue
		}
		var r approval.Record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %s: record: %v", label, id, err)
		}
		recs[id] = r
		tl := logs[id]
		if tl == nil {
			tl = &taskLog{}
		}
		runs := strings.Count(string(journal), "/media/"+id+".mkv")
		switch {
		case tl.submitted != 1:
			t.Fatalf("%s: %s has %d submitted entries", label, id, tl.submitted)
		case tl.decisions > 1:
			t.Fatalf("%s: %s has %d decision entries", label, id, tl.decisions)
		case tl.outcomes > 1:
			t.Fatalf("%s: %s has %d executed/failed entries", label, id, tl.outcomes)
		case runs > 1:
			t.Fatalf("%s: %s reached the device %d times", label, id, runs)
		case r.LogFrom != nil:
			t.Fatalf("%s: %s left mid-transition (%s with log_from)", label, id, r.State)
		case r.State == approval.Approved || r.State == approval.Executing:
			t.Fatalf("%s: %s left %s after recovery", label, id, r.State)
		}
		want := map[approval.State]string{approval.Pending: "", approval.Denied: audit.EventDenied,
			approval.Expired: audit.EventExpired, approval.Tampered: "tampered",
			approval.Done: audit.EventApproved}[r.State]
		if r.State == approval.Failed {
			want = tl.decision // failed after an approval (interrupted) or at approval time
		}
		if tl.decision != want {
			t.Fatalf("%s: %s: record %s, log decision %q", label, id, r.State, tl.decision)
		}
		switch r.State {
		case approval.Done:
			if tl.outcome != audit.EventExecuted || runs != 1 {
				t.Fatalf("%s: %s done, log outcome %q, device runs %d", label, id, tl.outcome, runs)
			}
		case approval.Pending, approval.Denied, approval.Expired, approval.Tampered:
			if runs != 0 || tl.outcomes != 0 {
				t.Fatalf("%s: %s %s but the device saw it %d times / outcome %q", label, id, r.State, runs, tl.outcome)
			}
		case approval.Failed:
			if tl.decision == audit.EventApproved && tl.outcome != audit.EventFailed {
				t.Fatalf("%s: %s failed without a failed entry", label, id)
			}
		}
		if r.State.Final() {
			if _, err := os.Stat(filepath.Join(h.home, "results", id+".json")); err != nil {
				t.Fatalf("%s: %s is %s without a result", label, id, r.State)
			}
		}
	}
	return recs
}

// TestApprovalsCrashAtEveryDurableWrite kills a real `vigil` (SIGKILL via
// internal/crashpoint) after each durable write of submit, approve/execute,
// deny and expire, lets the next command recover, and checks the
// invariants; then it kills `vigil approve` at 200+ random moments.
func TestApprovalsCrashAtEveryDurableWrite(t *testing.T) {
	testbin.FullRunOnly(t, "kills vigil a few hundred times")
	bin := testbin.Vigil(t)

	t.Run("points", func(t *testing.T) {
		h := newCrashHome(t, bin)
		type step struct {
			op, point string
		}
		var steps []step
		for _, p := range []string{"submit.manifest", "submit.record", "submit.audit", "submit.done"} {
			steps = append(steps, step{"submit", p})
		}
		for _, p := range []string{"approve.record", "approve.audit", "execute.record", "result.ran", "result.stored",
			"execute.audit", "execute.done"} {
			steps = append(steps, step{"approve", p})
		}
		for _, p := range []string{"deny.record", "deny.result", "deny.audit", "deny.done"} {
			steps = append(steps, step{"deny", p})
		}
		for _, p := range []string{"tamper.record", "tamper.result", "tamper.audit", "tamper.done"} {
			steps = append(steps, step{"tamper", p})
		}
		expirePoints := []string{"expire.record", "expire.result", "expire.audit", "expire.done"}
		// tasks for every step, submitted up front; the expiring ones with a 1 s lease
		files := map[string]string{}
		for i, s := range steps {
			id := fmt.Sprintf("p%02d-%s", i, strings.ReplaceAll(s.point, ".", "-"))
			files[id] = h.manifest(id, "1h")
			if s.op != "submit" {
				h.must(0, "submit", files[id])
			}
		}
		kills := 0
		for i, s := range steps {
			id := fmt.Sprintf("p%02d-%s", i, strings.ReplaceAll(s.point, ".", "-"))
			var args []string
			switch s.op {
			case "submit":
				args = []string{"submit", files[id]}
			case "approve":
				args = []string{"approve", id, "--yes"}
			case "deny":
				args = []string{"deny", id, "--reason", "not now"}
			case "tamper":
				mp := filepath.Join(h.home, "tasks", id, "manifest.json")
				b, _ := os.ReadFile(mp)
				os.WriteFile(mp, []byte(strings.Replace(string(b), ".mkv", ".evil.mkv", 1)), 0o600)
				args = []string{"approve", id, "--yes"}
			}
			out, err := h.child(s.point, args...).CombinedOutput()
			if !killed(err) {
				t.Fatalf("%s: vigil %s was not killed at %s: %v\n%s", s.point, strings.Join(args, " "), s.point, err, out)
			}
			kills++
			// the next command recovers (opening the queue reconciles)
			h.must(0, "pending", "--json")
			recs := h.checkInvariants(s.point)
			// and the task can still be completed
			switch s.op {
			case "submit":
				h.must(0, "submit", files[id])
				h.must(0, "approve", id, "--yes")
				h.must(0, "result", id)
			case "approve":
				r := recs[id]
				if s.point == "approve.record" {
					// the approval never reached the log: undone, nothing ran; decided again
					if r.State != approval.Pending {
						t.Fatalf("%s: after recovery %s is %s, want pending (the log holds no approval)", s.point, id, r.State)
					}
					h.must(0, "approve", id, "--yes")
					r = h.checkInvariants(s.point + " approved again")[id]
				}
				if r.State != approval.Done && r.State != approval.Failed {
					t.Fatalf("%s: after recovery %s is %s", s.point, id, r.State)
				}
				h.must(1, "approve", id, "--yes") // already decided
				h.must(1, "deny", id, "--reason", "late")
				code := 0
				if r.State == approval.Failed {
					code = 1
				}
				h.must(code, "result", id)
			case "deny":
				if recs[id].State != approval.Denied {
					t.Fatalf("%s: after recovery %s is %s", s.point, id, recs[id].State)
				}
				h.must(1, "approve", id, "--yes")
				h.must(1, "result", id)
			case "tamper":
				if recs[id].State != approval.Tampered {
					t.Fatalf("%s: after recovery %s is %s", s.point, id, recs[id].State)
				}
				h.must(1, "approve", id, "--yes")
				h.must(1, "result", id)
			}
			h.checkInvariants(s.point + " completed")
		}
		var expiring []string
		for i, p := range expirePoints {
			id := fmt.Sprintf("x%02d-%s", i, strings.ReplaceAll(p, ".", "-"))
			expiring = append(expiring, id)
			h.dropAll([]string{id}, 2*time.Second) // submitted well before its lease runs out
			h.pastDeadline(id)
			out, err := h.child(p, "pending").CombinedOutput()
			if !killed(err) {
				t.Fatalf("%s: vigil pending was not killed: %v\n%s", p, err, out)
			}
			kills++
			h.must(0, "pending", "--json")
			recs := h.checkInvariants(p)
			if r := recs[expiring[i]]; r.State != approval.Expired || r.Error == nil || r.Error.Code != "LEASE_EXPIRED" {
				t.Fatalf("%s: %+v", p, r)
			}
			h.must(1, "approve", expiring[i], "--yes")
			h.must(1, "result", expiring[i])
		}
		h.must(0, "audit", "verify")
		t.Logf("crash points: %d kills, one after each durable write, all recovered", kills)
	})

	t.Run("random", func(t *testing.T) {
		h := newCrashHome(t, bin)
		seed := uint64(time.Now().UnixNano())
		if s := os.Getenv("VIGIL_CRASH_SEED"); s != "" {
			fmt.Sscan(s, &seed)
		}
		t.Logf("seed %d (VIGIL_CRASH_SEED=%d reproduces the delays)", seed, seed)
		rng := rand.New(rand.NewPCG(seed, 20))
		const want = 200
		// few enough that opening the queue (which reads every record) does not
		// dwarf the decision; kills before the decision leave the task pending
		// for the next attempt
		ids := make([]string, 0, 180)
		for i := 0; i < 180; i++ {
			ids = append(ids, fmt.Sprintf("r%03d", i))
		}
		h.dropAll(ids, time.Hour)
		// how long a whole approve takes, so the kills spread over its life;
		// the estimate follows the approvals that finish before their kill
		start := time.Now()
		span := time.Duration(0)
		for _, id := range ids[:3] {
			t0 := time.Now()
			if out, err := h.child("", "approve", id, "--yes").CombinedOutput(); err != nil {
				t.Fatalf("approve: %v\n%s", err, out)
			}
			if d := time.Since(t0); span == 0 || d < span {
				span = d
			}
		}
		first := span
		kills, finished, next := 0, 0, 3
		for attempt := 0; kills < want && attempt < 3*want; attempt++ {
			// the first task still pending
			for next < len(ids) && stateOf(h.home, ids[next]) != approval.Pending {
				next++
			}
			if next == len(ids) {
				break
			}
			c := h.child("", "approve", ids[next], "--yes")
			t0 := time.Now()
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			delay := span/2 + time.Duration(rng.Int64N(int64(span)*6/10))
			select {
			case <-time.After(delay):
				syscall.Kill(c.Process.Pid, syscall.SIGKILL)
				if killed(<-done) {
					kills++
				} else {
					finished++
				}
			case <-done:
				finished++
				span = (span + time.Since(t0)) / 2
			}
		}
		span = first
		t.Logf("kills done after %s", time.Since(start).Round(time.Millisecond))
		h.must(0, "pending", "--json") // recovery
		recs := h.checkInvariants("random")
		counts := map[approval.State]int{}
		for _, r := range recs {
			counts[r.State]++
		}
		t.Logf("random: %d kills, %d approvals finished first; one approve takes %s; states after recovery: %v",
			kills, finished, span.Round(time.Millisecond), counts)
		if kills < want {
			t.Fatalf("only %d kills", kills)
		}
		// the tasks can still be completed (a sample of those left pending)
		left := 0
		for _, id := range ids {
			if recs[id].State == approval.Pending && left < 10 {
				left++
				if out, err := h.child("", "approve", id, "--yes").CombinedOutput(); err != nil {
					t.Fatalf("approve %s after the kills: %v\n%s", id, err, out)
				}
			}
		}
		h.checkInvariants("random completed")
		h.must(0, "audit", "verify")
	})
}

func stateOf(home, id string) approval.State {
	b, err := os.ReadFile(filepath.Join(home, "tasks", id, "record.json"))
	if err != nil {
		return ""
	}
	var r approval.Record
	if json.Unmarshal(b, &r) != nil {
		return ""
	}
	return r.State
}
