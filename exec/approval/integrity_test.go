package approval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

func (h *harness) taskFile(id, name string) string { return filepath.Join(h.TasksDir(), id, name) }

// editJSON rewrites a JSON file on disk through fn, as a person or program
// with access to the home could.
func (h *harness) editJSON(path string, fn func(map[string]any)) {
	h.T.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		h.T.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		h.T.Fatal(err)
	}
	fn(m)
	b, _ = json.Marshal(m)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		h.T.Fatal(err)
	}
}

// entriesFor lists the audit entries of one task.
func (h *harness) entriesFor(id string) []audit.Entry {
	var out []audit.Entry
	audit.Scan(h.AuditPath(), 0, func(l audit.Line) bool {
		if l.Err == nil && l.Entry.TaskID == id {
			out = append(out, l.Entry)
		}
		return true
	})
	return out
}

func eventsOf(es []audit.Entry) string {
	var s []string
	for _, e := range es {
		s = append(s, e.Event)
	}
	return strings.Join(s, ",")
}

// A stored request edited after submission never runs: the decision finds
// the change, the task becomes tampered with a signed failure naming both
// hashes, and the log says so.
func TestEditsOnDiskBeforeTheDecisionAreTampering(t *testing.T) {
	edits := map[string]func(h *harness, id string){
		"manifest media_uri": func(h *harness, id string) {
			h.editJSON(h.taskFile(id, "manifest.json"), func(m map[string]any) {
				m["inputs"].(map[string]any)["media_uri"] = "/media/other.mkv"
			})
		},
		"manifest and the record's hashes": func(h *harness, id string) {
			h.editJSON(h.taskFile(id, "manifest.json"), func(m map[string]any) {
				m["inputs"].(map[string]any)["media_uri"] = "/media/other.mkv"
			})
			b, _ := os.ReadFile(h.taskFile(id, "manifest.json"))
			mf, _ := task.ParseManifest(b)
			rh, _ := mf.RequestHash()
			h.editJSON(h.taskFile(id, "record.json"), func(m map[string]any) {
				m["manifest_hash"], m["request_hash"] = sha(b), rh
				delete(m, "plan_hash")
			})
		},
		"record plan_hash": func(h *harness, id string) {
			h.editJSON(h.taskFile(id, "record.json"), func(m map[string]any) { m["plan_hash"] = strings.Repeat("0", 64) })
		},
		"record submitted place": func(h *harness, id string) {
			h.editJSON(h.taskFile(id, "record.json"), func(m map[string]any) { m["submitted_offset"] = 0; m["submitted_seq"] = 0 })
		},
		"manifest deleted": func(h *harness, id string) { os.Remove(h.taskFile(id, "manifest.json")) },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.submit(h.play("other-task")) // so seq 0 is another task's entry
			h.submit(h.play("edited"))
			v, err := h.q.Preview(context.Background(), "edited")
			if err != nil {
				t.Fatal(err)
			}
			edit(h, "edited")
			if list, _ := h.q.Pending(); len(list) != 2 {
				t.Fatalf("pending after the edit: %+v", list)
			}
			rec, res, err := h.q.Decide(context.Background(), "edited", Decision{Approve: true, By: "operator:ada", Via: "cli", PreviewHash: v.BindingHash})
			if !errors.Is(err, ErrTampered) {
				t.Fatalf("decision on an edited task: %v", err)
			}
			if rec.State != Tampered || res == nil || res.Status != task.StatusFailure || res.Error.Code != task.ExecutionFailed ||
				!strings.Contains(res.Error.Message, "tampered") {
				t.Fatalf("record %+v result %+v", rec, res)
			}
			if st := h.simState(); st.State != "idle" {
				t.Fatalf("a tampered task reached the device: %+v", st)
			}
			es := h.entriesFor("edited")
			if got := eventsOf(es); got != "submitted,tampered" {
				t.Fatalf("audit %s", got)
			}
			var d map[string]any
			json.Unmarshal(es[1].Details, &d)
			if d["found_hash"] == d["recorded_hash"] {
				t.Fatalf("tampered entry does not name two hashes: %s", es[1].Details)
			}
			if _, _, err := h.q.Decide(context.Background(), "edited", Decision{By: "operator:bob", Reason: "x"}); !isDecided(err, Tampered) {
				t.Fatalf("a decision after tampering: %v", err)
			}
			// the other task is untouched and still runs
			if _, res, err := h.q.Decide(context.Background(), "other-task", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
				t.Fatalf("other task: %v %+v", err, res)
			}
			h.events() // the chain verifies
		})
	}
}

