package search

import (
	"context"
	"testing"
)

// A search that finds nothing still reports the files it has scanned: a
// batch without events carries FilesScanned, so a screen shows progress
// rather than a blank "searching…".
func TestProgressWithoutMatches(t *testing.T) {
	var batches []Batch
	col := &collector{n: 5, emit: func(b Batch) { batches = append(batches, b) }, resp: Response{Errors: []FileError{}}}
	col.take(fileResult{pos: 7})
	col.flush()
	if len(batches) != 1 || len(batches[0].Events) != 0 || batches[0].FilesScanned != 7 {
		t.Fatalf("batches %+v, want one progress batch of 7 files", batches)
	}
	col.flush() // nothing scanned since: no batch
	if len(batches) != 1 {
		t.Fatalf("an empty flush emitted: %+v", batches)
	}
	if _, err := col.finish(context.Background(), effective{}); err != nil {
		t.Fatal(err)
	}
}
