package cli

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
)

// parallel runs fn(i) for i < n, at most width at a time.
func parallel(n, width int, fn func(i int)) {
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(i)
		}()
	}
	wg.Wait()
}

// TestQueueFirstDecisionWinsAcrossProcesses: two operators on two homes
// decide every task at the same moment, 50 rounds; in each, exactly one
// wins, the other is told who did, and the device runs each approved task
// exactly once.
func TestQueueFirstDecisionWinsAcrossProcesses(t *testing.T) {
	const rounds = 50
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	ids := make([]string, rounds)
	for i := range ids {
		ids[i] = fmt.Sprintf("race-%02d", i)
	}
	parallel(rounds, 6, func(i int) { r.submit(ids[i], time.Hour) })

	type result struct{ alice, bob runOut }
	results := make([]result, rounds)
	parallel(rounds, 4, func(i int) {
		bobArgs := []string{"approve", ids[i], "--yes"}
		if i%2 == 1 {
			bobArgs = []string{"deny", ids[i], "--reason", "bob says no"}
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); results[i].alice = r.run(r.ops["alice"], "alice", "approve", ids[i], "--yes") }()
		go func() { defer wg.Done(); results[i].bob = r.run(r.ops["bob"], "bob", bobArgs...) }()
		wg.Wait()
	})
	recs := r.exec.checkInvariants("race")
	wins := map[string]int{}
	for i, id := range ids {
		a, b := results[i].alice, results[i].bob
		var winner, loser string
		var lost runOut
		switch {
		case a.code == 0 && b.code == 1:
			winner, loser, lost = "alice", "bob", b
		case b.code == 0 && a.code == 1:
			winner, loser, lost = "bob", "alice", a
		default:
			t.Fatalf("%s: alice exit %d, bob exit %d\nalice: %s%s\nbob: %s%s", id, a.code, b.code, a.out, a.err, b.out, b.err)
		}
		wins[winner]++
		if !strings.Contains(lost.err, "already") || !strings.Contains(lost.err, "operator:"+winner) {
			t.Fatalf("%s: %s lost but was told %q", id, loser, lost.err)
		}
		rec := recs[id]
		if rec.DecidedBy != "operator:"+winner {
			t.Fatalf("%s: record decided by %q, winner %s", id, rec.DecidedBy, winner)
		}
		approved := winner == "alice" || i%2 == 0
		want := approval.Denied
		runs := 0
		if approved {
			want, runs = approval.Done, 1
		}
		if rec.State != want || r.journalRuns(id) != runs {
			t.Fatalf("%s: state %s, device runs %d; want %s, %d", id, rec.State, r.journalRuns(id), want, runs)
		}
	}
	t.Logf("wins: %v", wins)
}
