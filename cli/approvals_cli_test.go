package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
)

func newCLIHome(t *testing.T) *crashHome { return newCrashHome(t, "") }

func (h *crashHome) previewJSON(id string) map[string]any {
	h.t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(h.must(0, "preview", id, "--json")), &v); err != nil {
		h.t.Fatal(err)
	}
	return v
}

func (h *crashHome) journal() string {
	b, _ := os.ReadFile(filepath.Join(h.home, "devices", "living-room.journal"))
	return string(b)
}

// An approval names the preview seen: a hash that no longer matches is
// refused (exit 1, EXECUTION_FAILED, nothing runs); a manifest edited on
// disk after submission is tampered, never executed.
func TestApproveExpectPreview(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("bound", "1h"))
	h.must(0, "submit", h.manifest("edited", "1h"))
	v := h.previewJSON("bound")
	hash, _ := v["preview_hash"].(string)
	if len(hash) != 64 || v["deadline_kind"] != "approval" {
		t.Fatalf("preview json: %v", v)
	}
	if human := h.must(0, "preview", "bound"); !strings.Contains(human, "preview_hash: "+hash) ||
		!strings.Contains(human, "(approval expires in ") {
		t.Fatalf("human preview:\n%s", human)
	}
	out, _, code := runReal(t, h.home, "approve", "bound", "--yes", "--expect-preview", strings.Repeat("0", 64))
	var refused struct {
		State string `json:"state"`
		Error struct{ Code, Message string }
	}
	json.Unmarshal([]byte(out), &refused)
	if code != 1 || refused.Error.Code != "EXECUTION_FAILED" || !strings.Contains(refused.Error.Message, "changed") || refused.State != "pending" {
		t.Fatalf("stale hash: exit %d\n%s", code, out)
	}
	if h.journal() != "" {
		t.Fatal("a refused approval reached the device")
	}
	if out := h.must(0, "approve", "bound", "--yes", "--expect-preview", hash); !strings.Contains(out, `"SUCCESS"`) {
		t.Fatalf("approve: %s", out)
	}

	// edited on disk between preview and decision
	old := h.previewJSON("edited")["preview_hash"].(string)
	mp := filepath.Join(h.home, "tasks", "edited", "manifest.json")
	b, _ := os.ReadFile(mp)
	os.WriteFile(mp, []byte(strings.Replace(string(b), "edited.mkv", "evil.mkv", 1)), 0o600)
	if human := h.must(0, "preview", "edited"); !strings.Contains(human, "STORED REQUEST CHANGED") {
		t.Fatalf("preview of an edited task:\n%s", human)
	}
	out, errs, code := runReal(t, h.home, "approve", "edited", "--yes", "--expect-preview", old)
	if code != 1 || !strings.Contains(out, "tampered") || !strings.Contains(out, "EXECUTION_FAILED") || !strings.Contains(errs, "changed") {
		t.Fatalf("approve of an edited task: exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(h.journal(), "evil") {
		t.Fatal("the edited request ran")
	}
	if out, _, code := runReal(t, h.home, "result", "edited"); code != 1 || !strings.Contains(out, "tampered") {
		t.Fatalf("result: %d %s", code, out)
	}
	if list := h.must(0, "pending"); strings.Contains(list, "edited") {
		t.Fatalf("a tampered task is still pending:\n%s", list)
	}
	h.must(0, "audit", "verify")
	if ev := h.must(0, "audit", "show", "--task", "edited", "--json"); !strings.Contains(ev, `"tampered"`) {
		t.Fatalf("audit: %s", ev)
	}
}

// `pending` and `preview` show the real deadline: the lease's exp when it
// comes before the approval timeout, and say which.
func TestPendingShowsTheLeaseDeadline(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("short", "40s"))
	var list []map[string]any
	json.Unmarshal([]byte(h.must(0, "pending", "--json")), &list)
	if len(list) != 1 || list[0]["deadline_kind"] != "lease" || list[0]["expires_at"] != list[0]["lease_expires"] {
		t.Fatalf("pending --json: %v", list)
	}
	at, _ := time.Parse(time.RFC3339, list[0]["expires_at"].(string))
	if d := time.Until(at); d > 41*time.Second || d < 30*time.Second {
		t.Fatalf("expires_at %s is not the lease's exp", at)
	}
	if human := h.must(0, "pending"); !strings.Contains(human, "lease expires in 0:") {
		t.Fatalf("pending:\n%s", human)
	}
	if human := h.must(0, "preview", "short"); !strings.Contains(human, "(lease expires in 0:") {
		t.Fatalf("preview:\n%s", human)
	}
}

// One damaged record is one damaged task: shown as damaged with the reason,
// and every other command keeps working.
func TestDamagedRecordThroughTheCLI(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("good", "1h"))
	h.must(0, "submit", h.manifest("broken", "1h"))
	os.WriteFile(filepath.Join(h.home, "tasks", "broken", "record.json"), []byte("garbage\n"), 0o600)
	if list := h.must(0, "pending"); !strings.Contains(list, "broken") || !strings.Contains(list, "DAMAGED: record.json is not valid JSON") ||
		!strings.Contains(list, "good") {
		t.Fatalf("pending:\n%s", list)
	}
	var list []map[string]any
	json.Unmarshal([]byte(h.must(0, "pending", "--json")), &list)
	if len(list) != 2 {
		t.Fatalf("pending --json: %v", list)
	}
	if _, errs, code := runReal(t, h.home, "preview", "broken"); code != 1 || !strings.Contains(errs, "damaged") {
		t.Fatalf("preview of a damaged task: %d %s", code, errs)
	}
	if _, errs, code := runReal(t, h.home, "approve", "broken", "--yes"); code != 1 || !strings.Contains(errs, "damaged") {
		t.Fatalf("approve of a damaged task: %d %s", code, errs)
	}
	if _, _, code := runReal(t, h.home, "result", "broken"); code != 1 {
		t.Fatalf("result of a damaged task: exit %d", code)
	}
	h.must(0, "preview", "good")
	h.must(0, "submit", h.manifest("fresh", "1h"))
	h.must(0, "approve", "good", "--yes")
	h.must(0, "result", "good")
	h.must(2, "submit", h.manifest("broken", "1h")) // its id stays taken
}

