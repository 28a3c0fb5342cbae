package index

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
)

func openLog(t *testing.T, n int) (string, *audit.Log) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := audit.Open(path, func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, n)
	return path, l
}

func appendN(t *testing.T, l *audit.Log, n int) {
	t.Helper()
	for range n {
		if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "t", Success: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadAppendedExtendsTheChain: after a verification, appends are read
// as lines for the chain (the mark extended by them); a log cut, replaced,
// or rewritten inside the verified bytes says Reload.
func TestReadAppendedExtendsTheChain(t *testing.T) {
	path, l := openLog(t, 10)
	v := Verify(context.Background(), path, nil, &atomic.Int64{})
	if v.Err != nil || v.Chain.Len() != 10 {
		t.Fatalf("verify: %v, %d entries", v.Err, v.Chain.Len())
	}
	c := NewCursor(path, v.End)
	appendN(t, l, 3)
	a := ReadAppended(c, v.Mark, 0, false)
	if a.Reload || a.Err != nil || len(a.Lines) != 3 || a.From != v.End {
		t.Fatalf("an append: reload %v, err %v, %d lines from %d", a.Reload, a.Err, len(a.Lines), a.From)
	}
	for _, line := range a.Lines {
		v.Chain.FeedParsed(line.Entry, line.Err)
	}
	if v.Chain.Bad() != nil || v.Chain.CheckAnchor(a.Anchor) != nil {
		t.Fatalf("the chain extended by the append: %v, anchor %v", v.Chain.Bad(), v.Chain.CheckAnchor(a.Anchor))
	}
	if a := ReadAppended(c, a.Mark, 0, false); a.Reload || len(a.Lines) != 0 {
		t.Fatalf("nothing new: reload %v, %d lines", a.Reload, len(a.Lines))
	}
	if a := ReadAppended(NewCursor(path, v.End), v.Mark, 1<<30, false); !a.Reload {
		t.Fatal("a small log was not verified whole")
	}

	// an entry rewritten in place before the end: no cut to a follower,
	// but not the bytes verified
	raw, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_WRONLY, 0)
	f.WriteAt([]byte("X"), int64(len(raw)/3))
	f.Close()
	appendN(t, l, 1)
	if a := ReadAppended(c, a.Mark, 0, false); !a.Reload {
		t.Fatal("a rewrite inside the verified bytes was taken for an append")
	}

	// cut: shorter than what was read
	c = NewCursor(path, int64(len(raw)))
	ReadAppended(c, v.Mark, 0, false)
	if err := os.Truncate(path, v.End); err != nil {
		t.Fatal(err)
	}
	if a := ReadAppended(c, v.Mark, 0, false); !a.Reload {
		t.Fatal("a cut log was taken for an append")
	}
}

// TestExtendIndexesWhatScanWould: the index extended batch by batch from a
// follower (batches bounded, More set while lines are left) ends as a scan
// of the whole log does, events included; a replaced log is ErrShrunk.
func TestExtendIndexesWhatScanWould(t *testing.T) {
	path, l := openLog(t, 5)
	first := Scan(context.Background(), path, 0, nil, nil, -1)
	c := NewCursor(path, first.End)
	c.f.MaxBatch = 700 // a few lines a batch
	appendN(t, l, 20)
	if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventDenied, TaskID: "t"}); err != nil {
		t.Fatal(err)
	}
	offs, end, events := first.Offs, first.End, first.Events
	seen := map[string]bool{}
	for _, e := range events {
		seen[e] = true
	}
	batches := 0
	for {
		x := Extend(c, seen, 1<<30)
		if x.Err != nil || x.From != end {
			t.Fatalf("extend from %d: %v (from %d)", end, x.Err, x.From)
		}
		offs, end, batches = append(offs, x.Offs...), x.End, batches+1
		for _, e := range x.Events {
			seen[e] = true
			events = append(events, e)
		}
		if !x.More {
			break
		}
	}
	whole := Scan(context.Background(), path, 0, nil, nil, -1)
	if batches < 3 || !reflect.DeepEqual(offs, whole.Offs) || end != whole.End || !reflect.DeepEqual(events, whole.Events) {
		t.Fatalf("%d batches: %d offsets to %d, events %v; scan: %d to %d, %v", batches, len(offs), end, events, len(whole.Offs), whole.End, whole.Events)
	}
	raw, _ := os.ReadFile(path)
	tmp := path + ".new"
	os.WriteFile(tmp, append(raw, raw[:len(raw)/2]...), 0o600)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if x := Extend(c, seen, -1); x.Err != ErrShrunk {
		t.Fatalf("a replaced log: %v, want ErrShrunk", x.Err)
	}
}
