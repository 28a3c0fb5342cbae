package approval_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
)

// withinSeconds fails the test if fn has not returned after d: a read that
// blocks on a FIFO or streams /dev/zero would otherwise hang the suite.
func withinSeconds(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s (blocked on a stored file that is not a regular file?)", what, d)
	}
}

// A task's stored files that are not regular files — a FIFO, a symlink to
// /dev/zero or to another task's file, or one far larger than any record or
// manifest — damage only that task: listing, previewing, deciding and
// resubmitting return at once, and the other tasks are untouched.
func TestStoredFilesThatAreNotRegularFilesDamageOnlyTheirTask(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Fatal("no /dev/zero")
	}
	h := newHarness(t)
	ids := []string{"fifo-rec", "zero-rec", "link-rec", "huge-rec", "fifo-man", "zero-man", "huge-man", "good"}
	for _, id := range ids {
		h.submit(h.play(id))
	}
	rec := func(id string) string { return h.taskFile(id, "record.json") }
	man := func(id string) string { return h.taskFile(id, "manifest.json") }
	mkfifo := func(p string) {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal("mkfifo:", err)
		}
	}
	symlink := func(to, p string) {
		os.Remove(p)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
	}
	huge := func(p string) {
		// valid JSON start, then 64 MiB of spaces: a reader that takes it all is unbounded
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"task_id":`)
		if err := f.Truncate(64 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	mkfifo(rec("fifo-rec"))
	symlink("/dev/zero", rec("zero-rec"))
	symlink(rec("good"), rec("link-rec"))
	huge(rec("huge-rec"))
	mkfifo(man("fifo-man"))
	symlink("/dev/zero", man("zero-man"))
	huge(man("huge-man"))

	var q *Queue
	withinSeconds(t, 10*time.Second, "open", func() { q = h.Open() })
	var list []Record
	withinSeconds(t, 10*time.Second, "pending", func() {
		var err error
		if list, err = q.Pending(); err != nil {
			t.Errorf("pending: %v", err)
		}
	})
	states := map[string]Record{}
	for _, r := range list {
		states[r.TaskID] = r
	}
	for _, id := range ids[:len(ids)-1] {
		if r := states[id]; r.State != Damaged || r.Damage == "" {
			t.Errorf("%s: listed as %q (%s), want damaged with a reason", id, r.State, r.Damage)
		}
	}
	if states["good"].State != Pending {
		t.Errorf("good: %+v", states["good"])
	}
	for _, id := range ids[:len(ids)-1] {
		withinSeconds(t, 10*time.Second, "preview "+id, func() {
			if _, err := q.Preview(context.Background(), id); err == nil {
				t.Errorf("preview %s: no error", id)
			}
		})
		withinSeconds(t, 10*time.Second, "approve "+id, func() {
			_, _, err := q.Decide(context.Background(), id, Decision{Approve: true, By: "operator:ada"})
			if err == nil {
				t.Errorf("approve %s: no error", id)
			}
			if strings.HasSuffix(id, "-rec") && !errors.Is(err, ErrDamaged) {
				t.Errorf("approve %s: %v, want ErrDamaged", id, err)
			}
		})
		withinSeconds(t, 10*time.Second, "resubmit "+id, func() {
			if out, err := q.Submit(context.Background(), h.play(id), "cli"); err == nil && out.State == "pending" && strings.HasSuffix(id, "-rec") {
				t.Errorf("resubmit %s over a damaged record: %+v", id, out)
			}
		})
	}
	// the results store reads its files the same way
	res := filepath.Join(h.Dir, "results", "good.json")
	mkfifo(res)
	withinSeconds(t, 10*time.Second, "result of a FIFO", func() {
		if _, err := q.Result("good"); err == nil || errors.Is(err, task.ErrNotFound) {
			t.Errorf("a FIFO result: %v", err)
		}
	})
	os.Remove(res)
	if _, res, err := q.Decide(context.Background(), "good", Decision{Approve: true, By: "operator:ada"}); err != nil || res.Status != task.StatusSuccess {
		t.Fatalf("approve good: %v", err)
	}
	if st := h.simState(); st.State != "playing" {
		t.Fatalf("device: %+v", st)
	}
}

// An inbox file swapped for a FIFO (or a symlink) after it was listed and
// before it was read is refused into rejected/ at once: the sweep, which
// every `vigil pending` and the TUI run, never blocks on it.
func TestInboxFileSwappedForAFIFOIsRefused(t *testing.T) {
	h := newHarness(t)
	if _, err := h.q.SweepInbox(context.Background()); err != nil { // makes the folders
		t.Fatal(err)
	}
	proc := filepath.Join(h.InboxDir(), "processing")
	os.MkdirAll(proc, 0o700)
	if err := syscall.Mkfifo(filepath.Join(proc, "a.json"), 0o600); err != nil {
		t.Fatal("mkfifo:", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(proc, "b.json")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.json", "b.json"} {
		withinSeconds(t, 10*time.Second, "claimed "+name, func() {
			out, ok, err := ProcessClaimedForTest(h.q, name)
			if err != nil || !ok || out.State != "rejected" {
				t.Errorf("%s: %+v %v %v", name, out, ok, err)
			}
		})
		if _, err := os.Lstat(filepath.Join(h.InboxDir(), "rejected", name)); err != nil {
			t.Errorf("%s not moved to rejected/: %v", name, err)
		}
	}
}
