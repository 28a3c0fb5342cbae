package auditpane

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index/indextest"
)

// TestFirstFrameComesFromTheTail: the first frame shows the log's last rows
// from the tail read alone — before the index and the verification, which
// start only once it has landed — and says the chain is being verified.
func TestFirstFrameComesFromTheTail(t *testing.T) {
	largePath(t)
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, 3000)
	p := New(path, benchStyles())
	defer p.Close()
	if cmd := p.Init(context.Background()); cmd == nil {
		t.Fatal("Init started nothing")
	}
	if p.table.indexing || p.ver.loading {
		t.Fatal("the full reads started before the first frame")
	}
	cmd := p.Update(p.readTail()())
	if !p.table.indexing || !p.ver.loading || cmd == nil {
		t.Fatal("the tail did not start the index and the verification")
	}
	frame := p.View(120, 30)
	for _, want := range []string{"verifying…", "task-0000749", "approval_denied"} {
		if !strings.Contains(frame, want) {
			t.Fatalf("the first frame lacks %q:\n%s", want, frame)
		}
	}
	if len(p.table.offs) != tailRows || p.ver.chain != nil {
		t.Fatalf("the first frame read %d lines", len(p.table.offs))
	}
	// the reads report progress; a stale read's report is ignored
	p.Update(progressMsg{kind: "verify", gen: p.ver.gen, done: 43, total: 100})
	p.Update(progressMsg{kind: "index", gen: p.table.gen, done: 1, total: 5})
	p.Update(progressMsg{kind: "verify", gen: p.ver.gen - 1, done: 99, total: 100})
	frame = ansi.Strip(p.View(120, 30))
	for _, want := range []string{"verifying… 43%", "indexing… 20%"} {
		if !strings.Contains(frame, want) {
			t.Fatalf("the frame lacks %q:\n%s", want, frame)
		}
	}
}

// TestLargeLogFollowsAndFiltersLive: on a log read from the file (not held in
// memory), the real program shows the chain verified, narrows to a typed
// task, and an entry for that task appended afterwards joins the filtered
// view, read from the new bytes alone.
func TestLargeLogFollowsAndFiltersLive(t *testing.T) {
	largePath(t) // the bytes read from the file, as a log above inMemoryLog is
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, 2000)
	m, tm := startHost(t, path) // the pane's state belongs to the program now: the test reads the screen
	for _, r := range "/task-0000123" {
		tm.Send(keyMsg(r))
	}
	m.waitScreen(t, "the filtered rows", func(s string) bool {
		s = ansi.Strip(s)
		return strings.Count(s, "task-0000123") == 5 && !strings.Contains(s, "filtering") // the rows and the query
	})
	l, err := audit.Open(path, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(audit.Entry{Actor: "agent:late", Event: audit.EventSubmitted, TaskID: "task-0000123", Success: true}); err != nil {
		t.Fatal(err)
	}
	m.waitScreen(t, "the appended row", func(s string) bool {
		s = ansi.Strip(s)
		return strings.Count(s, "task-0000123") == 6 && strings.Contains(s, "agent:late") && strings.Contains(s, "✓ chain verified · 2001 entries")
	})
}

func keyMsg(r rune) tea.Msg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

// TestCloseWaitsAndEndsTheWork: Close returns only once the pane's
// goroutines have, and a command that runs after it does nothing: no read,
// no verification writing the record beside the log.
func TestCloseWaitsAndEndsTheWork(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, 50)
	os.Remove(audit.VerifiedPath(path))
	p := New(path, benchStyles())
	p.Init(context.Background())
	tail := p.readTail()
	load := p.reload() // a verification and an index scan, not yet started
	p.Close()
	if msg := tail(); msg != nil {
		t.Fatalf("a read after Close delivered %T", msg)
	}
	runSync(p, load)
	if _, err := os.Stat(audit.VerifiedPath(path)); !os.IsNotExist(err) {
		t.Fatalf("a verification ran after Close: %v", err)
	}
}
