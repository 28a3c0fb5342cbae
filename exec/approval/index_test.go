package approval_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

func indexDir(h *approvaltest.Env) string { return filepath.Join(h.TasksDir(), ".index") }

func ids(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.TaskID
	}
	return out
}

func markers(t *testing.T, q *Queue) []string {
	t.Helper()
	ents, err := os.ReadDir(q.OpenTasksDir())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// deny finishes a task through a real decision.
func (h *harness) deny(id string) {
	h.T.Helper()
	if _, _, err := h.q.Decide(context.Background(), id, Decision{By: "operator:test", Reason: "no"}); err != nil {
		h.T.Fatal(err)
	}
}

// A finished task is not read by opening the queue or listing what is
// pending: its record is made unreadable and nothing notices, while a
// lookup by its id (and the full history) still reads it.
func TestPendingReadsOnlyOpenTasks(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("open-1"))
	for i := range 3 {
		id := fmt.Sprintf("done-%d", i)
		h.submit(h.play(id))
		h.deny(id)
	}
	if got := markers(t, h.q); !slices.Equal(got, []string{"open-1"}) {
		t.Fatalf("open markers = %v, want only open-1", got)
	}
	if err := os.WriteFile(filepath.Join(h.TasksDir(), "done-1", "record.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := h.Open()
	p, err := q.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(p); !slices.Equal(got, []string{"open-1"}) {
		t.Fatalf("pending = %v, want [open-1] (a finished task's record was read)", got)
	}
	if _, err := q.Get("done-1"); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a lookup by id must read the record: %v", err)
	}
	all, _ := q.List()
	if len(all) != 4 {
		t.Fatalf("the full list reads every record: %v", ids(all))
	}
}

// A task_id is one request forever: a finished id is refused for another
// request, and the same request gets its stored answer.
func TestFinishedTaskIDStaysTaken(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("once"))
	h.deny("once")
	q := h.Open()
	h.Queue = q
	out := h.Submit(h.Play("once", "/media/other.mkv"))
	if out.State != "rejected" || !strings.Contains(out.Error.Message, "already names another request") {
		t.Fatalf("another request under a finished id: %+v %v", out, out.Error)
	}
	out = h.Submit(h.play("once"))
	if out.State != string(Denied) {
		t.Fatalf("the same request again: %+v", out)
	}
	if got := markers(t, q); len(got) != 0 {
		t.Fatalf("a refused resubmission left a marker: %v", got)
	}
}

// The decided list (read from the index's tail) is the full history's
// newest tasks, in the same order.
func TestDecidedFromTheIndexMatchesTheRecords(t *testing.T) {
	h := newHarness(t)
	for i := range 12 {
		id := fmt.Sprintf("t-%02d", i)
		h.submit(h.play(id))
		h.Clock.Advance(time.Second)
		if i%3 != 0 {
			h.deny(id)
		}
	}
	all, err := h.q.Decided(0)
	if err != nil {
		t.Fatal(err)
	}
	top, err := h.q.Decided(5)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 8 || !slices.Equal(ids(top), ids(all)[:5]) {
		t.Fatalf("Decided(5) = %v, the newest of %v", ids(top), ids(all))
	}
	if ids(top)[0] != "t-11" {
		t.Fatalf("newest first: %v", ids(top))
	}
}

// A home from before the index, or one whose index is damaged, gets it
// rebuilt from the records; the queue says so, and lists what it did.
func TestIndexRebuiltFromRecords(t *testing.T) {
	damage := map[string]func(t *testing.T, dir string){
		"missing": func(t *testing.T, dir string) { os.RemoveAll(dir) },
		"no stamp": func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "built"))
		},
		"bad stamp": func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "built"), []byte("v0\n"), 0o600)
		},
		"not a marker": func(t *testing.T, dir string) {
			os.Mkdir(filepath.Join(dir, "open", "sub"), 0o700)
		},
		"symlink marker": func(t *testing.T, dir string) {
			os.Symlink("/etc/passwd", filepath.Join(dir, "open", "evil"))
		},
		"finished list gone": func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "finished"))
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.submit(h.play("a"))
			h.submit(h.play("b"))
			h.deny("b")
			h.submit(h.play("c"))
			// an open marker deleted with the index: the rebuild finds c again
			fn(t, indexDir(h.Env))
			os.Remove(filepath.Join(indexDir(h.Env), "open", "c"))
			q := h.Open()
			if q.IndexRebuilt() == nil {
				t.Fatal("the rebuild is not reported")
			}
			p, err := q.Pending()
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p); !slices.Equal(got, []string{"a", "c"}) {
				t.Fatalf("pending after rebuild = %v, want [a c]", got)
			}
			if got := markers(t, q); !slices.Equal(got, []string{"a", "c"}) {
				t.Fatalf("markers after rebuild = %v", got)
			}
			d, err := q.Decided(10)
			if err != nil || !slices.Equal(ids(d), []string{"b"}) {
				t.Fatalf("decided after rebuild = %v %v", ids(d), err)
			}
			if h.Open().IndexRebuilt() != nil {
				t.Fatal("a sound index was rebuilt again")
			}
		})
	}
}

