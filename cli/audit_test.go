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
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
)

// syncBuffer lets the test read what `audit tail` has printed while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func auditClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// runAudit runs the CLI through NewRootCmd against home with buffered streams.
func runAudit(t *testing.T, ctx context.Context, home string, out, errb interface{ Write([]byte) (int, error) }, args ...string) int {
	t.Helper()
	app := NewApp()
	app.Out, app.Err, app.Now = out, errb, auditClock()
	app.In = strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd = home
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(ctx)
	if err != nil {
		var ee *ExitError
		if !(errors.As(err, &ee) && ee.Quiet) {
			fmt.Fprintln(errb, "vigil: "+err.Error())
		}
	}
	return ExitCode(err)
}

func run(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runAudit(t, context.Background(), home, &out, &errb, args...)
	return out.String(), errb.String(), code
}

// auditHome makes a home with n entries written through audit.Append.
func auditHome(t *testing.T, n int) (string, *audit.Log) {
	t.Helper()
	home := t.TempDir()
	l, err := audit.Open(filepath.Join(home, "audit.log"), auditClock())
	if err != nil {
		t.Fatal(err)
	}
	events := []string{audit.EventSubmitted, audit.EventApproved, audit.EventExecuted}
	for i := 0; i < n; i++ {
		e := audit.Entry{Actor: "agent-1", Event: events[i%3], TaskID: fmt.Sprintf("t-%d", i/3),
			Capability: "MEDIA_PAUSE", Target: "tv", Success: i%3 != 1 || i != 4}
		if !e.Success {
			e.ErrorCode = "APPROVAL_DENIED"
		}
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return home, l
}

func TestAuditShowTable(t *testing.T) {
	home, _ := auditHome(t, 9)
	out, errs, code := run(t, home, "audit", "show")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 10 || !strings.HasPrefix(lines[0], "SEQ") || !strings.Contains(lines[0], "OUTCOME") {
		t.Fatalf("table:\n%s", out)
	}
	want := []string{"4", "2026-03-14T15:09:31Z", "agent-1", "approved", "t-1", "tv", "approval_denied"}
	if got := strings.Fields(lines[5]); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("row 4 = %q, want %q", got, want)
	}
	out, _, _ = run(t, home, "audit", "show", "--limit", "2")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], "8 ") {
		t.Fatalf("--limit 2:\n%s", out)
	}
}

func TestAuditShowJSONAndFilters(t *testing.T) {
	home, _ := auditHome(t, 9)
	raw, _ := os.ReadFile(filepath.Join(home, "audit.log"))
	out, errs, code := run(t, home, "audit", "show", "--json")
	if code != 0 || out != string(raw) {
		t.Fatalf("--json must print the stored lines: exit %d %s\n%s", code, errs, out)
	}
	out, _, code = run(t, home, "audit", "show", "--json", "--task", "t-1")
	var seqs []int64
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.TaskID != "t-1" {
			t.Fatalf("--task line %q: %v", l, err)
		}
		seqs = append(seqs, e.Seq)
	}
	if code != 0 || fmt.Sprint(seqs) != "[3 4 5]" {
		t.Fatalf("--task t-1: %v", seqs)
	}
	out, _, _ = run(t, home, "audit", "show", "--json", "--event", "executed", "--limit", "2")
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, `"seq":5,`) || !strings.Contains(out, `"seq":8,`) {
		t.Fatalf("--event executed --limit 2:\n%s", out)
	}
	if _, errs, code := run(t, home, "audit", "show", "--limit", "-1"); code != ExitBadInput || !strings.Contains(errs, "--limit") {
		t.Fatalf("--limit -1: exit %d %s", code, errs)
	}
	// an empty home: a header and nothing else, exit 0
	out, _, code = run(t, t.TempDir(), "audit", "show")
	if code != 0 || out != newAuditTable(nil, 0).header()+"\n" {
		t.Fatalf("empty home: %d %q", code, out)
	}
}

