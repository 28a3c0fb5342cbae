package audit

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fullQuery is what ScanQuery must return: every line parsed, filtered on
// the entry.
func fullQuery(t *testing.T, path string, q Query) []Line {
	t.Helper()
	var out []Line
	if _, err := Scan(path, 0, func(l Line) bool {
		if l.Err == nil && q.Match(l.Entry) {
			out = append(out, l)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func queryLines(t *testing.T, path string, q Query) []Line {
	t.Helper()
	var out []Line
	if _, err := ScanQuery(context.Background(), path, 0, q, func(l Line) bool {
		out = append(out, l)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScanQueryAgreesWithFullParse: the needle path selects exactly the
// entries a full parse does, on values with escaped quotes, unicode, text
// that spells another field's key, and a needle inside details (entry of
// task-8 whose details hold "task_id":"task-7").
func TestScanQueryAgreesWithFullParse(t *testing.T) {
	path := trickyLog(t)
	queries := []Query{
		{TaskID: "task-7"}, {TaskID: `task-"7"`}, {TaskID: "task-7x"}, {TaskID: `","task_id":"task-7`},
		{TaskID: "task-8"}, {TaskID: "task-000"}, {TaskID: "task-002"}, {TaskID: "nope"}, {TaskID: "task"},
		{Event: EventApproved}, {Event: EventSubmitted}, {Event: "sub"}, {TaskID: "task-7", Event: EventApproved},
		{TaskID: "task-7", Event: EventDenied}, {},
	}
	nonEmpty := 0
	for _, q := range queries {
		want, got := fullQuery(t, path, q), queryLines(t, path, q)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v:\nneedle %+v\nfull   %+v", q, got, want)
		}
		if len(want) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 8 {
		t.Fatalf("only %d queries selected anything: the test proves little", nonEmpty)
	}
	// the details of task-8's entry hold the task-7 needle: it is a candidate, not a match
	data, _ := os.ReadFile(path)
	if bytes.Count(data, fieldNeedle("task_id", "task-7")) != 2 || len(queryLines(t, path, Query{TaskID: "task-7"})) != 1 {
		t.Fatal("the log no longer has the needle inside another entry's details")
	}
}

// TestScanQueryNamesBadLinesHoldingTheNeedle: a damaged line that holds the
// needle is yielded with its error, offsets stay exact, and a line longer
// than a read chunk is found whole.
func TestScanQueryNamesBadLinesHoldingTheNeedle(t *testing.T) {
	path := newLog(t, 4)
	l, _ := Open(path, stepClock())
	big := Entry{Actor: "a", Event: EventDemo, TaskID: "task-big",
		Details: Details(map[string]any{"blob": strings.Repeat("x", 3*chunkSize)})}
	if _, err := l.Append(big); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(sampleEntry(9)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	bad := []byte(`{"seq":99,"task_id":"task-big","junk` + "\n")
	data = append(data, bad...)
	writeFile(t, path, data)
	got := queryLines(t, path, Query{TaskID: "task-big"})
	if len(got) != 2 || got[0].Err != nil || got[0].Entry.TaskID != "task-big" || got[1].Err == nil {
		t.Fatalf("got %d lines: %+v", len(got), got)
	}
	if want := int64(len(data) - len(bad)); got[1].Offset != want {
		t.Fatalf("bad line at %d, want %d", got[1].Offset, want)
	}
	if !bytes.HasPrefix(data[got[0].Offset:], []byte(`{"seq":4,`)) {
		t.Fatalf("big entry's offset %d is not its line's start", got[0].Offset)
	}
	// with no filter every line comes back, the bad one included
	var all []Line
	ScanContext(context.Background(), path, 0, nil, func(l Line) bool { all = append(all, l); return true })
	if len(all) != 7 || all[6].Err == nil {
		t.Fatalf("ScanContext(nil) gave %d lines", len(all))
	}
}

// TestFinderIsBytesIndex: the rarest-byte search finds what bytes.Index finds.
func TestFinderIsBytesIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	alpha := []byte(`"ab:_x`)
	for n := 0; n < 20000; n++ {
		s := make([]byte, rng.IntN(80))
		for i := range s {
			s[i] = alpha[rng.IntN(len(alpha))]
		}
		needle := make([]byte, 1+rng.IntN(5))
		for i := range needle {
			needle[i] = alpha[rng.IntN(len(alpha))]
		}
		f := newFinder(needle, s)
		if got, want := f.index(s), bytes.Index(s, needle); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d (rare %d)", s, needle, got, want, f.rare)
		}
	}
}

// TestScanContextStopsWhenCancelled: a cancelled context ends the pass with
// its error, well before the end of the file.
func TestScanContextStopsWhenCancelled(t *testing.T) {
	path := writeBigLog(t, 20000)
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	end, err := ScanContext(ctx, path, 0, nil, func(l Line) bool {
		if seen++; seen == 10 {
			cancel()
		}
		return true
	})
	st, _ := os.Stat(path)
	if !errors.Is(err, context.Canceled) || end >= st.Size() || seen > 10+chunkSize/400 {
		t.Fatalf("err %v, stopped at %d of %d after %d lines", err, end, st.Size(), seen)
	}
}

// TestSearcherCancelsTheOldPass: a new Start cancels the pass before it and
// returns only once that pass has stopped, so an old filter never yields
// after a new one began and only one pass runs at a time.
func TestSearcherCancelsTheOldPass(t *testing.T) {
	path := writeBigLog(t, 20000)
	var s Searcher
	var oldYields atomic.Int64
	started := make(chan struct{})
	first := s.Start(context.Background(), path, 0, nil, func(Line) bool {
		if oldYields.Add(1) == 1 {
			close(started)
		}
		time.Sleep(time.Millisecond) // a slow consumer: the pass would take 20 s
		return true
	})
	<-started
	var running atomic.Int64
	q := Query{TaskID: "task-1234"}
	second := s.Start(context.Background(), path, 0, q.Bytes(), func(l Line) bool {
		running.Add(1)
		return true
	})
	after := oldYields.Load()
	res := <-first
	if !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("old pass ended with %v, want context.Canceled", res.Err)
	}
	if res2 := <-second; res2.Err != nil || running.Load() != 1 {
		t.Fatalf("new pass: %v, %d lines (want 1)", res2.Err, running.Load())
	}
	if oldYields.Load() != after || after >= 20000 {
		t.Fatalf("old pass yielded %d lines, %d after the new Start", after, oldYields.Load()-after)
	}
	s.Stop() // nothing running: a no-op
}

// TestScanRawIndexesAndReadLinesAtReadsBack: the offsets ScanRaw gives are
// where ReadLinesAt finds the same entries a full Scan parses, long line
// included; an offset past the end is an error.
func TestScanRawIndexesAndReadLinesAtReadsBack(t *testing.T) {
	path := trickyLog(t)
	l, _ := Open(path, stepClock())
	if _, err := l.Append(Entry{Actor: "a", Event: EventDemo, Details: Details(map[string]any{"blob": strings.Repeat("y", 10000)})}); err != nil {
		t.Fatal(err)
	}
	var offsets []int64
	end, err := ScanRaw(context.Background(), path, 0, func(off int64, line []byte) bool {
		offsets = append(offsets, off)
		return true
	})
	st, _ := os.Stat(path)
	if err != nil || end != st.Size() {
		t.Fatalf("ScanRaw ended at %d of %d: %v", end, st.Size(), err)
	}
	var want []Line
	Scan(path, 0, func(l Line) bool { want = append(want, l); return true })
	got, err := ReadLinesAt(path, offsets)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadLinesAt: %v\n%+v\n%+v", err, got, want)
	}
	// a viewer's page: a few rows, in any order
	page, err := ReadLinesAt(path, []int64{offsets[len(offsets)-1], offsets[2]})
	if err != nil || page[0].Entry.Event != EventDemo || page[1].Entry.Seq != 2 {
		t.Fatalf("page: %v %+v", err, page)
	}
	if _, err := ReadLinesAt(path, []int64{st.Size()}); err == nil {
		t.Fatal("an offset at the end read a line")
	}
}
