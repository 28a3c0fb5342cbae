package ui_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/panes"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// fixedClock returns times one minute apart from a fixed start.
func fixedClock() func() time.Time {
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	n := 0
	return func() time.Time { n++; return t0.Add(time.Duration(n) * time.Minute) }
}

func writeLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path, fixedClock())
	if err != nil {
		t.Fatal(err)
	}
	entries := []audit.Entry{
		{Actor: "agent:planner", Event: audit.EventSubmitted, TaskID: "task-001", Capability: "MEDIA_PLAY", Target: "living-room", Success: true},
		{Actor: "operator:ada", Event: audit.EventApproved, TaskID: "task-001", Capability: "MEDIA_PLAY", Target: "living-room", Success: true,
			Details: audit.Details(map[string]any{"preview_hash": "9f2c"})},
		{Actor: "vigil", Event: audit.EventExecuted, TaskID: "task-001", Capability: "MEDIA_PLAY", Target: "living-room", Success: true,
			ContentHashBefore: "aa11", ContentHashAfter: "bb22"},
		{Actor: "agent:planner", Event: audit.EventSubmitted, TaskID: "task-002", Capability: "MEDIA_SEEK", Target: "kitchen", Success: true},
		{Actor: "operator:ada", Event: audit.EventDenied, TaskID: "task-002", Capability: "MEDIA_SEEK", Target: "kitchen", ErrorCode: "APPROVAL_DENIED",
			Details: audit.Details(map[string]any{"reason": "not now"})},
		{Actor: "agent:indexer", Event: audit.EventSearched, TaskID: "task-003", Capability: "SEARCH_EMAILS", Target: "mail", Success: true},
		{Actor: "agent:planner", Event: audit.EventRejected, TaskID: "task-004", Capability: "MEDIA_STOP", Target: "garage", ErrorCode: "INVALID_LEASE"},
	}
	for _, e := range entries {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func newModel(t *testing.T, path string) (*ui.Model, *auditpane.Pane) {
	p, _ := themes.Palettes("dark")
	ap := auditpane.New(path, themes.New(p))
	// "today" is the log's day: its rows show the time alone
	ap.SetClock(func() time.Time { return time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC) })
	t.Cleanup(ap.Close)
	return ui.New(ui.Options{Panes: []panes.Pane{ap}, Theme: "dark", JobControl: func() bool { return true }}), ap
}

// run drives the real program at 100×30 with the Ascii profile, types keys,
// waits for a marker on screen, and returns the final screen content.
func run(t *testing.T, w, h int, keys []tea.Msg, marker string) string {
	t.Helper()
	m, _ := newModel(t, writeLog(t))
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	ready := "chain verified"
	if w < ui.MinWidth || h < ui.MinHeight {
		ready = "too small"
	}
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(ready)) },
		teatest.WithDuration(10*time.Second))
	for _, k := range keys {
		tm.Send(k)
	}
	if marker != "" {
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(marker)) },
			teatest.WithDuration(10*time.Second))
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
	// the screen's text, as the Ascii profile shows it
	return ansi.Strip(final.Render())
}

func key(s string) tea.Msg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func TestGoldenAuditPane(t *testing.T) {
	out := run(t, 100, 30, nil, "")
	if !strings.Contains(out, "chain verified · 7 entries") {
		t.Fatalf("badge missing:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenHelpOverlay(t *testing.T) {
	out := run(t, 100, 30, []tea.Msg{key("?")}, "press any key")
	if !strings.Contains(out, "fuzzy") && !strings.Contains(out, "filter") {
		t.Fatalf("help lacks the pane's keys:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenDetailView(t *testing.T) {
	// select the approval (entry #1) and open it
	keys := []tea.Msg{key("g"), key("j"), key("enter")}
	out := run(t, 100, 30, keys, "preview_hash")
	for _, want := range []string{"Entry #1", "operator:ada", "content_hash_before", "preview_hash"} {
		if !strings.Contains(out, want) {
			t.Fatalf("detail lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

func TestGoldenFilteredView(t *testing.T) {
	keys := []tea.Msg{key("/"), key("d"), key("e"), key("n"), key("enter")}
	out := run(t, 100, 30, keys, "") // typed keys are handled in order before the quit
	if strings.Contains(out, "searched") || !strings.Contains(out, "denied") {
		t.Fatalf("filter did not narrow to denied:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenTooSmall(t *testing.T) {
	out := run(t, 30, 8, nil, "")
	if !strings.HasPrefix(out, "terminal too small") || strings.Contains(out, "\n") {
		t.Fatalf("want a one-line notice, got %q", out)
	}
	golden.RequireEqual(t, out)
}

// TestSizeSweep renders every size from 1×1 to 200×60: no panic, and every
// full-screen frame is exactly the terminal's height with no line too wide.
func TestSizeSweep(t *testing.T) {
	m, ap := newModel(t, writeLog(t))
	m.Init()
	// load synchronously: the tail and full-load commands return messages
	for _, msg := range loadMsgs(ap) {
		m.Update(msg)
	}
	for w := 1; w <= 200; w++ {
		for h := 1; h <= 60; h++ {
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			out := m.Render()
			lines := strings.Split(out, "\n")
			if w >= ui.MinWidth && h >= ui.MinHeight && len(lines) != h {
				t.Fatalf("%d×%d: %d lines", w, h, len(lines))
			}
			for i, l := range lines {
				if lw := lipglossWidth(l); lw > w {
					t.Fatalf("%d×%d: line %d is %d wide: %q", w, h, i, lw, l)
				}
			}
		}
	}
}

func TestKeyRouting(t *testing.T) {
	m, ap := newModel(t, writeLog(t))
	for _, msg := range loadMsgs(ap) {
		m.Update(msg)
	}
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	// "/" opens the filter: q is then typed, not a quit
	m.Update(key("/"))
	if !ap.Capturing() {
		t.Fatal("filter did not take the keyboard")
	}
	if _, cmd := m.Update(key("q")); cmd != nil {
		if _, ok := cmd().(tea.QuitMsg); ok {
			t.Fatal("q quit while typing into the filter")
		}
	}
	// ctrl+c always quits
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if cmd == nil {
		t.Fatal("ctrl+c returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c did not quit")
	}
	m.Update(key("esc"))
	_, cmd = m.Update(key("q"))
	if cmd == nil {
		t.Fatal("q outside inputs returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q outside inputs did not quit")
	}
}

// loadMsgs runs the pane's full load synchronously.
func loadMsgs(ap *auditpane.Pane) []tea.Msg {
	ap.LoadSync()
	return nil
}

func lipglossWidth(s string) int { return lipgloss.Width(s) }

type busyPane struct {
	panes.Pane
	busy bool
}

func (b busyPane) Busy() bool { return b.busy }

func TestQuitAsksTwiceWhileAnActionRuns(t *testing.T) {
	_, ap := newModel(t, writeLog(t))
	m := ui.New(ui.Options{Panes: []panes.Pane{busyPane{Pane: ap, busy: true}}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 20})
	if _, cmd := m.Update(key("q")); cmd != nil {
		t.Fatal("the first q quit while an action ran")
	}
	if !strings.Contains(m.Render(), "press q again") {
		t.Fatal("no warning shown")
	}
	_, cmd := m.Update(key("q"))
	if cmd == nil {
		t.Fatal("the second q did not quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("the second q did not quit")
	}
}
