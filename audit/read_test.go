package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestReadTail(t *testing.T) {
	path := newLog(t, 20)
	data := mustRead(t, path)
	for _, n := range []int{1, 5, 19, 20, 50} {
		lines, start, err := ReadTail(path, n)
		if err != nil {
			t.Fatal(err)
		}
		want := min(n, 20)
		if len(lines) != want {
			t.Fatalf("ReadTail(%d): %d lines", n, len(lines))
		}
		for i, l := range lines {
			if l.Err != nil || l.Entry.Seq != int64(20-want+i) {
				t.Fatalf("ReadTail(%d)[%d]: seq %d err %v", n, i, l.Entry.Seq, l.Err)
			}
			if !bytes.HasPrefix(data[l.Offset:], []byte(`{"seq":`)) {
				t.Fatalf("offset %d is not a line start", l.Offset)
			}
		}
		if start != lines[0].Offset {
			t.Fatalf("start %d, first line at %d", start, lines[0].Offset)
		}
	}
	if lines, _, err := ReadTail(path, 0); err != nil || len(lines) != 0 {
		t.Fatalf("ReadTail(0): %v %v", lines, err)
	}
	if lines, _, err := ReadTail(path, -3); err != nil || len(lines) != 0 {
		t.Fatalf("ReadTail(-3): %v %v", lines, err)
	}
	if lines, _, err := ReadTail(filepath.Join(t.TempDir(), "none"), 10); err != nil || lines != nil {
		t.Fatalf("missing log: %v %v", lines, err)
	}
}

// TestReadTailAcrossChunks: lines longer than ReadTail's read chunk and many
// lines together still come back whole and in order.
func TestReadTailAcrossChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, _ := Open(path, stepClock())
	big := string(bytes.Repeat([]byte("x"), 300<<10))
	for i := 0; i < 4; i++ {
		e := sampleEntry(i)
		if i == 2 {
			e.Details = Details(map[string]any{"big": big})
		}
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	lines, _, err := ReadTail(path, 3)
	if err != nil || len(lines) != 3 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	for i, ln := range lines {
		if ln.Err != nil || ln.Entry.Seq != int64(i+1) {
			t.Fatalf("line %d: seq %d err %v", i, ln.Entry.Seq, ln.Err)
		}
	}
	if rep := mustVerify(t, path); !rep.OK {
		t.Fatalf("verify with a 300 KiB line: %s", rep)
	}
}

// TestReadHalfWrittenLine: a viewer reading while a writer is mid-line sees
// only complete lines, and the next read picks the line up once finished.
func TestReadHalfWrittenLine(t *testing.T) {
	path := newLog(t, 4)
	full := mustRead(t, path)
	lines := readLines(t, path)
	last := lines[3]
	half := full[:len(full)-len(last)/2]
	writeFile(t, path, half)

	tail, _, err := ReadTail(path, 10)
	if err != nil || len(tail) != 3 || tail[2].Entry.Seq != 2 {
		t.Fatalf("ReadTail on a half line: %d lines %v", len(tail), err)
	}
	got, next, err := ReadRange(path, 0, -1)
	if err != nil || len(got) != 3 {
		t.Fatalf("ReadRange: %d lines %v", len(got), err)
	}
	lineStart := int64(len(full) - len(last))
	if next != lineStart {
		t.Fatalf("ReadRange next = %d, want %d (the half line's start)", next, lineStart)
	}
	var seen []int64
	end, err := Scan(path, 0, func(l Line) bool { seen = append(seen, l.Entry.Seq); return true })
	if err != nil || len(seen) != 3 || end != lineStart {
		t.Fatalf("Scan: %v end %d err %v", seen, end, err)
	}

	// the writer finishes: reading on from next gives exactly the last line
	writeFile(t, path, full)
	got, next2, err := ReadRange(path, next, -1)
	if err != nil || len(got) != 1 || got[0].Entry.Seq != 3 || got[0].Offset != lineStart || next2 != int64(len(full)) {
		t.Fatalf("ReadRange after the write: %+v next %d err %v", got, next2, err)
	}
	if _, err := Scan(path, next, func(l Line) bool { seen = append(seen, l.Entry.Seq); return true }); err != nil || len(seen) != 4 || seen[3] != 3 {
		t.Fatalf("Scan after the write: %v %v", seen, err)
	}
}

func TestReadRangeBounds(t *testing.T) {
	path := newLog(t, 6)
	lines := readLines(t, path)
	off := func(i int) int64 {
		var n int64
		for _, l := range lines[:i] {
			n += int64(len(l))
		}
		return n
	}
	// [start of 2, middle of 4) holds lines 2 and 3 only
	got, next, err := ReadRange(path, off(2), off(4)+10)
	if err != nil || len(got) != 2 || got[0].Entry.Seq != 2 || got[1].Entry.Seq != 3 || next != off(4) {
		t.Fatalf("range: %d lines next %d err %v", len(got), next, err)
	}
	if got, next, err := ReadRange(path, off(6)+100, -1); err != nil || len(got) != 0 || next != off(6)+100 {
		t.Fatalf("past the end: %v %d %v", got, next, err)
	}
	// Scan stops when asked and says where to resume
	var seen []int64
	resume, err := Scan(path, 0, func(l Line) bool { seen = append(seen, l.Entry.Seq); return len(seen) < 2 })
	if err != nil || len(seen) != 2 || resume != off(2) {
		t.Fatalf("Scan stop: %v resume %d err %v", seen, resume, err)
	}
	// a bad line comes back with Err set, not dropped
	data := mustRead(t, path)
	writeFile(t, path, append(data, "oops\n"...))
	got, _, err = ReadRange(path, off(6), -1)
	if err != nil || len(got) != 1 || got[0].Err == nil {
		t.Fatalf("bad line: %+v %v", got, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
