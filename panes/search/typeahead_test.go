package searchpane

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// The first day: `1` (to Search) then a word typed straight away. Every
// letter reaches the pattern, those that are also the list's keys (e, i, r
// in "NewVerifier"; y, e, s in "yes") included; nothing is dropped.
func TestTypingOnTheListStartsThePattern(t *testing.T) {
	needBackend(t, "ugrep")
	for _, word := range []string{"NewVerifier", "yes", "inotify"} {
		t.Run(word, func(t *testing.T) {
			p := New(baseOptions(fixtureTree(t), "ugrep"), styles())
			t.Cleanup(p.Close)
			m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 20),
				teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
			waitFor(t, p, func(s Snapshot) bool { return s.Backend != "" })
			tm.Send(kp("1")) // the root's: it never reaches the pane
			for _, k := range typed(word) {
				tm.Send(k)
			}
			waitFor(t, p, func(s Snapshot) bool { return s.Keys >= len(word) })
			waitFor(t, p, settled(word))
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			out := ansi.Strip(tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model).Render())
			if got := p.composer.pattern(); got != word {
				t.Fatalf("pattern %q, want %q:\n%s", got, word, out)
			}
			if !strings.Contains(out, word) {
				t.Fatalf("the screen does not show the typed %q:\n%s", word, out)
			}
		})
	}
}

// On a list with results, a letter no row claims goes to the pattern (at
// its end) rather than vanishing; a key nothing acts on says so.
func TestUnclaimedKeysAreNeverSilent(t *testing.T) {
	needBackend(t, "ugrep")
	p := typing(New(baseOptions(fixtureTree(t), "ugrep"), styles()))
	defer p.Close()
	runLive(t, p, "needle")
	press(p, "esc")
	if p.Capturing() || p.results.rowCount() == 0 {
		t.Fatalf("setup: capturing %v, %d rows", p.Capturing(), p.results.rowCount())
	}
	press(p, "N") // no row claims N
	if got := p.composer.pattern(); !p.Capturing() || got != "needleN" {
		t.Fatalf("N on the list: capturing %v, pattern %q, want \"needleN\"", p.Capturing(), got)
	}
	press(p, "esc")
	cmd := press(p, "ctrl+g")
	if cmd == nil {
		t.Fatal("ctrl+g on the list returned nothing: swallowed without a word")
	}
	if m, ok := cmd().(panes.KeyDisabledMsg); !ok || m.Reason == "" {
		t.Fatalf("ctrl+g: %#v, want a KeyDisabledMsg with a reason", m)
	}
	// a letter on an option chip is not typed anywhere: it says why
	press(p, "/")
	press(p, "tab") // the scope chip (or the first option)
	cmd = press(p, "z")
	if cmd == nil {
		t.Fatal("z on an option returned nothing")
	}
	if m, ok := cmd().(panes.KeyDisabledMsg); !ok || !strings.Contains(m.Reason, "option") {
		t.Fatalf("z on an option: %#v", m)
	}
}
