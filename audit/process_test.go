package audit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// Environment of the helper process: the log to append to, how many entries,
// and the actor name that tells the two writers apart.
const (
	envHelperLog   = "VIGIL_AUDIT_HELPER_LOG"
	envHelperN     = "VIGIL_AUDIT_HELPER_N"
	envHelperActor = "VIGIL_AUDIT_HELPER_ACTOR"
)

// TestHelperProcess is not a test: it is the body of the child processes
// TestTwoProcessesAppend starts from this same test binary.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(envHelperLog)
	if path == "" {
		return
	}
	n, err := strconv.Atoi(os.Getenv(envHelperN))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad", envHelperN, err)
		os.Exit(2)
	}
	actor := os.Getenv(envHelperActor)
	l, err := Open(path, stepClock())
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	for i := 0; i < n; i++ {
		if _, err := l.Append(Entry{Actor: actor, Event: EventSearched, TaskID: strconv.Itoa(i), Success: true}); err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			os.Exit(4)
		}
	}
	os.Exit(0)
}

// TestTwoProcessesAppend runs two real OS processes appending 5,000 entries
// each at the same time; the flock must keep one valid chain of 10,000.
func TestTwoProcessesAppend(t *testing.T) {
	// I/O-bound and CPU-bound: the two slow tests overlap
	t.Parallel()
	const perProcess = 5000
	path := filepath.Join(t.TempDir(), "audit.log")
	start := make([]*exec.Cmd, 2)
	for i := range start {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(),
			envHelperLog+"="+path,
			envHelperN+"="+strconv.Itoa(perProcess),
			envHelperActor+"=proc-"+strconv.Itoa(i))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		start[i] = cmd
	}
	for _, c := range start {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range start {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper %d: %v", i, err)
		}
	}
	rep := mustVerify(t, path)
	if !rep.OK || rep.Entries != 2*perProcess {
		t.Fatalf("after two writers: %s (%+v)", rep, rep)
	}
	// every entry of each writer made it, in that writer's order, and the two
	// really interleaved (otherwise the lock was never contended)
	next := map[string]int{}
	switches := 0
	last := ""
	if _, err := Scan(path, 0, func(l Line) bool {
		if l.Err != nil {
			t.Fatalf("line at %d: %v", l.Offset, l.Err)
		}
		a := l.Entry.Actor
		if l.Entry.TaskID != strconv.Itoa(next[a]) {
			t.Fatalf("%s: task %s where %d was expected", a, l.Entry.TaskID, next[a])
		}
		next[a]++
		if a != last {
			switches++
			last = a
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if next["proc-0"] != perProcess || next["proc-1"] != perProcess {
		t.Fatalf("per writer: %v", next)
	}
	t.Logf("writers took turns %d times", switches)
}
