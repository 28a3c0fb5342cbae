package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/internal/testbin"
)

// TestHelperProcess is not a test: other tests re-run the test binary with
// VIGIL_HELPER set to make it act as a second Vigil process on the same home.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("VIGIL_HELPER")
	if mode == "" {
		return
	}
	env := approvaltest.Reopen(t, os.Getenv("VIGIL_DIR"))
	switch mode {
	case "decide":
		approve := os.Getenv("VIGIL_APPROVE") == "1"
		// wait for the go signal so both processes race
		for {
			if _, err := os.Stat(os.Getenv("VIGIL_GO")); err == nil {
				break
			}
		}
		_, _, err := env.Queue.Decide(context.Background(), "race", Decision{Approve: approve, By: "operator:" + os.Getenv("VIGIL_WHO"), Reason: "race"})
		var de *DecidedError
		switch {
		case err == nil:
			fmt.Println("WON")
		case errors.As(err, &de):
			fmt.Println("LOST")
		default:
			fmt.Println("ERR", err)
		}
	case "search":
		scopes, err := scope.WriteDemo(filepath.Join(os.Getenv("VIGIL_DIR"), "scopes"))
		if err != nil {
			t.Fatal(err)
		}
		env.Scopes = scopes
		env.Queue = env.Open()
		raw, _ := os.ReadFile(os.Getenv("VIGIL_MANIFEST"))
		out := env.Submit(raw)
		b, _ := json.Marshal(out.Result)
		os.Stdout.Write(b)
	case "submitdeny":
		// submit a task and deny it; VIGIL_CRASHPOINT may kill it on the way
		env.Submit(env.Play("idx", "/media/idx.mkv"))
		env.Queue.Decide(context.Background(), "idx", Decision{By: "operator:crash", Reason: "no"})
	case "crashrun":
		// submit and approve tasks until killed
		run := os.Getenv("VIGIL_RUN")
		for k := 0; k < 3; k++ {
			id := fmt.Sprintf("crash-%s-%d", run, k)
			env.Submit(env.Play(id, "/media/"+id+".mkv"))
			env.Queue.Decide(context.Background(), id, Decision{Approve: true, By: "operator:crash"})
		}
	}
	os.Exit(0)
}

func helper(t *testing.T, dir string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{"VIGIL_DIR=" + dir}, env...)...)
	return cmd
}

func TestFirstDecisionWinsAcrossProcesses(t *testing.T) {
	for round := 0; round < 5; round++ {
		env := approvaltest.New(t)
		env.Submit(env.Play("race", "/media/movie.mkv"))
		goFile := env.Dir + "/go"
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for i, approve := range []string{"1", "0"} {
			c := helper(t, env.Dir, "VIGIL_HELPER=decide", "VIGIL_APPROVE="+approve, fmt.Sprintf("VIGIL_WHO=p%d", i), "VIGIL_GO="+goFile)
			var b strings.Builder
			c.Stdout, c.Stderr = &b, &b
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, c), append(outs, &b)
		}
		os.WriteFile(goFile, nil, 0o600)
		for _, c := range cmds {
			c.Wait()
		}
		won := 0
		for _, b := range outs {
			switch {
			case strings.Contains(b.String(), "WON"):
				won++
			case strings.Contains(b.String(), "LOST"):
			default:
				t.Fatalf("helper said: %s", b.String())
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners", round, won)
		}
		decisions := 0
		for _, e := range env.Events() {
			if e == "approved" || e == "denied" {
				decisions++
			}
		}
		if decisions != 1 {
			t.Fatalf("round %d: %d decisions in the audit log", round, decisions)
		}
	}
}

// TestKillNineLosesNothingAndRunsNothingTwice kills a real Vigil process
// (this test binary acting as one) at random points while it submits and
// approves tasks, 100 times, reopening the queue after each kill.
func TestKillNineLosesNothingAndRunsNothingTwice(t *testing.T) {
	testbin.FullRunOnly(t, "kills a real process 100 times")
	env := approvaltest.New(t)
	rng := rand.New(rand.NewPCG(7, 9))
	journal := filepath.Join(env.SimDir(), "living-room.journal")
	for run := 0; run < 100; run++ {
		c := helper(t, env.Dir, "VIGIL_HELPER=crashrun", fmt.Sprintf("VIGIL_RUN=%d", run))
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-time.After(time.Duration(rng.IntN(600)) * time.Millisecond):
			syscall.Kill(c.Process.Pid, syscall.SIGKILL)
			<-done
		case <-done:
		}
		q := approvaltest.Reopen(t, env.Dir) // reconciles
		seen, _ := os.ReadFile(journal)
		for k := 0; k < 3; k++ {
			id := fmt.Sprintf("crash-%d-%d", run, k)
			n := strings.Count(string(seen), "/media/"+id+".mkv")
			r, err := q.Queue.Get(id)
			if errors.Is(err, ErrNotFound) {
				if n != 0 {
					t.Fatalf("run %d: %s reached the device without being recorded", run, id)
				}
				continue
			}
			if err != nil {
				t.Fatalf("run %d: %s: %v", run, id, err)
			}
			switch {
			case n > 1:
				t.Fatalf("run %d: %s reached the device %d times", run, id, n)
			case r.State == Done && n != 1:
				t.Fatalf("run %d: %s is done but the device saw it %d times", run, id, n)
			case r.State == Pending && n != 0:
				t.Fatalf("run %d: %s is pending but the device saw it", run, id)
			case r.State == Approved || r.State == Executing:
				t.Fatalf("run %d: %s left %s after reconcile", run, id, r.State)
			}
		}
		q.Events() // the audit chain verifies (a torn line was moved aside)
	}
}
