package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// manifestURI writes a MEDIA_PLAY manifest for id playing uri and returns
// its path.
func (h *crashHome) manifestURI(id, uri string) string {
	h.t.Helper()
	tok := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:crash", "--task-id", id, "--cap", "MEDIA_PLAY", "--ttl", "1h"))
	b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": uri, "target_device": "living-room"}})
	p := filepath.Join(h.home, id+".json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// state is a task's state as `vigil pending`'s queue records it.
func (h *crashHome) state(id string) approval.State {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.home, "tasks", id, "record.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	var r approval.Record
	if err := json.Unmarshal(b, &r); err != nil {
		h.t.Fatal(err)
	}
	return r.State
}

// batchOutcomes parses approve's JSON array by task.
func batchOutcomes(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("approve's stdout is not a JSON array: %v\n%s", err, out)
	}
	got := map[string]map[string]any{}
	for _, o := range list {
		got[o["task_id"].(string)] = o
	}
	return got
}

// syncBuf collects what the person's side of a pseudo-terminal reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// readAll copies the master's bytes into a buffer until it closes.
func readAll(master *os.File) *syncBuf {
	sb := &syncBuf{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			sb.mu.Lock()
			sb.b.Write(buf[:n])
			sb.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return sb
}

// On a terminal, several ids get one summary (a row each, the warned task
// excluded and why) and one y/N. Between the summary and y one task's
// stored request is edited and another is denied by another command: the
// clean task runs, the two are reported and the others proceed, the
// warned one stays pending; exit 1 names each task not approved.
func TestApproveManyOnATerminal(t *testing.T) {
	h := newCLIHome(t)
	for _, id := range []string{"m-one", "m-two", "m-three"} {
		h.must(0, "submit", h.manifest(id, "1h"))
	}
	h.must(0, "submit", h.manifestURI("m-warned", "http://2130706433/clip.mp4"))
	master, tty := openPTY(t)
	screen := readAll(master)
	type res struct {
		out  string
		code int
	}
	done := make(chan res, 1)
	go func() {
		out, _, code := runAs(t, h.home, func(a *App) { a.In, a.Err = tty, tty }, "approve", "m-one", "m-two", "m-warned", "m-three")
		done <- res{out, code}
	}()
	testwait.Until(t, 20*time.Second, "the summary's prompt", func() bool { return strings.Contains(screen.String(), "[y/N] ") })
	sum := screen.String()
	for _, want := range []string{"MEDIA HOST", "✓ m-one", "✓ m-two", "✓ m-three", "✗ m-warned", "2130706433",
		"⚠ media_uri host 2130706433 is the numeric address 127.0.0.1", "excluded: its preview has a warning",
		"Approve these 3 of 4 tasks"} {
		if !strings.Contains(sum, want) {
			t.Fatalf("the summary lacks %q:\n%s", want, sum)
		}
	}
	// meanwhile: m-two's stored request is edited, m-three is denied
	path := filepath.Join(h.home, "tasks", "m-two", "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte("/media/m-two.mkv"), []byte("/media/swapped.mkv")), 0o600); err != nil {
		t.Fatal(err)
	}
	h.must(0, "deny", "m-three", "--reason", "not now")
	if _, err := master.WriteString("y\n"); err != nil {
		t.Fatal(err)
	}
	var r res
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("approve never finished")
	}
	if r.code != ExitCheck {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.out, screen.String())
	}
	got := batchOutcomes(t, r.out)
	if len(got) != 4 || got["m-one"]["approved"] != true || got["m-one"]["state"] != "done" {
		t.Fatalf("outcomes: %s", r.out)
	}
	for id, want := range map[string]string{"m-two": "changed since the summary", "m-three": "decided meanwhile",
		"m-warned": "its preview has a warning"} {
		if o := got[id]; o["approved"] != false || !strings.Contains(o["why"].(string), want) {
			t.Errorf("%s: %v, want why %q", id, o, want)
		}
	}
	testwait.Until(t, 10*time.Second, "the outcome lines", func() bool { return strings.Contains(screen.String(), "vigil: m-warned not approved") })
	tail := screen.String()[len(sum):]
	for _, id := range []string{"m-two", "m-three", "m-warned"} {
		if !strings.Contains(tail, "vigil: "+id+" not approved: ") {
			t.Errorf("stderr does not name %s:\n%s", id, tail)
		}
	}
	if strings.Contains(tail, "m-one not approved") {
		t.Errorf("stderr names m-one:\n%s", tail)
	}
	for id, want := range map[string]approval.State{"m-one": approval.Done, "m-two": approval.Tampered,
		"m-three": approval.Denied, "m-warned": approval.Pending} {
		if st := h.state(id); st != want {
			t.Errorf("%s: %s, want %s", id, st, want)
		}
	}
}

