package auditpane

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/themes"
)

// host runs the pane as a program of its own and keeps the last frame where
// the test can read it without racing the program (the byte stream holds
// only the cells that changed, so it cannot be searched for a whole line).
// Each frame wakes the tests waiting for one: they wait for a screen, never
// for a time.
type host struct {
	p     *Pane
	w, h  int
	mu    sync.Mutex
	frame string
	next  chan struct{} // closed when the next frame is drawn
}

func (m *host) Init() tea.Cmd { return m.p.Init(context.Background()) }

func (m *host) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		m.w, m.h = ws.Width, ws.Height
	}
	return m, m.p.Update(msg)
}

func (m *host) View() tea.View {
	f := m.p.View(m.w, m.h)
	m.mu.Lock()
	m.frame = f
	if m.next != nil {
		close(m.next)
		m.next = nil
	}
	m.mu.Unlock()
	return tea.NewView(f)
}

// screen is the last frame, and a channel closed when the next is drawn.
func (m *host) screen() (string, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next == nil {
		m.next = make(chan struct{})
	}
	return m.frame, m.next
}

// hang is how long a wait goes without the screen it waits for before the
// test fails, rather than hang: a guard, not a budget (nothing is timed).
const hang = 30 * time.Second

// waitScreen waits, frame by frame, until cond holds of the screen.
func (m *host) waitScreen(t *testing.T, what string, cond func(string) bool) {
	t.Helper()
	guard := time.NewTimer(hang)
	defer guard.Stop()
	for {
		s, next := m.screen()
		if cond(s) {
			return
		}
		select {
		case <-next:
		case <-guard.C:
			t.Fatalf("no frame shows %s; screen:\n%s", what, s)
		}
	}
}

func liveLog(t *testing.T, n int) (string, *audit.Log) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	l, err := audit.Open(path, func() time.Time { i++; return t0.Add(time.Duration(i) * time.Second) })
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventSearched, TaskID: "t", Target: "tv", Success: true}); err != nil {
			t.Fatal(err)
		}
	}
	return path, l
}

func startHost(t *testing.T, path string) (*host, *teatest.TestModel) {
	t.Helper()
	pal, _ := themes.Palettes("dark")
	m := &host{p: New(path, themes.New(pal))}
	t.Cleanup(m.p.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { tm.Quit() })
	waitPane(t, m.p, "the first load", func(s Snapshot) bool {
		return s.Indexed && strings.HasPrefix(s.Badge, "chain verified")
	})
	m.waitScreen(t, "the first verification", func(s string) bool { return strings.Contains(s, "chain verified") })
	return m, tm
}

// waitPane waits, snapshot by snapshot, until cond holds of the pane's state.
func waitPane(t *testing.T, p *Pane, what string, cond func(Snapshot) bool) {
	t.Helper()
	guard := time.NewTimer(hang)
	defer guard.Stop()
	for {
		changed := p.Changed()
		s := p.Snapshot()
		if cond(s) {
			return
		}
		select {
		case <-changed:
		case <-guard.C:
			t.Fatalf("the pane never reached %s; state %+v", what, s)
		}
	}
}

// largePath makes the panes the test builds take the path large logs take:
// appends read incrementally, the bytes read from the file, not kept.
func largePath(t *testing.T) {
	t.Helper()
	small, mem := smallLog, inMemoryLog
	smallLog, inMemoryLog = 0, 0
	t.Cleanup(func() { smallLog, inMemoryLog = small, mem })
}

// editInPlace rewrites one byte of entry #i without replacing the file
// (same inode, same size), as an editor writing in place would.
func editInPlace(t *testing.T, path string, i int) {
	t.Helper()
	raw, _ := os.ReadFile(path)
	off := 0
	for j := 0; j < i; j++ {
		off += bytes.IndexByte(raw[off:], '\n') + 1
	}
	at := off + bytes.Index(raw[off:], []byte(`"target":"tv"`)) + len(`"target":"`)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("T"), int64(at))
	f.Close()
}