func TestAuditVerify(t *testing.T) {
	home, _ := auditHome(t, 9)
	out, errs, code := run(t, home, "audit", "verify")
	if code != 0 || out != "chain verified · 9 entries\n" {
		t.Fatalf("clean: exit %d %q %s", code, out, errs)
	}
	out, _, code = run(t, home, "audit", "verify", "--json")
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"ok":true,"entries":9}` {
		t.Fatalf("clean --json: %d %s", code, out)
	}

	// edit entry 3's target: reported at #3, exit 1, nothing on stderr
	path := filepath.Join(home, "audit.log")
	raw, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines[3] = bytes.Replace(lines[3], []byte(`"target":"tv"`), []byte(`"target":"TV"`), 1)
	os.WriteFile(path, bytes.Join(lines, nil), 0o600)
	out, errs, code = run(t, home, "audit", "verify")
	if code != ExitCheck || out != "BROKEN at #3: edited (hash mismatch)\n" || errs != "" {
		t.Fatalf("edited: exit %d out %q err %q", code, out, errs)
	}
	out, _, code = run(t, home, "audit", "verify", "--json")
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitCheck ||
		rep["ok"] != false || rep["index"] != 3.0 || rep["reason"] != "edited" {
		t.Fatalf("edited --json: %d %s %v", code, out, err)
	}

	// deleting the first line: index 0 must still appear in JSON
	os.WriteFile(path, bytes.Join(lines[1:], nil), 0o600)
	out, _, code = run(t, home, "audit", "verify", "--json")
	if code != ExitCheck || !strings.Contains(out, `"index": 0`) || !strings.Contains(out, `"reason": "deleted"`) {
		t.Fatalf("deleted #0: %d %s", code, out)
	}
}

// TestAuditTailFollows: tail prints the backlog, then entries appended by
// another writer as they arrive (real fsnotify), until its context ends.
func TestAuditTailFollows(t *testing.T) {
	home, l := auditHome(t, 5)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- runAudit(t, ctx, home, &out, &errb, "audit", "tail", "--json", "-n", "2") }()

	waitFor := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !cond(out.String()) {
			select {
			case <-deadline:
				t.Fatalf("waiting for %s; got:\n%s\nstderr: %s", what, out.String(), errb.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitFor("the backlog", func(s string) bool { return strings.Count(s, "\n") == 2 })
	if s := out.String(); !strings.Contains(s, `"seq":3,`) || !strings.Contains(s, `"seq":4,`) {
		t.Fatalf("backlog:\n%s", s)
	}
	for i := 0; i < 3; i++ {
		if _, err := l.Append(audit.Entry{Actor: "agent-2", Event: audit.EventSearched, TaskID: fmt.Sprintf("live-%d", i), Success: true}); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`"task_id":"live-%d"`, i)
		waitFor(want, func(s string) bool { return strings.Contains(s, want) })
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("tail exit %d: %s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("tail did not stop when its context ended")
	}
	// each line printed once, in order
	var seqs []int64
	for _, ln := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e audit.Entry
		if err := json.Unmarshal([]byte(ln), &e); err != nil {
			t.Fatalf("%q: %v", ln, err)
		}
		seqs = append(seqs, e.Seq)
	}
	if fmt.Sprint(seqs) != "[3 4 5 6 7]" {
		t.Fatalf("tail printed seqs %v", seqs)
	}
}

// TestAuditTailHalfLine: a line still being written is not printed until its
// newline arrives, and then exactly once.
func TestAuditTailHalfLine(t *testing.T) {
	home, _ := auditHome(t, 2)
	path := filepath.Join(home, "audit.log")
	raw, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	os.WriteFile(path, lines[0], 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- runAudit(t, ctx, home, &out, &errb, "audit", "tail") }()
	waitOut := func(n int) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for strings.Count(out.String(), "\n") < n {
			select {
			case <-deadline:
				t.Fatalf("waiting for %d lines; got:\n%s\nstderr: %s", n, out.String(), errb.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitOut(1)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	half := len(lines[1]) / 2
	f.Write(lines[1][:half])
	f.Sync()
	// give tail a chance to see the half line (not an assertion: the check
	// below holds whether or not it looked in between)
	time.Sleep(50 * time.Millisecond)
	if strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("a half-written line was printed:\n%s", out.String())
	}
	f.Write(lines[1][half:])
	f.Close()
	waitOut(2)
	cancel()
	<-done
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "0 ") || !strings.HasPrefix(got[1], "1 ") || errb.String() != "" {
		t.Fatalf("tail output %q stderr %q", got, errb.String())
	}
}

// TestAuditVerifyLogFlag: --log verifies a copy of a log (one audit-pull
// wrote, or the TUI's copy of an executor's log) instead of the home's.
func TestAuditVerifyLogFlag(t *testing.T) {
	home, _ := auditHome(t, 9)
	copyDir := t.TempDir()
	for _, name := range []string{"audit.log", filepath.Base(audit.HeadPath(filepath.Join(home, "audit.log")))} {
		b, err := os.ReadFile(filepath.Join(home, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyLog := filepath.Join(copyDir, "audit.log")
	// the home's own log broken: the copy is what is read
	os.WriteFile(filepath.Join(home, "audit.log"), []byte("garbage\n"), 0o600)
	out, errs, code := run(t, home, "audit", "verify", "--log", copyLog)
	if code != 0 || out != "chain verified · 9 entries\n" {
		t.Fatalf("the copy: exit %d %q %s", code, out, errs)
	}
	raw, _ := os.ReadFile(copyLog)
	os.WriteFile(copyLog, bytes.Replace(raw, []byte(`"target":"tv"`), []byte(`"target":"TV"`), 1), 0o600)
	out, _, code = run(t, home, "audit", "verify", "--log", copyLog)
	if code != ExitCheck || out != "BROKEN at #0: edited (hash mismatch)\n" {
		t.Fatalf("the edited copy: exit %d %q", code, out)
	}
	_, errs, code = run(t, home, "audit", "verify", "--log", filepath.Join(copyDir, "missing.log"))
	if code != ExitBadInput || !strings.Contains(errs, "--log:") || !strings.Contains(errs, "missing.log") {
		t.Fatalf("a missing copy: exit %d %q", code, errs)
	}
}
