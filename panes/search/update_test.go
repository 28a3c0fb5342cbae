package searchpane

import (
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/search"
)

// press sends a key and returns the pane's command.
func press(p *Pane, k string) tea.Cmd { return p.Update(kp(k)) }

func TestTypingDebouncesIntoOneRun(t *testing.T) {
	needBackend(t, "ugrep")
	p := typing(New(baseOptions(fixtureTree(t), "ugrep"), styles()))
	defer p.Close()
	var ticks []tea.Cmd
	for _, r := range "needle" {
		ticks = append(ticks, press(p, string(r)))
	}
	if p.gen != 0 || p.cur != nil {
		t.Fatal("a search started before the debounce elapsed")
	}
	// every keystroke armed a timer; only the last one may start a search
	var starts []tea.Cmd
	for _, c := range ticks {
		if c == nil {
			t.Fatal("keystroke armed no debounce")
		}
		if cmd := p.Update(c()); cmd != nil {
			starts = append(starts, cmd)
		}
	}
	if p.gen != 1 || len(starts) != 1 {
		t.Fatalf("want exactly one run, got gen=%d starts=%d", p.gen, len(starts))
	}
	drain(t, p, starts[0])
	if p.results.final == nil || p.results.res.matches != 6 || p.results.lastReq.Pattern != "needle" {
		t.Fatalf("results: final=%v matches=%d", p.results.final != nil, p.results.res.matches)
	}
	// enter runs at once, without a debounce
	cmd := press(p, "enter")
	if p.gen != 2 || p.cur == nil {
		t.Fatalf("enter did not run at once: gen=%d", p.gen)
	}
	drain(t, p, cmd)
}

func TestNewQueryDropsStaleBatches(t *testing.T) {
	needBackend(t, "ugrep")
	p := typing(New(baseOptions(fixtureTree(t), "ugrep"), styles()))
	defer p.Close()
	for _, r := range "needle" {
		press(p, string(r))
	}
	oldPump := press(p, "enter") // gen 1, its pump not yet run
	old := p.cur
	press(p, "ctrl+u")
	for _, r := range "three" {
		press(p, string(r))
	}
	newCmd := press(p, "enter") // gen 2 cancels gen 1
	<-old.done
	// gen 1's batch arrives late: it must not reach the screen
	msg := findBatch(oldPump)
	if msg == nil {
		t.Fatal("old search delivered nothing at all")
	}
	if msg.gen != 1 {
		t.Fatalf("old batch has gen %d", msg.gen)
	}
	if cmd := p.Update(*msg); cmd != nil {
		t.Fatal("a stale batch was pumped again")
	}
	if len(p.results.res.rows) != 0 || len(p.results.res.events) != 0 {
		t.Fatalf("stale batch reached the screen: %d rows", len(p.results.res.rows))
	}
	drain(t, p, newCmd)
	for _, ev := range p.results.res.events {
		if !strings.Contains(ev.Line, "three") {
			t.Fatalf("event of the old query shown: %+v", ev)
		}
	}
	if p.results.res.matches != 1 {
		t.Fatalf("want 1 match for three, got %d", p.results.res.matches)
	}
}

// findBatch runs a (possibly batched) command and returns its batchMsg.
func findBatch(c tea.Cmd) *batchMsg {
	if c == nil {
		return nil
	}
	switch m := c().(type) {
	case batchMsg:
		return &m
	case tea.BatchMsg:
		for _, cc := range m {
			if b := findBatch(cc); b != nil {
				return b
			}
		}
	}
	return nil
}

func TestHistoryWalks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "search_history")
	for _, q := range []string{"one", "two", "one"} {
		if err := AppendHistory(path, q); err != nil {
			t.Fatal(err)
		}
	}
	o := baseOptions(t.TempDir(), "ugrep")
	o.HistoryPath = path
	p := typing(New(o, styles()))
	defer p.Close()
	if got := strings.Join(p.composer.history, ","); got != "two,one" {
		t.Fatalf("history %q, want two,one (dedup, newest last)", got)
	}
	press(p, "d")
	press(p, "r")
	steps := []struct{ key, want string }{
		{"up", "one"}, {"up", "two"}, {"up", "two"}, {"down", "one"}, {"down", "dr"}, {"down", "dr"},
	}
	for i, s := range steps {
		press(p, s.key)
		if got := p.composer.pattern(); got != s.want {
			t.Fatalf("step %d (%s): pattern %q, want %q", i, s.key, got, s.want)
		}
	}
	// enter records the query, in memory and on disk
	p.opts.Search.Backend = "" // any backend; the run itself does not matter here
	cmd := press(p, "enter")
	drain(t, p, cmd)
	hist, err := LoadHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(hist, ","); got != "two,one,dr" {
		t.Fatalf("persisted history %q", got)
	}
	if err := AppendHistory(path, "  "); err == nil {
		t.Fatal("blank query accepted")
	}
	if err := AppendHistory("", "x"); err == nil {
		t.Fatal("empty path accepted")
	}
}