// TestLiveBadgeInPlaceEdit: the case — an entry edited in place with
// the screen open. The badge turns to BROKEN at #13, the row
// is marked, the detail view says what is wrong, and new entries arriving
// afterwards do not turn it green.
func TestLiveBadgeInPlaceEdit(t *testing.T) {
	for _, large := range []bool{false, true} {
		t.Run(map[bool]string{false: "small", true: "large"}[large], func(t *testing.T) {
			if large {
				largePath(t)
			}
			path, l := liveLog(t, 20)
			m, tm := startHost(t, path)
			editInPlace(t, path, 13)
			m.waitScreen(t, "BROKEN at #13", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #13: hash mismatch") })
			if s, _ := m.screen(); !strings.Contains(s, "✗ edited") {
				t.Fatalf("the broken row is not marked:\n%s", s)
			}
			// new entries arrive (the end still matches the head, so appends go on)
			for i := 0; i < 2; i++ {
				if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventSubmitted, TaskID: "late", Success: true}); err != nil {
					t.Fatal(err)
				}
			}
			m.waitScreen(t, "the new entries", func(s string) bool { return strings.Contains(s, "submitted") })
			if s, _ := m.screen(); !strings.Contains(s, "✗ BROKEN at #13") {
				t.Fatalf("the badge forgot the break after appends:\n%s", s)
			}
			// the detail view of the marked row says what is wrong
			tm.Send(tea.KeyPressMsg{Code: 'g', Text: "g"})
			for i := 0; i < 13; i++ {
				tm.Send(tea.KeyPressMsg{Code: 'j', Text: "j"})
			}
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			m.waitScreen(t, "the detail view", func(s string) bool {
				return strings.Contains(s, "Entry #13") && strings.Contains(s, "the chain breaks here: edited — hash mismatch")
			})

		})
	}
}

// TestLiveBadgeTruncateAndReplace: truncation (the log alone still chains;
// the head says more) and replacement by rename (as `sed -i` does) both turn
// the badge, on small logs and on the path large logs take.
func TestLiveBadgeTruncateAndReplace(t *testing.T) {
	for _, large := range []bool{false, true} {
		name := "small"
		if large {
			name = "large"
		}
		t.Run(name+"/truncate", func(t *testing.T) {
			if large {
				largePath(t)
			}
			path, _ := liveLog(t, 20)
			m, _ := startHost(t, path)
			raw, _ := os.ReadFile(path)
			lines := bytes.SplitAfter(raw, []byte("\n"))
			if err := os.WriteFile(path, bytes.Join(lines[:18], nil), 0o600); err != nil {
				t.Fatal(err)
			}
			m.waitScreen(t, "BROKEN at #18", func(s string) bool {
				return strings.Contains(s, "✗ BROKEN at #18: the log ends at 18 entries but its head says 20")
			})
		})
		t.Run(name+"/replace", func(t *testing.T) {
			if large {
				largePath(t)
			}
			path, _ := liveLog(t, 20)
			m, _ := startHost(t, path)
			raw, _ := os.ReadFile(path)
			lines := bytes.SplitAfter(raw, []byte("\n"))
			lines[4] = bytes.Replace(lines[4], []byte(`"target":"tv"`), []byte(`"target":"TV"`), 1)
			tmp := filepath.Join(filepath.Dir(path), "sedXYZ")
			os.WriteFile(tmp, bytes.Join(lines, nil), 0o600)
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			m.waitScreen(t, "BROKEN at #4", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #4: hash mismatch") })
		})
	}
}

// TestLiveBadgeTurnsGreenAfterSeal: a cut log sealed by the operator turns
// the badge back, naming the sealed gap.
func TestLiveBadgeTurnsGreenAfterSeal(t *testing.T) {
	path, _ := liveLog(t, 10)
	m, _ := startHost(t, path)
	raw, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(raw, []byte("\n"))
	os.WriteFile(path, bytes.Join(lines[:7], nil), 0o600)
	m.waitScreen(t, "BROKEN", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #7") })
	l, _ := audit.Open(path, time.Now)
	if _, err := l.Seal("operator:test", "test cut", testKey()); err != nil {
		t.Fatal(err)
	}
	m.waitScreen(t, "green again", func(s string) bool {
		return strings.Contains(s, "✓ chain verified · 8 entries · 1 sealed gap")
	})
}

func testKey() ed25519.PrivateKey {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	return k
}
