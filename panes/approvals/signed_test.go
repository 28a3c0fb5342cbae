package approvalspane

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

// The decided list checks a result's signature with the operator's key: a
// stored result edited after it was signed (FAILURE made SUCCESS) says so,
// on the next reload, instead of "SUCCESS · signed".
func TestDecidedListVerifiesTheSignedResult(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("denied-one", "/media/a.mkv"))
	if _, _, err := env.Queue.Decide(context.Background(), "denied-one", approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	signer, err := task.LoadSigner(filepath.Join(env.Dir, "keys", lease.OperatorKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	p := newPane(env)
	p.o.ResultKey = signer.Public()
	p.decided.shown = true
	shown := func() string {
		p.Update(p.reload(nil)())
		if c := p.wantResult(); c != nil { // what the reload asked for
			p.Update(c())
		}
		return strings.Join(mustRender(p, 120, 40), "\n")
	}
	if out := shown(); !strings.Contains(out, "FAILURE") || strings.Contains(out, "does not verify") {
		t.Fatalf("the untouched result:\n%s", out)
	}
	path := filepath.Join(env.Dir, "results", "denied-one.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), `"FAILURE"`, `"SUCCESS"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(time.Second)
	if out := shown(); !strings.Contains(out, "does not verify") {
		t.Fatalf("an edited result shown as signed:\n%s", out)
	}
}
