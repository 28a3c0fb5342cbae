package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// On a home that requires an operator's key, this account's own surfaces
// cannot decide, and the task stays pending; an SSH operator's decision
// with a key, or a shared queue operator's, goes through.
func TestRequireOperatorKeyRefusesThisAccountsDecisions(t *testing.T) {
	e := approvaltest.New(t)
	e.RequireOperatorKey = true
	q := e.Open()
	e.Submit(e.Play("t1", "/media/movie.mkv"))
	for _, d := range []Decision{
		{Approve: true, By: "operator:me", Via: ViaCLI},
		{Approve: true, By: "operator:me", Via: ViaTUI},
		{Approve: false, By: "operator:me", Via: ViaTUI, Reason: "no"},
		{Approve: true, By: "operator:me", Via: ViaSSH}, // over SSH but with no key
		{Approve: true, By: "operator:me", Via: "", Key: "SHA256:forged"},
	} {
		if _, _, err := q.Decide(context.Background(), "t1", d); !errors.Is(err, ErrOperatorKeyRequired) {
			t.Fatalf("decision %+v: err = %v, want ErrOperatorKeyRequired", d, err)
		}
	}
	if r, err := q.Get("t1"); err != nil || r.State != Pending {
		t.Fatalf("after refused decisions: %+v %v", r, err)
	}
	if got := strings.Join(e.Events(), ","); got != "submitted" {
		t.Fatalf("a refused decision reached the log: %s", got)
	}
	if !q.RequiresOperatorKey() {
		t.Fatal("RequiresOperatorKey = false")
	}
}

// A decision over SSH records the operator, the surface and the key's
// fingerprint in the record and in the audit entry.
func TestDecisionOverSSHRecordsTheKey(t *testing.T) {
	e := approvaltest.New(t)
	e.RequireOperatorKey = true
	q := e.Open()
	e.Submit(e.Play("t1", "/media/movie.mkv"))
	v, err := q.Preview(context.Background(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	const fp = "SHA256:2CWDz7sQeJ1bqDq3b0Kp1d5p0lWm8xQv6D0oZ9Jp7hI"
	rec, _, err := q.Decide(context.Background(), "t1", Decision{Approve: true, By: "operator:ada", Via: ViaSSH, Key: fp, PreviewHash: v.BindingHash})
	if err != nil {
		t.Fatal(err)
	}
	if rec.DecidedBy != "operator:ada" || rec.DecidedVia != ViaSSH || rec.DecidedKey != fp {
		t.Fatalf("record: by %q via %q key %q", rec.DecidedBy, rec.DecidedVia, rec.DecidedKey)
	}
	b, err := os.ReadFile(e.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ent struct {
			Actor   string         `json:"actor"`
			Event   string         `json:"event"`
			Details map[string]any `json:"details"`
		}
		if err := json.Unmarshal([]byte(line), &ent); err != nil {
			t.Fatal(err)
		}
		if ent.Event == "approved" {
			if ent.Actor != "operator:ada" || ent.Details["via"] != ViaSSH || ent.Details["key"] != fp {
				t.Fatalf("approved entry: %s", line)
			}
			return
		}
	}
	t.Fatalf("no approved entry:\n%s", b)
}

// A queue operator's decision is taken on such a home.
func TestRequireOperatorKeyTakesQueueOperators(t *testing.T) {
	e := approvaltest.New(t)
	e.RequireOperatorKey = true
	q := e.Open()
	e.Submit(e.Play("t1", "/media/movie.mkv"))
	if rec, _, err := q.Decide(context.Background(), "t1", Decision{By: "operator:bob", Via: ViaQueue, Reason: "not now"}); err != nil || rec.State != Denied {
		t.Fatalf("queue operator's denial: %+v %v", rec, err)
	}
}
