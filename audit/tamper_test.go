package audit

import (
	"bytes"
	"os"
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

// TestTamperFlipEveryByte flips each byte of a 20-entry log with three masks
// (low bit, ASCII case, all bits) and expects Verify to name the line holding
// the byte. A flipped newline may be reported at the line it ends.
func TestTamperFlipEveryByte(t *testing.T) {
	path := newLog(t, matrixSize)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lineOf := make([]int64, len(orig))
	var ln int64
	for i, b := range orig {
		lineOf[i] = ln
		if b == '\n' {
			ln++
		}
	}
	reasons := map[string]int{}
	for _, mask := range []byte{0x01, 0x20, 0xff} {
		for i := range orig {
			data := bytes.Clone(orig)
			data[i] ^= mask
			writeFile(t, path, data)
			rep := mustVerify(t, path)
			if rep.OK {
				t.Fatalf("byte %d ^ %#x (%q→%q) not detected", i, mask, orig[i], data[i])
			}
			if rep.Index != lineOf[i] {
				t.Fatalf("byte %d ^ %#x (%q→%q) on line %d reported at #%d: %s", i, mask, orig[i], data[i], lineOf[i], rep.Index, rep)
			}
			switch rep.Reason {
			case ReasonEdited, ReasonGarbage:
			case ReasonTruncated: // only the file's final newline
				if i != len(orig)-1 {
					t.Fatalf("byte %d: reason truncated mid-file: %s", i, rep)
				}
			default:
				t.Fatalf("byte %d ^ %#x: unexpected reason: %s", i, mask, rep)
			}
			reasons[rep.Reason]++
		}
	}
	t.Logf("%d flips, reasons %v", 3*len(orig), reasons)
	if reasons[ReasonEdited] == 0 || reasons[ReasonGarbage] == 0 {
		t.Fatalf("expected both edited and garbage among the reasons: %v", reasons)
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
