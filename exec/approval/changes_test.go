package approval_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// nextChange waits for the feed to name want (or to say All when want is
// ""), failing after a generous deadline: a feed is event-driven, so the
// wait ends as soon as the change arrives.
func nextChange(t *testing.T, ch <-chan approval.Change, want string) approval.Change {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatal("the feed closed")
			}
			if (want == "" && c.All) || (want != "" && slices.Contains(c.IDs, want)) {
				return c
			}
		case <-deadline:
			t.Fatalf("the feed never named %q", want)
		}
	}
}

func follow(t *testing.T, e *approvaltest.Env) (<-chan approval.Change, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := e.Queue.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ch, cancel
}

func TestChangesNameTasksSubmittedAndDecidedElsewhere(t *testing.T) {
	e := approvaltest.New(t)
	ch, _ := follow(t, e)
	other := e.Open() // a second process on the same home
	if _, err := other.Submit(context.Background(), e.Play("t-feed-1", "file:///a.mp3"), "cli"); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "t-feed-1")
	v, err := other.Preview(context.Background(), "t-feed-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Decide(context.Background(), "t-feed-1", approval.Decision{Approve: true, By: "operator:test",
		PreviewHash: v.BindingHash, Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "t-feed-1")
	if r, err := e.Queue.Get("t-feed-1"); err != nil || !r.State.Final() {
		t.Fatalf("after the change the task reads %v, %v", r.State, err)
	}
}

func TestChangesSweepTheInbox(t *testing.T) {
	e := approvaltest.New(t)
	ch, _ := follow(t, e)
	tmp := filepath.Join(e.InboxDir(), "m.json.tmp")
	if err := os.WriteFile(tmp, e.Play("t-inbox-1", "file:///a.mp3"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.Queue.InboxNew(), "m.json")); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "t-inbox-1")
	r, err := e.Queue.Get("t-inbox-1")
	if err != nil || r.State != approval.Pending {
		t.Fatalf("the swept task reads %v, %v", r.State, err)
	}
	if left, _ := os.ReadDir(e.Queue.InboxNew()); len(left) != 0 {
		t.Fatalf("the inbox still holds %d files", len(left))
	}
}

func TestChangesSayAllWhenTheLogIsReplaced(t *testing.T) {
	e := approvaltest.New(t)
	e.Submit(e.Play("t-before", "file:///a.mp3"))
	ch, _ := follow(t, e)
	tmp := e.AuditPath() + ".other"
	if err := os.WriteFile(tmp, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, e.AuditPath()); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "")
}

func TestChangesCloseWithTheContext(t *testing.T) {
	e := approvaltest.New(t)
	ch, cancel := follow(t, e)
	cancel()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the feed did not close after its context ended")
	}
}
