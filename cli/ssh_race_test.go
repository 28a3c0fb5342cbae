package cli

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Two operators decide the same task at the same moment over SSH, one
// approving and one denying: exactly one decision stands, the task ends as
// that one said, the device ran it at most once, and the other operator is
// told who decided.
func TestSSHTwoOperatorsDecideAtOnce(t *testing.T) {
	h := newCLIHome(t)
	keys := h.addOperators("", "ada", "bob")
	const rounds = 4
	ids := make([]string, rounds)
	for i := range ids {
		ids[i] = fmt.Sprintf("race%d", i)
		h.must(0, "submit", h.manifest(ids[i], "1h"))
	}
	s := h.serveSSH()
	for i, id := range ids {
		hash := h.previewJSON(id)["preview_hash"].(string)
		// ada approves and bob denies on even rounds, the other way round on odd ones
		approver, denier := "ada", "bob"
		if i%2 == 1 {
			approver, denier = "bob", "ada"
		}
		type outcome struct {
			who, out, errs string
			code           int
		}
		var wg sync.WaitGroup
		results := make([]outcome, 2)
		cmds := []*exec.Cmd{
			s.cmd(keys[approver], nil, "approve", id, "--expect-preview", hash),
			s.cmd(keys[denier], nil, "deny", id, "--reason", "'not now'"),
		}
		start := make(chan struct{})
		for j, c := range cmds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var out, errb bytes.Buffer
				c.Stdout, c.Stderr = &out, &errb
				<-start
				err := c.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				results[j] = outcome{who: []string{approver, denier}[j], out: out.String(), errs: errb.String(), code: code}
			}()
		}
		close(start)
		wg.Wait()
		var won, lost []outcome
		for _, r := range results {
			if r.code == 0 {
				won = append(won, r)
			} else {
				lost = append(lost, r)
			}
		}
		if len(won) != 1 || len(lost) != 1 {
			t.Fatalf("%s: want one winner: %+v", id, results)
		}
		w, l := won[0], lost[0]
		if l.code != 1 || !strings.Contains(l.errs, "was already decided") || !strings.Contains(l.errs, "by operator:"+w.who) {
			t.Fatalf("%s: the loser (%s) was not told who decided: exit %d %q", id, l.who, l.code, l.errs)
		}
		e := h.decision(id)
		wantEvent := "approved"
		if w.who == denier {
			wantEvent = "denied"
		}
		if e.Actor != "operator:"+w.who || e.Event != wantEvent || e.Details["key"] != keys[w.who].fingerprint || e.Details["via"] != "ssh" {
			t.Fatalf("%s: the log says %+v, the winner was %s (%s)", id, e, w.who, wantEvent)
		}
		if n := strings.Count(h.journal(), id+".mkv"); (wantEvent == "approved") != (n == 1) || n > 1 {
			t.Fatalf("%s: the device ran it %d times after %s", id, n, wantEvent)
		}
		t.Logf("%s: %s %s first", id, w.who, wantEvent)
	}
	h.must(0, "audit", "verify")
}