func sha(b []byte) string {
	return ShaHexForTest(b)
}

// An approval names the preview seen: a stale hash changes nothing; an
// empty one approves the stored request (--yes).
func TestApprovalNamesThePreview(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("named"))
	v, _ := h.q.Preview(context.Background(), "named")
	if len(v.BindingHash) != 64 {
		t.Fatalf("preview hash %q", v.BindingHash)
	}
	_, _, err := h.q.Decide(context.Background(), "named", Decision{Approve: true, By: "operator:ada", PreviewHash: strings.Repeat("a", 64)})
	if !errors.Is(err, ErrPreviewChanged) || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("stale hash: %v", err)
	}
	if got := eventsOf(h.entriesFor("named")); got != "submitted" {
		t.Fatalf("a refused approval was logged: %s", got)
	}
	rec, res, err := h.q.Decide(context.Background(), "named", Decision{Approve: true, By: "operator:ada", Via: "tui"})
	if err != nil || rec.State != Done || rec.DecidedVia != "tui" || rec.PreviewHash != v.BindingHash || res.Status != task.StatusSuccess {
		t.Fatalf("approve: %v %+v", err, rec)
	}
	dec, _ := h.q.Decided(10)
	if len(dec) != 1 || dec[0].TaskID != "named" || dec[0].FinishedAt == nil {
		t.Fatalf("decided: %+v", dec)
	}
}

// A task_id is one request: every other manifest with that id is rejected,
// in both orders, and the existing task, its state and trail stay as they were.
func TestATaskIDIsOneRequest(t *testing.T) {
	env := scopeEnv(t)
	h := &harness{Env: env, q: env.Queue}
	search := func(id string) []byte {
		return h.manifest(id, "SEARCH_EMAILS", searchInputs("budget", "archive", 10), time.Hour)
	}
	others := map[string]func(id string) []byte{
		"search": search,
		"other capability": func(id string) []byte {
			return h.manifest(id, "MEDIA_STOP", map[string]any{"target_device": "living-room"}, time.Hour)
		},
		"other inputs": func(id string) []byte { return h.Play(id, "/media/other.mkv") },
		"other subject": func(id string) []byte {
			tok, _ := lease.Issue(h.Issuer, lease.IssueOptions{Subject: "agent:intruder", TaskID: id, Caps: []string{"MEDIA_PLAY"},
				TTL: time.Hour, Now: h.Clock.Now, JTI: "jti-x-" + id})
			b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
				"inputs": map[string]any{"media_uri": "/media/movie.mkv", "target_device": "living-room"}})
			return b
		},
	}
	for name, other := range others {
		id := "reuse-" + strings.ReplaceAll(name, " ", "-")
		h.submit(h.play(id))
		before := eventsOf(h.entriesFor(id))
		out := h.submit(other(id))
		if out.State != "rejected" || out.Error == nil || !strings.Contains(out.Error.Message, "task_id") ||
			!strings.Contains(out.Error.Message, "already names another request") {
			t.Fatalf("%s after media: %+v", name, out)
		}
		if r, err := h.q.Get(id); err != nil || r.State != Pending {
			t.Fatalf("%s: the pending task changed: %+v %v", name, r, err)
		}
		if list, _ := h.q.Pending(); !hasTask(list, id) {
			t.Fatalf("%s: the pending task left the list", name)
		}
		if _, err := h.q.Result(id); !errors.Is(err, task.ErrNotFound) {
			t.Fatalf("%s: a result appeared for the pending task: %v", name, err)
		}
		if after := eventsOf(h.entriesFor(id)); after != before {
			t.Fatalf("%s: the task's trail changed: %s → %s", name, before, after)
		}
		// still decidable, and runs what was submitted
		if _, res, err := h.q.Decide(context.Background(), id, Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	// the other order: a search first, then media under its id
	first := h.submit(search("s-first"))
	if first.State != "done" {
		t.Fatalf("search: %+v", first)
	}
	if out := h.submit(h.play("s-first")); out.State != "rejected" || !strings.Contains(out.Error.Message, "SEARCH_EMAILS") {
		t.Fatalf("media after search: %+v", out)
	}
	if out := h.submit(h.manifest("s-first", "SEARCH_EMAILS", searchInputs("other", "archive", 10), time.Hour)); out.State != "rejected" {
		t.Fatalf("other search after search: %+v", out)
	}
	if again := h.submit(search("s-first")); again.State != "done" || again.Result.Signature.Value != first.Result.Signature.Value {
		t.Fatalf("the same search again: %+v", again)
	}
	// the same request under a re-issued lease (new jti) gets the stored answer
	h.submit(h.play("reissued"))
	tok, _ := lease.Issue(h.Issuer, lease.IssueOptions{Subject: "agent:planner", TaskID: "reissued", Caps: []string{"MEDIA_PLAY"},
		TTL: time.Hour, Now: h.Clock.Now, JTI: "jti-new"})
	b, _ := json.Marshal(map[string]any{"task_id": "reissued", "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/movie.mkv", "target_device": "living-room"}})
	if out := h.submit(b); out.State != "pending" {
		t.Fatalf("re-issued lease: %+v", out)
	}
	if r, _ := h.q.Get("reissued"); r.TokenJTI != "jti-reissued" {
		t.Fatalf("the record took the new lease: %+v", r)
	}
	h.events()
}

