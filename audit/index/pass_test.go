package index

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index/indextest"
)

// bigLog is a log of n entries larger than one pass chunk, and its index.
func bigLog(t *testing.T, n int) (string, Span) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, n)
	sc := Scan(context.Background(), path, 0, nil, nil, -1)
	if sc.Err != nil || sc.End <= passChunk {
		t.Fatalf("index: %v, %d bytes: too small for a pass of several chunks", sc.Err, sc.End)
	}
	return path, Span{Offs: sc.Offs, End: sc.End}
}

// drain takes a pass's batches until its last and returns the matches.
func drain(t *testing.T, fp *Pass) ([]int, error) {
	t.Helper()
	var out []int
	for {
		b, ok := fp.Next()
		if !ok {
			t.Fatal("the pass was cancelled")
		}
		out = append(out, b.Matches...)
		if b.Done {
			return out, b.Err
		}
	}
}

// TestNewPassCancelsThePassBefore: a pass started while another runs
// cancels it — its goroutine returns having judged part of the log, its
// results are never delivered — and the new pass starts judging only once
// the old one has stopped: one pass at a time. The old pass is held after
// its first chunk by a hook, so the test does not depend on timing.
func TestNewPassCancelsThePassBefore(t *testing.T) {
	path, lines := bigLog(t, 40000)
	total := int64(len(lines.Offs))
	type event struct {
		fp       *Pass
		oldEnded bool
	}
	var first atomic.Pointer[Pass] // set before any pass but the first runs
	var held atomic.Bool
	seen := make(chan event, 64)
	release := make(chan struct{})
	passHook = func(fp *Pass) {
		ev := event{fp: fp}
		if !held.Swap(true) { // the first pass's first chunk: hold it there
			seen <- ev
			<-release
			return
		}
		select {
		case <-first.Load().Done():
			ev.oldEnded = true
		default:
		}
		seen <- ev
	}
	defer func() { passHook = nil }()

	ctx := context.Background()
	f := Filter{Text: "task-0000123"}
	fp := StartPass(ctx, nil, path, lines, 0, len(lines.Offs), f, nil)
	first.Store(fp)
	if ev := <-seen; ev.fp != fp {
		t.Fatal("an unexpected pass ran")
	}
	second := StartPass(ctx, fp, path, lines, 0, len(lines.Offs), f, nil)
	close(release)
	select {
	case <-fp.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled pass never returned")
	}
	stopped := fp.Scanned()
	if stopped <= 0 || stopped >= total {
		t.Fatalf("the cancelled pass judged %d lines of %d", stopped, total)
	}
	// a batch may have been queued before the cancel; none is the last
	for b, ok := fp.Next(); ok; b, ok = fp.Next() {
		if b.Done {
			t.Fatal("a cancelled pass delivered its last batch")
		}
	}
	matches, err := drain(t, second)
	if err != nil || len(matches) != 4 || second.Scanned() != total {
		t.Fatalf("the new pass: %v matches, %d of %d lines judged, err %v", matches, second.Scanned(), total, err)
	}
	if got := fp.Scanned(); got != stopped {
		t.Fatalf("the cancelled pass went on judging: %d then %d lines", stopped, got)
	}
	close(seen)
	for ev := range seen {
		if ev.fp != fp && !ev.oldEnded {
			t.Fatal("a pass judged while the cancelled one still ran")
		}
	}
}

// TestPassEndsWithItsContext: a pass started under a context that ends stops
// (Done closes) without anyone calling Cancel: a viewer that closes stops
// its passes by its context.
func TestPassEndsWithItsContext(t *testing.T) {
	path, lines := bigLog(t, 40000)
	ctx, cancel := context.WithCancel(context.Background())
	fp := StartPass(ctx, nil, path, lines, 0, len(lines.Offs), Filter{Text: "zzz"}, nil)
	cancel()
	select {
	case <-fp.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the pass outlived its context")
	}
}

// TestPassOnAShrunkLog: a log cut short under the index ends the pass with
// the short read, after the matches before the cut; no line is judged from
// bytes the file no longer has.
func TestPassOnAShrunkLog(t *testing.T) {
	path, lines := bigLog(t, 40000)
	if err := os.Truncate(path, lines.End/2); err != nil {
		t.Fatal(err)
	}
	fp := StartPass(context.Background(), nil, path, lines, 0, len(lines.Offs), Filter{Text: "task-0000123"}, nil)
	matches, err := drain(t, fp)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(matches) != 4 || matches[0] != 492 {
		t.Fatalf("matches %v, err %v; want the 4 lines before the cut and the short read", matches, err)
	}
}

// TestFilterAgreesWithQuery: where the pane's filter and `vigil audit show`
// share a question — an entry's exact event or task — they give the same
// answer, for valid entries with plain values (the values a viewer's event
// cycle offers). They differ on damaged lines (the pane shows them as the
// damaged row; the CLI names them on stderr) and on values with control or
// invisible characters (the pane compares the shown text).
func TestFilterAgreesWithQuery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, 40)
	queries := []audit.Query{{Event: "submitted"}, {Event: "denied"}, {TaskID: "task-0000003"},
		{TaskID: "task-0000003", Event: "approved"}, {Event: "nope"}, {TaskID: "TASK-0000003"}}
	n := 0
	audit.Scan(path, 0, func(l audit.Line) bool {
		n++
		for _, q := range queries {
			if got, want := (Filter{Query: q}).Keeps(NewRow(l.Entry, l.Err != nil)), q.Match(l.Entry); got != want {
				t.Errorf("query %+v, entry %+v: filter keeps %v, audit.Query %v", q, l.Entry, got, want)
			}
		}
		return true
	})
	if n != 40 {
		t.Fatalf("read %d entries", n)
	}
}
