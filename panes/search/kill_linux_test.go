package searchpane

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// slowBackend is a wrapper around the real ugrep: --version and the
// pattern check go straight to ugrep; a search starts a child that sleeps,
// tells its own and its child's pid through the FIFO started (the write
// waits for the test to read), and waits for the child, so only a kill of
// the whole process group ends it quickly.
func slowBackend(t *testing.T) (bin, started string) {
	ug, err := exec.LookPath("ugrep")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	started = filepath.Join(dir, "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`#!/bin/sh
for a in "$@"; do
  case "$a" in --version|-) exec %[1]s "$@";; esac
done
sleep 300 &
echo $$ $! > %[2]s
wait
exec %[1]s "$@"
`, ug, started)
	bin = filepath.Join(dir, "slowgrep")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, started
}

// backendPids reads the wrapper's and its child's pids from the FIFO,
// waiting until the wrapper writes them.
func backendPids(t *testing.T, fifo string) []int {
	t.Helper()
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the wrapper opens it to write
		got <- b
	}()
	select {
	case b := <-got:
		var pids []int
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
		if len(pids) != 2 {
			t.Fatalf("the backend said %q, want two pids", b)
		}
		return pids
	case <-time.After(15 * time.Second):
		t.Fatal("backend never started")
	}
	return nil
}

// pidfd is a handle on a running process that becomes readable when the
// process exits, whoever its parent is (pidfd_open(2)): a test waits on it
// instead of polling /proc, and a reused pid cannot fool it.
func pidfd(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pid %d not running before the new query: %v", pid, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// exited waits until the process behind fd has exited, or timeout passes.
func exited(fd int, timeout time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(timeout.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}

func TestNewQueryKillsTheBackendProcessGroup(t *testing.T) {
	needBackend(t, "ugrep")
	bin, started := slowBackend(t)
	o := baseOptions(fixtureTree(t), "")
	o.Search.Search.Binary, o.Search.Search.FallbackBinary = bin, ""
	p := typing(New(o, styles()))
	defer p.Close()
	for _, r := range "needle" {
		press(p, string(r))
	}
	press(p, "enter")
	old := p.cur
	// the wrapper and its sleeping child are running once they said so
	var fds []int
	for _, pid := range backendPids(t, started) {
		fds = append(fds, pidfd(t, pid))
	}
	press(p, "x") // a new query: the old one is cancelled at once (not debounced)
	if old.ctxErr() == nil {
		t.Fatal("typing did not cancel the running search")
	}
	select {
	case <-old.done:
	case <-time.After(15 * time.Second):
		t.Fatal("cancelled search did not return")
	}
	// SIGKILL is delivered asynchronously: each process ends soon after,
	// far sooner than the 300 s the sleeper would otherwise live
	for i, fd := range fds {
		if !exited(fd, 5*time.Second) {
			t.Fatalf("backend process %d of 2 survived the cancel", i+1)
		}
	}
}

// exited tells a running process from one that has ended.
func TestExitedWaitsForTheProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	fd := pidfd(t, cmd.Process.Pid)
	if exited(fd, 50*time.Millisecond) {
		t.Fatal("a sleeping process counted as exited")
	}
	cmd.Process.Kill()
	if !exited(fd, 15*time.Second) {
		t.Fatal("a killed process never counted as exited")
	}
}
