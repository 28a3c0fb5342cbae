package memorypane

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// t0 is the demo's fixed "now": the same memories, dates and ages every run.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return t0 }

func styles() *themes.Styles {
	p, _ := themes.Palettes("dark")
	return themes.New(p)
}

// demoStore is a real SQLite file in a temp folder holding the demo memories.
func demoStore(t testing.TB) *memory.Store {
	t.Helper()
	st, err := memory.Open(filepath.Join(t.TempDir(), "memory.db"), memory.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := memory.SeedDemo(st, t0); err != nil {
		t.Fatal(err)
	}
	return st
}

func newPane(st *memory.Store) *Pane {
	return typing(New(Options{Tool: memory.NewTool(st, nil), Store: st, Now: clock}, styles()))
}

// typing puts a new pane's keyboard in the form, as e does: the pane opens
// on its list (see TestOpensOnTheList), and these tests type.
func typing(p *Pane) *Pane {
	p.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
	return p
}

// keys turns a script into key presses: named keys in <>, runes otherwise.
func keys(script string) []tea.KeyPressMsg {
	named := map[string]tea.KeyPressMsg{
		"<enter>": {Code: tea.KeyEnter}, "<esc>": {Code: tea.KeyEscape}, "<tab>": {Code: tea.KeyTab},
		"<s-tab>": {Code: tea.KeyTab, Mod: tea.ModShift}, "<down>": {Code: tea.KeyDown}, "<up>": {Code: tea.KeyUp},
		"<bs>": {Code: tea.KeyBackspace}, "<pgdn>": {Code: tea.KeyPgDown}, "<pgup>": {Code: tea.KeyPgUp},
	}
	var out []tea.KeyPressMsg
	for len(script) > 0 {
		if script[0] == '<' {
			if end := bytes.IndexByte([]byte(script), '>'); end > 0 {
				if k, ok := named[script[:end+1]]; ok {
					out = append(out, k)
					script = script[end+1:]
					continue
				}
			}
		}
		r := []rune(script)[0]
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
		script = script[len(string(r)):]
	}
	return out
}

// press sends a script to the pane directly and runs the commands it returns
// (searches and reloads) to completion, in order.
func press(t *testing.T, p *Pane, script string) {
	t.Helper()
	for _, k := range keys(script) {
		drain(p, p.Update(k))
	}
}

func drain(p *Pane, cmd tea.Cmd) {
	for cmd != nil {
		msg := cmd()
		if batch, ok := msg.(tea.BatchMsg); ok {
			for _, c := range batch {
				drain(p, c)
			}
			return
		}
		if msg == nil {
			return
		}
		cmd = p.Update(msg)
	}
}

type session struct {
	t  *testing.T
	p  *Pane
	tm *teatest.TestModel
}

// start runs the real program with the pane at a fixed size.
func start(t *testing.T, p *Pane, w, h int) *session {
	t.Helper()
	t.Cleanup(p.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	return &session{t: t, p: p, tm: tm}
}

// waitFor blocks until cond holds for the pane's snapshot, woken by each
// change (Pane.Changed); the timeout only ends a test that would hang.
func (s *session) waitFor(cond func(Snapshot) bool) {
	s.t.Helper()
	hang := time.NewTimer(10 * time.Second)
	defer hang.Stop()
	for {
		changed := s.p.Changed()
		snap := s.p.Snapshot()
		if cond(snap) {
			return
		}
		select {
		case <-changed:
		case <-hang.C:
			s.t.Fatalf("timed out waiting; snapshot %+v", snap)
		}
	}
}

// answered is "a search has answered and nothing is loading".
func answered(s Snapshot) bool { return s.Searched && !s.Busy }

// opened is "a memory is open and read from the store".
func opened(s Snapshot) bool { return s.Detail && !s.Busy }

// browsing is "the newest memories are listed".
func browsing(s Snapshot) bool { return s.Browsing && !s.Busy }

// invalid is "the form shows validation failures".
func invalid(s Snapshot) bool { return s.Invalid > 0 }

func (s *session) keys(script string) {
	for _, k := range keys(script) {
		s.tm.Send(k)
	}
}

func (s *session) final() string {
	s.t.Helper()
	if err := s.tm.Quit(); err != nil {
		s.t.Fatal(err)
	}
	m := s.tm.FinalModel(s.t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
	return ansi.Strip(m.Render())
}
