package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// envVerifierLog names the log the verifier helper process re-verifies.
const envVerifierLog = "VIGIL_AUDIT_VERIFIER_LOG"

// TestVerifierHelperProcess is not a test: it is the body of the process
// TestKilledVerifierLeavesAUsableRecord kills. It verifies the log
// incrementally over and over, printing a line after each pass.
func TestVerifierHelperProcess(t *testing.T) {
	path := os.Getenv(envVerifierLog)
	if path == "" {
		return
	}
	for {
		v, err := VerifyIncremental(context.Background(), path, VerifiedPath(path), VerifyOptions{}, nil)
		if err != nil || !v.OK || v.SaveErr != nil {
			fmt.Fprintln(os.Stderr, "verify:", v.Report, err, v.SaveErr)
			os.Exit(5)
		}
		fmt.Println(v.Entries)
	}
}

// TestKilledVerifierLeavesAUsableRecord kills a real verifier process
// (SIGKILL) at random moments while another writer appends, and after each
// kill checks that the record beside the log is whole (the old one or the
// new one, never half) and that resuming from it reports what a full
// verification reports.
func TestKilledVerifierLeavesAUsableRecord(t *testing.T) {
	path := newLog(t, 50)
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 21))
	resumed := 0
	for round := 0; round < 6; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestVerifierHelperProcess$")
		cmd.Env = append(os.Environ(), envVerifierLog+"="+path)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		if !lines.Scan() { // one pass done: a record is being rewritten from now on
			cmd.Wait()
			t.Fatalf("round %d: the verifier stopped before its first pass", round)
		}
		go func() {
			for lines.Scan() {
			}
		}()
		for i := 0; i < 5; i++ {
			if _, err := l.Append(sampleEntry(100 + i)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err == nil {
			t.Fatalf("round %d: the verifier exited on its own", round)
		}
		b, err := os.ReadFile(VerifiedPath(path))
		var r Verified
		if err != nil || json.Unmarshal(b, &r) != nil || r.Version != verifiedVersion || !isHash(r.Prefix) {
			t.Fatalf("round %d: the record after a kill is not whole: %v %q", round, err, b)
		}
		v := incremental(t, path, VerifyOptions{}) // compares with a full verification
		if !v.OK {
			t.Fatalf("round %d: %s", round, v.Report)
		}
		if v.Resumed > 0 {
			resumed++
		}
	}
	if resumed == 0 {
		t.Fatal("no round resumed from the record the killed process left")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.verified")); len(left) != 1 {
		t.Fatalf("records: %v", left)
	}
}