func hasTask(list []Record, id string) bool {
	for _, r := range list {
		if r.TaskID == id {
			return true
		}
	}
	return false
}

// The deadline is the earlier of the approval timeout and the lease's exp;
// a task whose lease runs out while pending expires with LEASE_EXPIRED.
func TestLeaseExpiryIsTheDeadline(t *testing.T) {
	h := newHarness(t)
	h.submit(h.manifest("short-lease", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, 40*time.Second))
	h.submit(h.manifest("long-lease", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, time.Hour))
	s, _ := h.q.Get("short-lease")
	if at, kind := s.Deadline(); kind != DeadlineLease || !at.Equal(h.Clock.Now().Add(40*time.Second)) {
		t.Fatalf("short lease deadline %s %s", at, kind)
	}
	l, _ := h.q.Get("long-lease")
	if at, kind := l.Deadline(); kind != DeadlineApproval || !at.Equal(l.ExpiresAt) {
		t.Fatalf("long lease deadline %s %s", at, kind)
	}
	h.Clock.Advance(time.Minute)
	list, _ := h.q.Pending()
	if hasTask(list, "short-lease") || !hasTask(list, "long-lease") {
		t.Fatalf("pending after the lease expired: %+v", list)
	}
	r, _ := h.q.Get("short-lease")
	res, _ := h.q.Result("short-lease")
	if r.State != Expired || r.Error.Code != task.LeaseExpired || res.Error.Code != task.LeaseExpired {
		t.Fatalf("expired by lease: %+v %+v", r, res)
	}
	if got := eventsOf(h.entriesFor("short-lease")); got != "submitted,expired" {
		t.Fatalf("audit %s", got)
	}
	if _, _, err := h.q.Decide(context.Background(), "short-lease", Decision{Approve: true, By: "operator:ada"}); !isDecided(err, Expired) {
		t.Fatalf("approve after lease expiry: %v", err)
	}
}

// One damaged record is one damaged task: it is listed as damaged with the
// reason, cannot be decided, and everything else keeps working.
func TestADamagedRecordDamagesOnlyItsTask(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("good"))
	h.submit(h.play("broken"))
	os.WriteFile(h.taskFile("broken", "record.json"), []byte("garbage\n"), 0o600)
	q := h.Open() // opening does not fail
	list, err := q.Pending()
	if err != nil || len(list) != 2 {
		t.Fatalf("pending: %+v %v", list, err)
	}
	var bad Record
	for _, r := range list {
		if r.TaskID == "broken" {
			bad = r
		}
	}
	if bad.State != Damaged || !strings.Contains(bad.Damage, "not valid JSON") {
		t.Fatalf("damaged entry: %+v", bad)
	}
	if _, err := q.Preview(context.Background(), "broken"); !errors.Is(err, ErrDamaged) {
		t.Fatalf("preview of a damaged task: %v", err)
	}
	if _, _, err := q.Decide(context.Background(), "broken", Decision{Approve: true, By: "operator:ada"}); !errors.Is(err, ErrDamaged) {
		t.Fatalf("approve of a damaged task: %v", err)
	}
	if out := h.submit(h.play("broken")); out.State != "rejected" {
		t.Fatalf("resubmission over a damaged task: %+v", out)
	}
	if _, err := q.Preview(context.Background(), "good"); err != nil {
		t.Fatal(err)
	}
	if out := h.submit(h.play("new")); out.State != "pending" {
		t.Fatalf("new submit: %+v", out)
	}
	if _, res, err := q.Decide(context.Background(), "good", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatalf("approve good: %v %+v", err, res)
	}
	if st := h.simState(); st.State != "playing" {
		t.Fatalf("device: %+v", st)
	}
}