// A marker deleted by hand hides a task from the listings, never from a
// decision: Decide reads the task's own record and checks it.
func TestDecisionReadsTheRecordNotTheIndex(t *testing.T) {
	h := newHarness(t)
	h.submit(h.play("hidden"))
	if err := os.Remove(filepath.Join(h.q.OpenTasksDir(), "hidden")); err != nil {
		t.Fatal(err)
	}
	p, _ := h.q.Pending()
	if len(p) != 0 {
		t.Fatalf("pending = %v", ids(p))
	}
	// the stored request is changed: the decision must find it from the record
	os.WriteFile(filepath.Join(h.TasksDir(), "hidden", "manifest.json"), h.Play("hidden", "/media/evil.mkv"), 0o600)
	_, _, err := h.q.Decide(context.Background(), "hidden", Decision{Approve: true, By: "operator:test"})
	if !errors.Is(err, ErrTampered) {
		t.Fatalf("decision on an unindexed, tampered task: %v", err)
	}
	if n, err := h.q.RebuildIndex(); err != nil || n != 0 {
		t.Fatalf("rebuild: %d open, %v", n, err)
	}
}

// Real kills around the index's writes: after the marker and before the
// record, the next open drops the marker and the id is free; after a
// denial's last record write and before the marker goes, the next open
// retires it. Nothing is logged twice.
func TestIndexAfterKills(t *testing.T) {
	for _, tc := range []struct {
		point   string
		pending []string
		state   State
	}{
		{"submit.index", nil, ""},
		{"submit.done", []string{"idx"}, Pending},
		{"deny.record", nil, Denied},
		{"deny.done", nil, Denied},
	} {
		t.Run(tc.point, func(t *testing.T) {
			h := newHarness(t)
			cmd := helper(t, h.Dir, "VIGIL_HELPER=submitdeny", "VIGIL_CRASHPOINT="+tc.point)
			err := cmd.Run()
			var ee interface{ Sys() any }
			if !errors.As(err, &ee) {
				t.Fatalf("helper: %v", err)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("helper was not killed at %s: %v", tc.point, err)
			}
			q := h.Open()
			p, err := q.Pending()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(p), tc.pending) {
				t.Fatalf("pending = %v, want %v", ids(p), tc.pending)
			}
			if !slices.Equal(markers(t, q), tc.pending) {
				t.Fatalf("markers = %v, want %v", markers(t, q), tc.pending)
			}
			r, err := q.Get("idx")
			if tc.state == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("a submission killed before its record: %+v %v", r, err)
				}
				h.Queue = q
				if out := h.Submit(h.Play("idx", "/media/idx.mkv")); out.State != string(Pending) {
					t.Fatalf("the id is free again: %+v", out)
				}
				return
			}
			if r.State != tc.state || r.LogFrom != nil {
				t.Fatalf("record after %s: %s log_from=%v", tc.point, r.State, r.LogFrom)
			}
			ev := h.Events()
			if n := strings.Count(strings.Join(ev, " "), "submitted"); n != 1 {
				t.Fatalf("events %v", ev)
			}
			if tc.state == Denied {
				d, _ := q.Decided(5)
				if !slices.Equal(ids(d), []string{"idx"}) || strings.Count(strings.Join(ev, " "), "denied") != 1 {
					t.Fatalf("decided %v, events %v", ids(d), ev)
				}
			}
		})
	}
}
