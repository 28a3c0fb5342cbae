package approvalspane

import (
	"context"
	"testing"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// decideNow denies id as another window would, a second after the last.
func decideNow(t *testing.T, env *approvaltest.Env, id string) {
	t.Helper()
	submitAll(env, id)
	env.Clock.Advance(1e9)
	if _, _, err := env.Queue.Decide(context.Background(), id, approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
}

// The decided list opens on its newest task, stays on the newest as
// decisions arrive until the person moves, and opens on the newest again
// whatever it was left on.
func TestDecidedListOpensOnTheNewest(t *testing.T) {
	env := approvaltest.New(t)
	decideNow(t, env, "first")
	p := loadedPane(t, env)
	// a decision after the pane loaded (this pane's own, or another's)
	decideNow(t, env, "second")
	reloadPane(p)
	act(p, "v")
	if p.decided.selID != "second" {
		t.Fatalf("the decided list opened on %q, want the newest (second)", p.decided.selID)
	}
	decideNow(t, env, "third")
	reloadPane(p)
	if p.decided.selID != "third" || p.decided.cur.Cursor() != 0 {
		t.Fatalf("a new decision left the cursor on %q, want the newest (third)", p.decided.selID)
	}
	// the person moves: the cursor then stays on their task
	act(p, "j")
	if p.decided.selID != "second" {
		t.Fatalf("j: %q", p.decided.selID)
	}
	decideNow(t, env, "fourth")
	reloadPane(p)
	if p.decided.selID != "second" {
		t.Fatalf("a new decision moved the cursor the person put on second to %q", p.decided.selID)
	}
	// leaving and coming back opens on the newest, with its result read
	act(p, "v")
	act(p, "v")
	if p.decided.selID != "fourth" || p.decided.resultID != "fourth" {
		t.Fatalf("reopened on %q (result %q), want fourth", p.decided.selID, p.decided.resultID)
	}
	// back on the newest by the person's own move: it follows again
	act(p, "j")
	act(p, "g")
	decideNow(t, env, "fifth")
	reloadPane(p)
	if p.decided.selID != "fifth" {
		t.Fatalf("after g the cursor did not follow the newest: %q", p.decided.selID)
	}
}