func TestComposerEditsEveryOption(t *testing.T) {
	p := typing(New(baseOptions(fixtureTree(t), "ugrep"), styles()))
	defer p.Close()
	for _, k := range []string{"alt+c", "alt+f", "alt+w", "alt+h", "alt+l", "alt+i", "alt+r", "alt+z"} {
		press(p, k)
	}
	press(p, "n")
	r, ok := p.composer.buildRequest()
	if !ok || *r.Case != "sensitive" || !*r.FixedStrings || !*r.WordRegexp || !*r.Hidden || !*r.Follow ||
		!*r.NoIgnore || *r.Recursive || r.Fuzzy == nil || *r.Fuzzy != 1 {
		t.Fatalf("toggles not applied: %+v", r)
	}
	// tab to the path field, complete "sr" to "src/" with → at the end
	for p.composer.field != fPath {
		press(p, "tab")
	}
	press(p, "s")
	deliverCompletions(p, press(p, "r")) // listed off the UI goroutine
	press(p, "right")
	if got := p.composer.inputs[fPath].Value(); got != "src/" {
		t.Fatalf("completion gave %q", got)
	}
	press(p, "tab") // tab in path: always the next field, never a completion
	if p.composer.field != fInclude {
		t.Fatalf("tab in the path field went to field %d", p.composer.field)
	}
	for _, r := range "*.go, *.txt" {
		press(p, string(r))
	}
	press(p, "down")
	press(p, "down") // context
	press(p, "backspace")
	press(p, "x")
	if p.composer.errField != fContext || !strings.Contains(p.composer.errText, `context: must be an integer, got "x"`) {
		t.Fatalf("inline error: field %d %q", p.composer.errField, p.composer.errText)
	}
	press(p, "backspace")
	press(p, "2")
	r, ok = p.composer.buildRequest()
	if !ok || *r.Context != 2 || *r.Path != "src/" || strings.Join(r.IncludeGlob, "|") != "*.go|*.txt" {
		t.Fatalf("request: %+v", r)
	}
	// space toggles on a toggle field; q is typed, not a quit
	p.composer.field = fWord
	press(p, "space")
	if p.composer.word {
		t.Fatal("space did not toggle word")
	}
	if !p.Capturing() {
		t.Fatal("composer does not capture keys")
	}
	press(p, "esc")
	if p.Capturing() {
		t.Fatal("esc did not leave the composer")
	}
}

func TestEditorAndClipboard(t *testing.T) {
	o := baseOptions(t.TempDir(), "ugrep")
	o.Getenv = func(k string) string {
		if k == "VISUAL" {
			return "myed -w"
		}
		return "nano"
	}
	p := typing(New(o, styles()))
	cmd, _ := p.editorCommand("/r/a.go", 42)
	if got := strings.Join(cmd.Args, " "); got != "myed -w +42 /r/a.go" {
		t.Fatalf("editor args %q", got)
	}
	p.getenv = func(string) string { return "" }
	cmd, _ = p.editorCommand("/r/a.go", 7)
	if got := strings.Join(cmd.Args, " "); got != "vi +7 /r/a.go" {
		t.Fatalf("fallback editor args %q", got)
	}
	p.results.res.add([]search.Event{{Type: "match", Path: "src/a.go", LineNumber: 9, Line: "x", Column: 1, MatchText: "x"}})
	p.results.list.Select(1)
	p.focus = focusResults
	if press(p, "y") == nil || p.notice != "copied src/a.go:9" {
		t.Fatalf("copy: %q", p.notice)
	}
	if press(p, "o") == nil {
		t.Fatal("o did not open the editor")
	}
	// a name that would run commands when pasted never reaches the clipboard
	p.results.res.add([]search.Event{{Type: "match", Path: "ev\x1b[201~;echo INJECTED\n.txt", LineNumber: 2, Line: "x", Column: 1, MatchText: "x"}})
	p.results.list.Select(3) // rows: a.go, its match, the hostile file, its match
	if cmd := press(p, "y"); cmd != nil || !strings.HasPrefix(p.notice, "not copied: the name holds 2 control or invisible characters") {
		t.Fatalf("copy of a hostile name: cmd %v, notice %q", cmd, p.notice)
	}
}
