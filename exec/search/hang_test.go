package search

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangPattern never finishes compiling in ugrep 3.11 (it loops at full
// CPU); the comment marks its processes for this test.
const hangPattern = `(?:$){1,}é(?#vigil-orphan-test)`

// hangingSearch runs a search that hangs in ugrep, as a Vigil would; the
// process running it is then killed by TestBackendDiesWithVigil.
func hangingSearch(root string) {
	req, err := DecodeRequest([]byte(`{"pattern":` + mustJSON(hangPattern) + `,"timeout_ms":600000}`))
	if err != nil {
		os.Exit(2)
	}
	opts := DefaultOptions(root)
	opts.Backend = "ugrep"
	Run(context.Background(), req, opts, func(Batch) {})
}

// markedBackends lists the pids of processes running hangPattern.
func markedBackends() []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err == nil && strings.Contains(string(b), "vigil-orphan-test") {
			if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// A backend runs in its own process group (so that a timeout kills all of
// it), which let it outlive a Vigil killed mid-search: ugrep processes stuck
// on a pattern were found spinning half an hour after their parent died.
// Pdeathsig now kills a backend with the process that started it.
func TestBackendDiesWithVigil(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "abc\n")
	t.Cleanup(func() {
		for _, pid := range markedBackends() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), "VIGIL_TEST_NODAC=1", "VIGIL_TEST_HANGING_SEARCH="+root)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(markedBackends()) == 0 {
		if time.Now().After(deadline) {
			child.Process.Kill()
			child.Wait()
			t.Fatal("the child's ugrep never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	child.Process.Kill()
	child.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for len(markedBackends()) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := markedBackends(); len(left) > 0 {
		t.Fatalf("ugrep processes %v outlived the Vigil that started them", left)
	}
}

// When a search timed out before any backend run had accepted the pattern,
// Vigil asks the backend whether the pattern compiles, so that a bad one is
// BadArgs. That check had no deadline, and ugrep never finishes compiling
// hangPattern: `vigil search --timeout-ms 2000` hung for good. The check now
// has the search's timeout, and a check cut off proves nothing against the
// pattern: the answer is the timed-out one.
func TestSearchOnAPatternUgrepNeverCompilesTimesOut(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "abc\n")
	req, err := DecodeRequest([]byte(`{"pattern":` + mustJSON(hangPattern) + `,"timeout_ms":300}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions(root)
	opts.Backend = "ugrep"
	for _, emit := range []func(Batch){nil, func(Batch) {}} {
		start := time.Now()
		resp, err := Run(context.Background(), req, opts, emit)
		took := time.Since(start)
		if err != nil || !resp.TimedOut || resp.Count != 0 {
			t.Errorf("stream=%v: err %v, timed_out %v, count %d; want a timed-out empty answer", emit != nil, err, resp.TimedOut, resp.Count)
		}
		if took > 8*time.Second {
			t.Errorf("stream=%v: took %v with timeout_ms 300", emit != nil, took)
		}
		if left := markedBackends(); len(left) > 0 {
			t.Errorf("stream=%v: ugrep processes %v left running", emit != nil, left)
		}
	}
}
