package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestQueueServeRefusesADeviceAnotherExecutorServes: a second `vigil
// serve` whose config lists a device the running executor serves stops at
// start (exit 2), naming the device and the other executor's consumer, and
// the first keeps serving.
func TestQueueServeRefusesADeviceAnotherExecutorServes(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	second := newCrashHome(t, r.bin)
	r.addQueue(second.home, "executor")
	c := r.cmd(second.home, "executor", "serve")
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		<-done
		t.Fatalf("the second serve kept running\n%s", errOut.String())
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != ExitBadInput {
		t.Fatalf("the second serve: %v, want exit %d\n%s%s", err, ExitBadInput, out.String(), errOut.String())
	}
	if msg := errOut.String(); !strings.Contains(msg, `device "living-room" is already served by another executor`) ||
		!strings.Contains(msg, "vigil-executor-") {
		t.Fatalf("the refusal does not name the device and its executor:\n%s", msg)
	}
	// the first one still takes living-room's tasks, and its views name it
	v := r.submit("ds-cli-1", time.Hour)
	if v["task_id"] != "ds-cli-1" {
		t.Fatalf("after the refusal: %v", v)
	}
	pend := r.must(0, r.ops["alice"], "alice", "pending", "--json")
	if !strings.Contains(pend.out, `"executor_id": "ed25519:`) {
		t.Fatalf("pending --json does not name the executor:\n%s", pend.out)
	}
	if code := ex.stop(t); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, ex.stderr.String())
	}
}
