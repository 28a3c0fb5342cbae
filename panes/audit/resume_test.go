package auditpane

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index"
	"github.com/vigil-dev/vigil/themes"
)

func loadedPane(t *testing.T, path string) *Pane {
	t.Helper()
	pal, _ := themes.Palettes("dark")
	p := New(path, themes.New(pal))
	p.smallLog = 0 // every change takes the incremental path
	p.LoadSync()
	return p
}

// TestRestartResumesFromTheVerifiedPrefix: a second start finds the record
// the first one left and checks the old entries by the prefix's hash alone;
// the badge is the same, and the chain goes on from the end.
func TestRestartResumesFromTheVerifiedPrefix(t *testing.T) {
	path, l := liveLog(t, 30)
	first := index.Verify(context.Background(), path, nil, &atomic.Int64{})
	if first.Err != nil || first.Chain.Bad() != nil || first.Anchor != nil || first.Chain.Len() != 30 {
		t.Fatalf("first verification: err %v, bad %v, anchor %v, %d entries", first.Err, first.Chain.Bad(), first.Anchor, first.Chain.Len())
	}
	if end, known := first.Mark.Base(); !known || end != first.End {
		t.Fatal("the mark did not take the verified prefix's hash from the record")
	}
	l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "after-restart", Success: true})
	v, err := audit.VerifyIncremental(context.Background(), path, audit.VerifiedPath(path), audit.VerifyOptions{}, nil)
	if err != nil || !v.OK || v.Resumed != first.End || v.Entries != 31 {
		t.Fatalf("the restart did not resume at %d: %+v, %v", first.End, v, err)
	}
	p := loadedPane(t, path)
	if got := p.Report(); !strings.Contains(got, "chain verified · 31 entries") {
		t.Fatalf("badge after restart: %q", got)
	}
	if got := p.ver.seen.First(); got == "" || got != first.First {
		t.Fatalf("entry #0's hash after a resumed verification: %q, want %q", got, first.First)
	}
}

// TestVerifiedPrefixCatchesARewriteInside: an entry rewritten in place
// inside the recorded prefix (same size, the log's end untouched) is found
// by the next start, at its row, as a full pass would find it.
func TestVerifiedPrefixCatchesARewriteInside(t *testing.T) {
	path, _ := liveLog(t, 30)
	if v := index.Verify(context.Background(), path, nil, &atomic.Int64{}); v.Chain.Bad() != nil || !knownBase(v.Mark) {
		t.Fatal("the first verification left no record")
	}
	editInPlace(t, path, 11)
	p := loadedPane(t, path)
	if got := p.Report(); !strings.Contains(got, "BROKEN at #11") {
		t.Fatalf("a rewrite inside the verified prefix: badge %q", got)
	}
}

// TestResumedMarkCatchesAnEditBeforeAnAppend: after a resumed start, an
// entry edited in place inside the verified bytes together with an append is
// not taken for a pure append (the mark compares the prefix's hash).
func TestResumedMarkCatchesAnEditBeforeAnAppend(t *testing.T) {
	path, l := liveLog(t, 30)
	index.Verify(context.Background(), path, nil, &atomic.Int64{})
	p := loadedPane(t, path) // resumed
	l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "one", Success: true})
	m := p.readMore()().(moreMsg)
	if m.Reload || len(m.Lines) != 1 {
		t.Fatalf("a pure append after a resumed start: reload %v, %d lines", m.Reload, len(m.Lines))
	}
	p.Update(m)
	editInPlace(t, path, 4)
	l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "two", Success: true})
	if m := p.readMore()().(moreMsg); !m.Reload {
		t.Fatal("an in-place edit inside the verified prefix was taken for an append")
	}
	p.LoadSync()
	if got := p.Report(); !strings.Contains(got, "BROKEN at #4") {
		t.Fatalf("after the reload: badge %q", got)
	}
}

func knownBase(m index.Mark) bool {
	_, known := m.Base()
	return known
}
