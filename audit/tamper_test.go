package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

const matrixSize = 20

func TestFreshLogVerifies(t *testing.T) {
	path := newLog(t, matrixSize)
	rep := mustVerify(t, path)
	if !rep.OK || rep.Entries != matrixSize {
		t.Fatalf("fresh log: %+v", rep)
	}
	if got, want := rep.String(), "chain verified · 20 entries"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	lines := readLines(t, path)
	if len(lines) != matrixSize {
		t.Fatalf("%d lines", len(lines))
	}
	prev := Genesis
	for i, l := range lines {
		e, err := parseLine(bytes.TrimSuffix(l, []byte("\n")))
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if e.Seq != int64(i) || e.Prev != prev {
			t.Fatalf("line %d: seq %d prev %s", i, e.Seq, e.Prev)
		}
		if e.Time != "2026-03-14T15:09:"+twoDigits(27+i)+"Z" {
			t.Fatalf("line %d: time %s does not come from the injected clock", i, e.Time)
		}
		prev = e.Hash
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }

// TestTamperFlipEveryByte flips each byte of a 20-entry log, one at a time,
// with two masks: the low bit (keeps most JSON valid, so the hash and prev
// checks must catch it) and all bits (breaks UTF-8 and syntax). Verify must
// name the line holding the byte; a flipped newline may be reported at the
// line it ends. Lines run as parallel subtests on copies of the log.
func TestTamperFlipEveryByte(t *testing.T) {
	// I/O-bound and CPU-bound: the two slow tests overlap
	t.Parallel()
	path := newLog(t, matrixSize)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	headBytes, err := os.ReadFile(HeadPath(path))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reasons := map[string]int{}
	t.Cleanup(func() {
		t.Logf("%d flips, reasons %v", 2*len(orig), reasons)
		if !t.Failed() && (reasons[ReasonEdited] == 0 || reasons[ReasonGarbage] == 0 || reasons[ReasonTruncated] == 0) {
			t.Errorf("expected edited, garbage and truncated among the reasons: %v", reasons)
		}
	})
	start := 0
	for line := 0; line < matrixSize; line++ {
		end := start + bytes.IndexByte(orig[start:], '\n') + 1
		from, to := start, end
		start = end
		t.Run(fmt.Sprintf("line%02d", line), func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "audit.log")
			writeFile(t, p, orig)
			writeFile(t, HeadPath(p), headBytes)
			// flip in place and restore: rewriting the whole file would
			// truncate it, and ext4 flushes truncated-then-rewritten files
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			local := map[string]int{}
			for _, mask := range []byte{0x01, 0xff} {
				for i := from; i < to; i++ {
					if _, err := f.WriteAt([]byte{orig[i] ^ mask}, int64(i)); err != nil {
						t.Fatal(err)
					}
					rep := mustVerify(t, p)
					if _, err := f.WriteAt(orig[i:i+1], int64(i)); err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("byte %d ^ %#x (%q→%q) on line %d", i, mask, orig[i], orig[i]^mask, line)
					switch {
					case rep.OK:
						t.Fatalf("%s not detected", what)
					case rep.Index != int64(line):
						t.Fatalf("%s reported at #%d: %s", what, rep.Index, rep)
					case rep.Reason == ReasonEdited, rep.Reason == ReasonGarbage:
					case rep.Reason == ReasonTruncated && i == len(orig)-1: // the file's final newline
					default:
						t.Fatalf("%s: unexpected reason: %s", what, rep)
					}
					local[rep.Reason]++
				}
			}
			mu.Lock()
			for k, v := range local {
				reasons[k] += v
			}
			mu.Unlock()
		})
	}
}

func TestTamperDeleteEachLine(t *testing.T) {
	path := newLog(t, matrixSize)
	lines := readLines(t, path)
	for i := range lines {
		writeFile(t, path, bytes.Join(append(append([][]byte{}, lines[:i]...), lines[i+1:]...), nil))
		rep := mustVerify(t, path)
		if rep.OK || rep.Index != int64(i) || rep.Reason != ReasonDeleted {
			t.Fatalf("delete line %d: got %s (%+v)", i, rep, rep)
		}
	}
}

