package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func readBatch(t *testing.T, f *Follower) Batch {
	t.Helper()
	b, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFollowerReadsOnlyCompleteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	f := NewFollower(path, 0)
	if b := readBatch(t, f); !b.Empty() {
		t.Fatalf("a missing log gave %+v", b)
	}
	appendRaw(t, path, "one\ntw")
	b := readBatch(t, f)
	if string(b.Data) != "one\n" || b.From != 0 || b.End != 4 || b.Cut {
		t.Fatalf("got %+v", b)
	}
	if b := readBatch(t, f); !b.Empty() {
		t.Fatalf("a line being written was returned: %q", b.Data)
	}
	appendRaw(t, path, "o\nthree\n")
	b = readBatch(t, f)
	if string(b.Data) != "two\nthree\n" || b.From != 4 || b.End != 14 {
		t.Fatalf("got %+v %q", b, b.Data)
	}
	if ls := b.Lines(); len(ls) != 2 || ls[0].Offset != 4 || ls[1].Offset != 8 {
		t.Fatalf("lines %+v", ls)
	}
}

func TestFollowerCutRules(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, 3); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by another file of the same bytes", func(t *testing.T, path string) {
			tmp := path + ".new"
			if err := os.WriteFile(tmp, []byte("aaaa\nbbbb\ncc\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"last line rewritten in place", func(t *testing.T, path string) {
			fh, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			if _, err := fh.WriteAt([]byte("BBBB"), 5); err != nil {
				t.Fatal(err)
			}
		}},
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.log")
			appendRaw(t, path, "aaaa\nbbbb\n")
			f := NewFollower(path, 0)
			readBatch(t, f)
			c.change(t, path)
			b := readBatch(t, f)
			if !b.Cut || b.From != 0 {
				t.Fatalf("not a cut: %+v", b)
			}
			want, _ := os.ReadFile(path)
			if end := strings.LastIndexByte(string(want), '\n') + 1; string(b.Data) != string(want[:end]) {
				t.Fatalf("after the cut read %q, want %q", b.Data, want[:end])
			}
			if b := readBatch(t, f); b.Cut {
				t.Fatalf("a cut reported twice")
			}
		})
	}
}

func TestFollowerAppendIsNotACut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	appendRaw(t, path, "aaaa\nbbbb\n")
	f := NewFollower(path, 0)
	readBatch(t, f)
	// an earlier line rewritten is the verifier's to find, not a cut
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteAt([]byte("AAAA"), 0); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	appendRaw(t, path, "cccc\n")
	if b := readBatch(t, f); b.Cut || string(b.Data) != "cccc\n" {
		t.Fatalf("got %+v", b)
	}
}

func TestFollowerFromAKeptOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	appendRaw(t, path, "aaaa\nbbbb\ncccc\n")
	if b := readBatch(t, NewFollower(path, 5)); b.Cut || string(b.Data) != "bbbb\ncccc\n" || b.From != 5 {
		t.Fatalf("from a line start: %+v", b)
	}
	if b := readBatch(t, NewFollower(path, 7)); !b.Cut || string(b.Data) != "aaaa\nbbbb\ncccc\n" {
		t.Fatalf("from inside a line: %+v", b)
	}
	if b := readBatch(t, NewFollower(path, 99)); !b.Cut {
		t.Fatalf("from past the end: %+v", b)
	}
}

func TestFollowerRewindRereadsFromALine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	appendRaw(t, path, "aaaa\nbbbb\n")
	f := NewFollower(path, 0)
	readBatch(t, f)
	f.Rewind(5)
	if b := readBatch(t, f); b.Cut || string(b.Data) != "bbbb\n" {
		t.Fatalf("got %+v", b)
	}
}

func TestFollowerBatchesAreBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	long := strings.Repeat("x", 100) + "\n"
	appendRaw(t, path, "a\nb\nc\n"+long+"d\n")
	f := NewFollower(path, 0)
	f.MaxBatch = 4
	var got []string
	for i := 0; i < 10; i++ {
		b := readBatch(t, f)
		if len(b.Data) > 0 {
			got = append(got, string(b.Data))
		}
		if !b.More {
			break
		}
	}
	if strings.Join(got, "") != "a\nb\nc\n"+long+"d\n" {
		t.Fatalf("batches %q", got)
	}
	for _, g := range got {
		if len(g) > 4 && strings.Count(g, "\n") > 1 {
			t.Fatalf("a batch over MaxBatch holds more than one line: %q", g)
		}
	}
}

// TestWatchWakesAFollower: a real append to a real log signals the watcher
// and the follower then reads the entry.
func TestWatchWakesAFollower(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	w, err := Watch(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := NewFollower(path, 0)
	if _, err := l.Append(Entry{Event: EventSubmitted, TaskID: "t-1"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C():
	case <-time.After(10 * time.Second):
		t.Fatal("no wake after an append")
	}
	b := readBatch(t, f)
	ls := b.Lines()
	if len(ls) != 1 || ls[0].Err != nil || ls[0].Entry.TaskID != "t-1" {
		t.Fatalf("lines %+v", ls)
	}
}
