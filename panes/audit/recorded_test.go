package auditpane

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/themes"
)

// TestCutStaysBrokenOnTheNextStart (issue 36, item 10): the screen finds a
// cut log whose head was rewritten to match (the real file truncated), and
// the next start — a new pane over the same home — is BROKEN too, not
// green: the verified prefix it recorded is not rewritten shorter.
func TestCutStaysBrokenOnTheNextStart(t *testing.T) {
	path, _ := liveLog(t, 20)
	m, tm := startHost(t, path)
	if rec := audit.LoadVerified(path); rec == nil || rec.Entries != 20 {
		t.Fatalf("the first start recorded %+v", rec)
	}
	cutWithHead(t, path, 12)
	m.waitScreen(t, "BROKEN", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #12") })
	tm.Quit()
	m.p.Close()
	if rec := audit.LoadVerified(path); rec == nil || rec.Entries != 20 {
		t.Fatalf("the record moved back: %+v", rec)
	}
	for start := 2; start <= 3; start++ {
		next := startBroken(t, path)
		next.waitScreen(t, "BROKEN on a new start", func(s string) bool {
			return strings.Contains(s, "✗ BROKEN at #12") && !strings.Contains(s, "chain verified")
		})
		if s := next.p.Report(); !strings.Contains(s, "20 verified before") {
			t.Fatalf("start %d: the badge does not say what proves the cut: %q", start, s)
		}
	}
}

// cutWithHead truncates the log file after keep entries and rewrites its
// head to match, so the log alone verifies.
func cutWithHead(t *testing.T, path string, keep int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	kept := bytes.Join(lines[:keep], nil)
	var last audit.Entry
	if err := json.Unmarshal(lines[keep-1], &last); err != nil {
		t.Fatal(err)
	}
	hb, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash, "size": len(kept)})
	if err := os.Truncate(path, int64(len(kept))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(audit.HeadPath(path), hb, 0o600); err != nil {
		t.Fatal(err)
	}
	if rep, err := audit.Verify(path); err != nil || !rep.OK {
		t.Fatalf("setup: the cut log alone should verify: %s %v", rep, err)
	}
}

// startBroken is startHost without waiting for a green badge.
func startBroken(t *testing.T, path string) *host {
	t.Helper()
	pal, _ := themes.Palettes("dark")
	m := &host{p: New(path, themes.New(pal))}
	t.Cleanup(m.p.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { tm.Quit() })
	return m
}

// TestCutAfterAppendsStaysBroken: the record holds what the last full
// verification saw (20 entries); the screen then verified appends live
// (25), and the log is cut to 22 with its head rewritten. The screen finds
// the cut from what it saw; the next start must find it too, though the
// record alone (20) would not prove it.
func TestCutAfterAppendsStaysBroken(t *testing.T) {
	largePath(t) // appends are verified as they come, not by a pass that records them
	path, l := liveLog(t, 20)
	m, tm := startHost(t, path)
	for i := 0; i < 5; i++ {
		if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventSearched, TaskID: "late", Target: "tv", Success: true}); err != nil {
			t.Fatal(err)
		}
	}
	m.waitScreen(t, "25 entries", func(s string) bool { return strings.Contains(s, "chain verified · 25 entries") })
	cutWithHead(t, path, 22)
	m.waitScreen(t, "BROKEN", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #22") })
	tm.Quit()
	m.p.Close()
	next := startBroken(t, path)
	next.waitScreen(t, "BROKEN on a new start", func(s string) bool {
		return strings.Contains(s, "✗ BROKEN at #22") && !strings.Contains(s, "chain verified")
	})
}

// A break the badge shows is told to SetOnBroken once (the TUI writes it to
// vigil.log), however often the pane repaints or re-verifies.
func TestBrokenIsToldOnce(t *testing.T) {
	path, _ := liveLog(t, 20)
	m, tm := startHost(t, path)
	cutWithHead(t, path, 12)
	m.waitScreen(t, "BROKEN", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #12") })
	tm.Quit()
	m.p.Close()

	pal, _ := themes.Palettes("dark")
	var mu sync.Mutex
	var got []string
	next := &host{p: New(path, themes.New(pal))}
	next.p.SetOnBroken(func(r *audit.Report) { mu.Lock(); got = append(got, r.String()); mu.Unlock() })
	t.Cleanup(next.p.Close)
	ntm := teatest.NewTestModel(t, next, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { ntm.Quit() })
	next.waitScreen(t, "BROKEN on a new start", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #12") })
	ntm.Send(tea.WindowSizeMsg{Width: 100, Height: 30}) // a repaint tells nothing new
	next.waitScreen(t, "the repaint", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #12") })
	ntm.Quit()
	next.p.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "12") {
		t.Fatalf("told %d times: %q", len(got), got)
	}
}
