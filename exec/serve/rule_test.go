package serve

import (
	"context"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/notify"
)

// A task a rule is deciding is not announced; one whose rule decision did
// not finish within the grace is the person's, and is.
func TestRuleDecidingTaskIsNotAnnounced(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	s, err := New(Options{Queue: e.q, TasksDir: e.TasksDir(), Audit: e.Audit,
		Notify: func(context.Context, notify.Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := approval.Record{TaskID: "r1", State: approval.Pending, DecidingRule: "rule:kitchen", SubmittedAt: now}
	s.announce(r, now.Add(10*time.Minute), now.Add(time.Second))
	if len(s.events) != 0 {
		t.Fatalf("a task a rule is deciding was announced: %d events", len(s.events))
	}
	s.announce(r, now.Add(10*time.Minute), now.Add(approval.RuleGrace))
	if len(s.events) != 1 {
		t.Fatalf("after the grace: %d events, want the arrival", len(s.events))
	}
}