func TestTamperDeleteWholeLog(t *testing.T) {
	path := newLog(t, matrixSize)
	writeFile(t, path, nil)
	if rep := mustVerify(t, path); rep.OK || rep.Index != 0 || rep.Reason != ReasonDeleted {
		t.Fatalf("emptied log: %s", rep)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, path); rep.OK || rep.Index != 0 || rep.Reason != ReasonDeleted {
		t.Fatalf("removed log with a head left: %s", rep)
	}
}

func TestTamperDuplicateLine(t *testing.T) {
	path := newLog(t, matrixSize)
	lines := readLines(t, path)
	for _, i := range []int{0, 7, matrixSize - 1} {
		var out [][]byte
		out = append(out, lines[:i+1]...)
		out = append(out, lines[i])
		out = append(out, lines[i+1:]...)
		writeFile(t, path, bytes.Join(out, nil))
		rep := mustVerify(t, path)
		if rep.OK || rep.Index != int64(i+1) || rep.Reason != ReasonDuplicated {
			t.Fatalf("duplicate line %d: got %s", i, rep)
		}
	}
}

func TestTamperSwapLines(t *testing.T) {
	path := newLog(t, matrixSize)
	lines := readLines(t, path)
	for _, p := range [][2]int{{0, 1}, {3, 4}, {2, 15}, {18, 19}, {0, 19}} {
		out := append([][]byte{}, lines...)
		out[p[0]], out[p[1]] = out[p[1]], out[p[0]]
		writeFile(t, path, bytes.Join(out, nil))
		rep := mustVerify(t, path)
		if rep.OK || rep.Index != int64(p[0]) || rep.Reason != ReasonReordered {
			t.Fatalf("swap %v: got %s", p, rep)
		}
	}
}

func TestTamperTruncateMidLine(t *testing.T) {
	path := newLog(t, matrixSize)
	orig, _ := os.ReadFile(path)
	lines := readLines(t, path)
	var off int
	for i, l := range lines {
		for _, cut := range []int{1, len(l) / 2, len(l) - 1} {
			writeFile(t, path, orig[:off+cut])
			rep := mustVerify(t, path)
			if rep.OK || rep.Index != int64(i) || rep.Reason != ReasonTruncated {
				t.Fatalf("truncate line %d after %d bytes: got %s", i, cut, rep)
			}
		}
		off += len(l)
	}
}

func TestTamperAppendGarbage(t *testing.T) {
	path := newLog(t, matrixSize)
	orig, _ := os.ReadFile(path)
	for _, g := range []string{"garbage\n", "garbage", "\n", `{"hello":"world"}` + "\n", "\x00\x00\x00\n", "[1,2,3]\n"} {
		writeFile(t, path, append(bytes.Clone(orig), g...))
		rep := mustVerify(t, path)
		if rep.OK || rep.Index != matrixSize || rep.Reason != ReasonGarbage {
			t.Fatalf("append %q: got %s", g, rep)
		}
	}
	// garbage in the middle is named at its own line
	lines := readLines(t, path)
	out := append(append(append([][]byte{}, lines[:5]...), []byte("not json\n")), lines[5:]...)
	writeFile(t, path, bytes.Join(out, nil))
	if rep := mustVerify(t, path); rep.Index != 5 || rep.Reason != ReasonGarbage {
		t.Fatalf("garbage at line 5: got %s", rep)
	}
}

// TestTamperHeadAnchor: the head anchors the chain's end; an edited head or a
// rewritten last entry that still chains is caught.
func TestTamperHeadAnchor(t *testing.T) {
	path := newLog(t, matrixSize)
	hb, _ := os.ReadFile(HeadPath(path))
	writeFile(t, HeadPath(path), bytes.Replace(hb, []byte(`"hash":"`), []byte(`"hash":"0`), 1))
	rep := mustVerify(t, path)
	if rep.OK || rep.Index != matrixSize-1 || rep.Reason != ReasonEdited {
		t.Fatalf("head hash edited: got %s", rep)
	}
}