// A task_id is one request: another capability under a pending task's id is
// rejected (exit 2, naming the conflict) and the task stays as it was.
func TestTaskIDReuseThroughTheCLI(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("once", "1h"))
	tok := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:crash", "--task-id", "once", "--cap", "MEDIA_STOP"))
	b, _ := json.Marshal(map[string]any{"task_id": "once", "capability_id": "MEDIA_STOP", "lease": tok,
		"inputs": map[string]any{"target_device": "living-room"}})
	mf := filepath.Join(h.home, "stop.json")
	os.WriteFile(mf, b, 0o600)
	if out := h.must(2, "submit", mf); !strings.Contains(out, "already names another request") || !strings.Contains(out, "MEDIA_PLAY") {
		t.Fatalf("reuse: %s", out)
	}
	if list := h.must(0, "pending"); !strings.Contains(list, "once") {
		t.Fatalf("the pending task left the list:\n%s", list)
	}
	if trail := h.must(0, "audit", "show", "--task", "once", "--json"); strings.Count(trail, `"event"`) != 1 || strings.Contains(trail, "rejected") {
		t.Fatalf("the task's trail changed: %s", trail)
	}
	// the same manifest again is the same request
	if out := h.must(0, "submit", filepath.Join(h.home, "once.json")); !strings.Contains(out, `"pending"`) {
		t.Fatalf("resubmit: %s", out)
	}
	h.must(0, "approve", "once", "--yes")
}

// Untrusted text in the preview is shown escaped, with the count of hidden
// characters.
func TestPreviewShowsHiddenCharacters(t *testing.T) {
	h := newCLIHome(t)
	tok := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:crash", "--task-id", "zw", "--cap", "MEDIA_PLAY"))
	b, _ := json.Marshal(map[string]any{"task_id": "zw", "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/a\u200bb\u200dc.mkv", "target_device": "living-room"}})
	mf := filepath.Join(h.home, "zw.json")
	os.WriteFile(mf, b, 0o600)
	out, _, code := runReal(t, h.home, "submit", mf)
	if code != 0 {
		t.Fatalf("a URI with zero-width characters must be accepted (and shown escaped): %s", out)
	}
	human := h.must(0, "preview", "zw")
	if strings.ContainsAny(human, "\u200b\u200d") || !strings.Contains(human, "hidden characters shown as") {
		t.Fatalf("preview:\n%q", human)
	}
}

// A denial's reason goes back to the agent and into the log: one holding a
// control or invisible character is refused (exit 2) and nothing is decided.
func TestDenyReasonMustBePlainText(t *testing.T) {
	h := newCLIHome(t)
	h.must(0, "submit", h.manifest("why", "1h"))
	_, errs, code := runReal(t, h.home, "deny", "why", "--reason", "no\u2067x")
	if code != 2 || !strings.Contains(errs, "--reason") || strings.Contains(errs, "\u2067") {
		t.Fatalf("deny with a bidi control: exit %d %q", code, errs)
	}
	if list := h.must(0, "pending"); !strings.Contains(list, "why") {
		t.Fatalf("the task was decided:\n%s", list)
	}
	h.must(0, "deny", "why", "--reason", "not now")
	if _, errs, code := runReal(t, h.home, "result", "why"); code != 1 || !strings.Contains(errs, "denied — decided by operator:") || !strings.Contains(errs, "via cli") {
		t.Fatalf("result: exit %d %s", code, errs)
	}
}

// TestPendingTableKeepsEachValueInItsColumn: an agent name holding spaces
// and a long device name are cut to their columns, so no value paints a
// column or a row of its own; the task id, the handle `approve` takes,
// stays whole.
func TestPendingTableKeepsEachValueInItsColumn(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	forged := "agent:x                 MEDIA_STOP   kitchen        0s       approval expires in 9:59"
	var b bytes.Buffer
	app := &App{Out: &b, Now: func() time.Time { return now }}
	printPendingTable(app, []approval.Record{{TaskID: "t-forge", Agent: forged, CapabilityID: "MEDIA_PLAY",
		Device: "living-room-with-a-very-long-name", State: approval.Pending, SubmittedAt: now.Add(-time.Minute),
		ExpiresAt: now.Add(5 * time.Minute)}})
	rows := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(rows) != 2 {
		t.Fatalf("%d lines:\n%s", len(rows), b.String())
	}
	head, row := rows[0], rows[1]
	if strings.Contains(row, "MEDIA_STOP") || strings.Contains(row, "kitchen") {
		t.Fatalf("the agent name painted columns of its own:\n%s", b.String())
	}
	// the header is ASCII: its byte index is the column; the row may hold
	// an ellipsis, so it is read by runes (one cell each here)
	c, cells := strings.Index(head, "CAPABILITY"), []rune(row)
	if len(cells) < c+10 || cells[c-1] != ' ' || string(cells[c:c+10]) != "MEDIA_PLAY" {
		t.Fatalf("CAPABILITY is not under its heading:\n%s", b.String())
	}
	if !strings.HasPrefix(row, "t-forge ") {
		t.Fatalf("the task id is not whole:\n%s", row)
	}
}
