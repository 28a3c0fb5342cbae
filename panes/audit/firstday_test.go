package auditpane

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/themes"
)

func TestShortTime(t *testing.T) {
	now := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	for _, c := range []struct{ logged, want string }{
		{"2026-11-28T09:01:02Z", "09:01:02"},
		{"2026-11-28T09:01:02.123456789Z", "09:01:02"}, // no nanoseconds
		{"2026-11-22T09:01:02Z", "11-22 09:01:02"},
		{"2026-11-28T23:30:00-02:00", "11-29 01:30:00"}, // read in now's zone
		{"2025-11-28T09:01:02Z", "2025-11-28"},
		{"…", "…"},
		{"not a time", "not a time"},
	} {
		if got := shortTime(c.logged, now); got != c.want {
			t.Errorf("shortTime(%q) = %q, want %q", c.logged, got, c.want)
		}
	}
}

// logOf writes entries by these actors, a minute apart from 09:01 today.
func logOf(t *testing.T, actors ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	i := 0
	l, err := audit.Open(path, func() time.Time { i++; return t0.Add(time.Duration(i) * time.Minute) })
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range actors {
		if _, err := l.Append(audit.Entry{Actor: a, Event: audit.EventSubmitted, TaskID: "task-001", Target: "living-room", Success: true}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// At 80 columns the actors stay whole: the TIME column is today's time
// alone, not a full RFC 3339 stamp taking a quarter of the width.
func TestAuditAt80KeepsActorsReadable(t *testing.T) {
	path := logOf(t, "operator:ada", "agent:planner", "agent:indexer")
	pal, _ := themes.Palettes("dark")
	p := New(path, themes.New(pal))
	defer p.Close()
	p.LoadSync()
	view := ansi.Strip(p.View(80, 12))
	for _, want := range []string{"09:01:00 ", " operator:ada ", " agent:planner ", " agent:indexer "} {
		if !strings.Contains(view, want) {
			t.Errorf("80 columns: %q missing:\n%s", want, view)
		}
	}
	if strings.Contains(view, "2026-") {
		t.Errorf("today's rows carry the date:\n%s", view)
	}
	if !strings.Contains(view, "chain verified · 3 entries") {
		t.Errorf("badge:\n%s", view)
	}
}

// A broken chain's badge says what to run next.
func TestBrokenBadgeNamesSeal(t *testing.T) {
	path := logOf(t, "a", "b", "c")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(raw, []byte("\n"))
	lines[1] = bytes.Replace(lines[1], []byte(`"actor":"b"`), []byte(`"actor":"x"`), 1)
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	pal, _ := themes.Palettes("dark")
	p := New(path, themes.New(pal))
	defer p.Close()
	p.LoadSync()
	view := ansi.Strip(p.View(120, 12))
	if !strings.Contains(view, "✗ BROKEN") || !strings.Contains(view, "vigil audit seal") {
		t.Fatalf("a broken chain does not name vigil audit seal:\n%s", view)
	}
}