// n (or anything but y) approves nothing; exit 1.
func TestApproveManyAnsweredNo(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("n-one", "1h"))
	h.must(0, "submit", h.manifest("n-two", "1h"))
	master, tty := openPTY(t)
	if _, err := master.WriteString("n\n"); err != nil {
		t.Fatal(err)
	}
	screen := readAll(master)
	out, _, code := runAs(t, h.home, func(a *App) { a.In, a.Err = tty, tty }, "approve", "n-one", "n-two")
	if code != ExitCheck || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	testwait.Until(t, 10*time.Second, "not approved", func() bool { return strings.Contains(screen.String(), "not approved") })
	if h.state("n-one") != approval.Pending || h.state("n-two") != approval.Pending {
		t.Fatal("a task was decided")
	}
}

// --yes approves without a summary; a task already decided is reported and
// the other runs (exit 1); all clean, exit 0 with --json accepted.
func TestApproveManyYes(t *testing.T) {
	h := newCLIHome(t)
	for _, id := range []string{"y-one", "y-two", "y-three", "y-four"} {
		h.must(0, "submit", h.manifest(id, "1h"))
	}
	h.must(0, "deny", "y-two", "--reason", "no")
	out, errs, code := runReal(t, h.home, "approve", "y-one", "y-two", "--yes")
	if code != ExitCheck || strings.Contains(errs, "TASK") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	got := batchOutcomes(t, out)
	if got["y-one"]["approved"] != true || got["y-two"]["approved"] != false || got["y-two"]["state"] != "denied" {
		t.Fatalf("outcomes: %s", out)
	}
	if !strings.Contains(errs, "vigil: y-two not approved: not pending (denied)") || strings.Contains(errs, "y-one") {
		t.Fatalf("stderr: %s", errs)
	}
	out, errs, code = runReal(t, h.home, "approve", "y-three", "y-four", "--yes", "--json")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	got = batchOutcomes(t, out)
	for _, id := range []string{"y-three", "y-four"} {
		if o := got[id]; o["approved"] != true || len(o["preview_hash"].(string)) != 64 || o["result"] == nil {
			t.Fatalf("%s: %v", id, o)
		}
	}
}

// What approve refuses with several ids, before deciding anything:
// --expect-preview (it names one preview), an id given twice, no terminal
// without --yes (exit 2); on a home whose decisions need an operator's
// key, the refusal comes before the summary (exit 1).
func TestApproveManyRefusals(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("r-one", "1h"))
	h.must(0, "submit", h.manifest("r-two", "1h"))
	for _, args := range [][]string{
		{"approve", "r-one", "r-two", "--yes", "--expect-preview", "abc"},
		{"approve", "r-one", "r-one", "--yes"},
		{"approve", "r-one", "r-two"},
	} {
		if out, errs, code := runReal(t, h.home, args...); code != ExitBadInput {
			t.Errorf("vigil %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
	}
	if h.state("r-one") != approval.Pending || h.state("r-two") != approval.Pending {
		t.Fatal("a refused batch decided")
	}

	g := operatorKeyHome(t)
	g.must(0, "submit", g.manifest("g-one", "1h"))
	g.must(0, "submit", g.manifest("g-two", "1h"))
	master, tty := openPTY(t)
	if _, err := master.WriteString("y\n"); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runAs(t, g.home, func(a *App) { a.In = tty }, "approve", "g-one", "g-two")
	if code != ExitCheck || !strings.Contains(errs, "operator over SSH") || strings.Contains(errs, "TASK") || out != "" {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if g.state("g-one") != approval.Pending {
		t.Fatal("decided on an operator-key home")
	}
}
