package searchpane

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The pane opens on its results: the global keys (1–4, ?, q, tab) reach
// the root instead of being typed; / i or enter start typing, esc leaves.
func TestOpensOnResults(t *testing.T) {
	p := New(baseOptions(t.TempDir(), "ugrep"), styles())
	defer p.Close()
	if p.Capturing() {
		t.Fatal("a new pane has the keyboard: 3 ? q would be typed")
	}
	for _, k := range []string{"/", "enter"} {
		press(p, k)
		if !p.Capturing() || p.composer.field != fPattern {
			t.Fatalf("%s did not focus the pattern field", k)
		}
		press(p, "esc")
		if p.Capturing() {
			t.Fatalf("esc after %s left the keyboard in the field", k)
		}
	}
	if got := p.composer.inputs[fPattern].Value(); got != "" {
		t.Fatalf("focus keys were typed: %q", got)
	}
	// on an empty list i is a letter like any other: "inotify" keeps its i
	press(p, "i")
	if got := p.composer.inputs[fPattern].Value(); !p.Capturing() || got != "i" {
		t.Fatalf("i on an empty list: capturing %v, pattern %q, want the field holding \"i\"", p.Capturing(), got)
	}
}

// runLive types s and lets the debounced live search run to its end.
func runLive(t *testing.T, p *Pane, s string) {
	t.Helper()
	var last func() teaMsg
	for _, r := range s {
		if c := press(p, string(r)); c != nil {
			last = c
		}
	}
	if last != nil {
		drain(t, p, p.Update(last()))
	}
}

// Only searches the person ran are history: a live search typing starts is
// not, a refused pattern never is, and a run search is walkable with ↑ in
// the same session.
func TestHistoryHoldsOnlyRunSearches(t *testing.T) {
	needBackend(t, "ugrep")
	path := filepath.Join(t.TempDir(), "search_history")
	o := baseOptions(fixtureTree(t), "ugrep")
	o.HistoryPath = path
	p := typing(New(o, styles()))
	defer p.Close()

	runLive(t, p, "need") // a live search ran and showed results
	press(p, "ctrl+u")
	runLive(t, p, "(") // refused by the engine
	drain(t, p, press(p, "enter"))
	press(p, "ctrl+u")
	runLive(t, p, "needle")
	drain(t, p, press(p, "enter")) // run: recorded
	press(p, "ctrl+u")
	runLive(t, p, "three")
	drain(t, p, press(p, "esc")) // looked at its results and left: recorded

	hist, err := LoadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hist, ","); got != "needle,three" {
		t.Fatalf("history on disk %q, want needle,three (no half-typed or refused patterns)", got)
	}
	press(p, "/")
	press(p, "ctrl+u")
	press(p, "up")
	if got := p.composer.inputs[fPattern].Value(); got != "three" {
		t.Fatalf("↑ gave %q, want this session's last search", got)
	}
	press(p, "up")
	if got := p.composer.inputs[fPattern].Value(); got != "needle" {
		t.Fatalf("↑↑ gave %q", got)
	}
}

// While a new search waits for its debounce, the old results stay but the
// status line says a search is running and the counts are the previous ones.
func TestSearchingStateWhileANewSearchWaits(t *testing.T) {
	needBackend(t, "ugrep")
	p := typing(New(baseOptions(fixtureTree(t), "ugrep"), styles()))
	defer p.Close()
	runLive(t, p, "needle")
	if st := ansi.Strip(p.statusLine(120)); strings.Contains(st, "searching") || !strings.Contains(st, "6 matches") {
		t.Fatalf("settled status %q", st)
	}
	press(p, "s") // "needles": debounce armed, old results kept
	st := ansi.Strip(p.statusLine(120))
	if !strings.Contains(st, "searching…") || !strings.Contains(st, "previous: 6 matches") || strings.Contains(st, "7ms") {
		t.Fatalf("status while a new search waits: %q", st)
	}
}
