package search

import (
	"context"
	"testing"
)

func events(typ string, n int) []Event {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{Type: typ, Path: "f", LineNumber: uint64(i + 1)}
	}
	return evs
}

// TestCollectorLookAhead checks the collector's stages: batches for emit,
// the +1 look-ahead that marks a truncated list (FR-LS-06a), and the exit
// code from the chunks' codes and stderr.
func TestCollectorLookAhead(t *testing.T) {
	var batches []Batch
	col := &collector{n: 5, emit: func(b Batch) { batches = append(batches, b) }, resp: Response{Errors: []FileError{}}}
	if !col.take(fileResult{pos: 1, events: events("context", 2)}) {
		t.Fatal("stopped below max_results")
	}
	col.flush()
	if !col.take(fileResult{pos: 2, err: &FileError{Path: "g", Error: "boom"}}) {
		t.Fatal("stopped on an error")
	}
	// 3 more fill max_results exactly; the 4th is the look-ahead.
	if col.take(fileResult{pos: 3, events: append(events("context", 3), events("match", 1)...), last: true, code: 1}) {
		t.Fatal("did not stop past max_results")
	}
	col.flush()
	col.joinMatches()
	resp, err := col.finish(context.Background(), effective{})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || resp.Count != 5 || len(resp.Matches) != 5 || resp.FilesScanned != 3 || len(resp.Errors) != 1 {
		t.Fatalf("truncated %v count %d matches %d scanned %d errors %d", resp.Truncated, resp.Count, len(resp.Matches),
			resp.FilesScanned, len(resp.Errors))
	}
	// The match seen only through the look-ahead still counts as a match,
	// and truncation alone means exit 0.
	if !col.anyMatch || *resp.ExitCode != 0 {
		t.Fatalf("anyMatch %v exit %d", col.anyMatch, *resp.ExitCode)
	}
	if len(batches) != 2 || batches[0].Offset != 0 || len(batches[0].Events) != 2 ||
		batches[1].Offset != 2 || len(batches[1].Events) != 3 || len(batches[1].Errors) != 1 || batches[1].FilesScanned != 3 {
		t.Fatalf("batches %+v", batches)
	}
}

func TestCollectorExitCode(t *testing.T) {
	for _, c := range []struct {
		name    string
		results []fileResult
		want    int
	}{
		{"nothing matched", []fileResult{{pos: 1, last: true, code: 1}}, 1},
		{"a match", []fileResult{{pos: 1, events: events("match", 1), last: true, code: 0}}, 0},
		{"context only", []fileResult{{pos: 1, events: events("context", 1), last: true, code: 1}}, 1},
		{"error code with stderr", []fileResult{{pos: 1, events: events("match", 1), last: true, code: 0},
			{pos: 2, last: true, code: 2, stderr: "rg: bad"}}, 2},
		{"error code without stderr", []fileResult{{pos: 1, last: true, code: 2}}, 1},
	} {
		col := &collector{n: 100, resp: Response{Errors: []FileError{}}}
		for _, fr := range c.results {
			col.take(fr)
		}
		col.joinMatches()
		resp, _ := col.finish(context.Background(), effective{})
		if *resp.ExitCode != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, *resp.ExitCode, c.want)
		}
	}
}

// TestChunkerGrows checks that chunks start at firstChunk files and grow
// by chunkGrowth once the backend's start-up is known to be light.
func TestChunkerGrows(t *testing.T) {
	p := &prepared{}
	p.startKnown.Store(true)
	ordered := make(chan *chunk, 16)
	work := make(chan *chunk, 16)
	k := &chunker{p: p, ctx: context.Background(), ordered: ordered, work: work, size: firstChunk}
	total := firstChunk + firstChunk*chunkGrowth + 7
	for i := range total {
		if !k.add(item{arg: "./f", pos: int64(i + 1)}) {
			t.Fatal("add refused")
		}
	}
	k.push()
	close(ordered)
	var sizes []int
	for c := range ordered {
		sizes = append(sizes, len(c.items))
		if <-work != c {
			t.Fatal("work order differs from the reading order")
		}
	}
	want := []int{firstChunk, firstChunk * chunkGrowth, 7}
	if len(sizes) != len(want) || sizes[0] != want[0] || sizes[1] != want[1] || sizes[2] != want[2] {
		t.Fatalf("chunk sizes %v, want %v", sizes, want)
	}
}