// A target_device with invisible characters is refused at submit, naming
// the field and the rule without echoing it.
func TestSubmitRefusesInvisibleCharactersInTheDevice(t *testing.T) {
	h := newHarness(t)
	out := h.submit(h.manifest("dev", "MEDIA_PAUSE", map[string]any{"target_device": "living\u202e-room"}, time.Hour))
	if out.State != "rejected" || out.Error.Code != task.ExecutionFailed || !strings.Contains(out.Error.Message, "inputs.target_device") ||
		!strings.Contains(out.Error.Message, "format") || strings.Contains(out.Error.Message, "\u202e") {
		t.Fatalf("%+v", out)
	}
}

// A denial's reason with a control or invisible character is refused and
// decides nothing; a look-alike media host is flagged in the view.
func TestDenyReasonAndURIWarnings(t *testing.T) {
	h := newHarness(t)
	h.submit(h.Play("lookalike", "https://p\u0430ypal.com/song.mp3"))
	_, _, err := h.q.Decide(context.Background(), "lookalike", Decision{By: "operator:ada", Reason: "no\x1b[2J"})
	if !errors.Is(err, ErrBadReason) {
		t.Fatalf("reason with ESC: %v", err)
	}
	if r, _ := h.q.Get("lookalike"); r.State != Pending {
		t.Fatalf("state %s", r.State)
	}
	v, err := h.q.Preview(context.Background(), "lookalike")
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(v.Warnings, "; "); !strings.Contains(w, "look-alike") || !strings.Contains(w, "xn--") {
		t.Fatalf("warnings: %q", w)
	}
}

// A record rolled back to pending after its decision (its result deleted
// too) is caught by the audit log: the task is tampered, nothing runs again.
func TestARolledBackRecordIsCaughtByTheLog(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("rolled"))
	if _, res, err := h.q.Decide(context.Background(), "rolled", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatalf("approve: %v", err)
	}
	h.editJSON(h.taskFile("rolled", "record.json"), func(m map[string]any) {
		m["state"] = "pending"
		delete(m, "decided_at")
		delete(m, "decided_by")
	})
	os.Remove(filepath.Join(h.Dir, "results", "rolled.json"))
	_, _, err := h.q.Decide(context.Background(), "rolled", Decision{Approve: true, By: "operator:mallory"})
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "audit log holds") {
		t.Fatalf("approve of a rolled-back record: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(h.SimDir(), "living-room.journal"))
	if n := strings.Count(string(b), "movie.mkv"); n != 1 {
		t.Fatalf("the device ran it %d times", n)
	}
}

// A finished record's decided_by is held to the audit log: a record edited
// to name someone else shows the log's actor and says what it claimed, in a
// lookup and in the answer to a late decision.
func TestDecidedByIsCheckedAgainstTheLog(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("blame"))
	if _, _, err := h.q.Decide(context.Background(), "blame", Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(h.TasksDir(), "blame", "record.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"operator:bob"`), []byte(`"operator:alice"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := h.q.Get("blame")
	if err != nil {
		t.Fatal(err)
	}
	if r.DecidedBy != "operator:bob" || !strings.Contains(r.Damage, "operator:alice") {
		t.Fatalf("decided_by %q, damage %q", r.DecidedBy, r.Damage)
	}
	_, _, err = h.q.Decide(context.Background(), "blame", Decision{Approve: true, By: "operator:carol"})
	var de *DecidedError
	if !errors.As(err, &de) || de.By != "operator:bob" {
		t.Fatalf("late decision: %v", err)
	}
	// an untouched record passes as it is
	h.submit(h.play("fine"))
	h.q.Decide(context.Background(), "fine", Decision{By: "operator:bob", Reason: "no"})
	if r, _ := h.q.Get("fine"); r.DecidedBy != "operator:bob" || r.Damage != "" {
		t.Fatalf("an intact record: %q %q", r.DecidedBy, r.Damage)
	}
	// blame's denial is no longer the log's last entry: it is found in the
	// window after its submission, checked by its hash and the next link
	if r, _ := h.q.Get("blame"); r.DecidedBy != "operator:bob" || !strings.Contains(r.Damage, "operator:alice") {
		t.Fatalf("read from the window: decided_by %q, damage %q", r.DecidedBy, r.Damage)
	}
}
