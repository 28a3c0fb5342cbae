package searchpane

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// needBackend fails under CI=true when a backend is missing, skips elsewhere.
func needBackend(t testing.TB, name string) search.BackendInfo {
	t.Helper()
	for _, b := range search.DetectBackends(search.DefaultOptions(t.TempDir())) {
		if b.Name == name && b.OK {
			return b
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("backend %s missing under CI", name)
	}
	t.Skipf("backend %s not installed", name)
	return search.BackendInfo{}
}

// stepClock advances 7 ms per call, so a search shows "7ms" whatever the
// machine: the pane reads the clock once at start and once at the end.
func stepClock() func() time.Time {
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	n := 0
	return func() time.Time { n++; return t0.Add(time.Duration(n) * 7 * time.Millisecond) }
}

func write(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixtureTree is a small source tree with matches, context and a long line.
func fixtureTree(t testing.TB) string {
	root := t.TempDir()
	write(t, root, "src/alpha.go", "package alpha\n\n// Find the needle here.\nfunc Needle() string {\n\treturn \"needle\"\n}\n")
	write(t, root, "src/beta.txt", "one\ntwo\nthree needle four\nfive\n")
	write(t, root, "docs/guide.md", "# Guide\nNo match on this line.\nA needle in the docs, and another needle.\nend\n")
	write(t, root, "docs/long.txt", strings.Repeat("lorem ipsum ", 30)+"needle"+strings.Repeat(" dolor", 20)+"\n")
	write(t, root, "notes/todo.txt", "nothing here\n")
	return root
}

func baseOptions(root, backend string) Options {
	so := search.DefaultOptions(root)
	so.Backend = backend
	return Options{Search: so, Now: stepClock(), Debounce: 30 * time.Millisecond,
		Getenv: func(string) string { return "" }}
}

func styles() *themes.Styles {
	p, _ := themes.Palettes("dark")
	return themes.New(p)
}

// screen runs the real program with the pane at w×h (Ascii profile), sends
// keys one by one (each after the previous was handled), waits until ready
// holds, and returns the final screen's text with the backend version
// normalized (goldens must not depend on the installed version).
func screen(t *testing.T, p *Pane, w, h int, keys []tea.Msg, ready func(Snapshot) bool) string {
	t.Helper()
	t.Cleanup(p.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	waitFor(t, p, func(s Snapshot) bool { return s.Backend != "" })
	sent := 0
	for _, k := range keys {
		if w, ok := k.(waitMarker); ok {
			waitFor(t, p, w.cond)
			continue
		}
		tm.Send(k)
		sent++
		n := sent
		waitFor(t, p, func(s Snapshot) bool { return s.Keys >= n })
	}
	waitFor(t, p, ready)
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
	out := ansi.Strip(final.Render())
	if v := p.Snapshot().Backend; v != "" {
		name, ver, _ := strings.Cut(v, " ")
		if ver != "" {
			out = strings.ReplaceAll(out, name+" "+ver, name+" X.Y.Z")
		}
	}
	checkFrame(t, out, w, h)
	return out
}

func checkFrame(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), h, out)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Fatalf("line %d is %d wide (> %d): %q", i, lw, w, l)
		}
	}
}

// waitFor blocks until cond holds for the pane's snapshot, woken by each
// change (Pane.Changed); the timeout only ends a test that would hang.
func waitFor(t *testing.T, p *Pane, cond func(Snapshot) bool) {
	t.Helper()
	hang := time.NewTimer(20 * time.Second)
	defer hang.Stop()
	for {
		changed := p.Changed()
		s := p.Snapshot()
		if cond(s) {
			return
		}
		select {
		case <-changed:
		case <-hang.C:
			t.Fatalf("timed out waiting; snapshot %+v", s)
		}
	}
}

// settled is "the search for pattern has finished and is on screen".
func settled(pattern string) func(Snapshot) bool {
	return func(s Snapshot) bool {
		return !s.Busy && s.Gen > 0 && s.Shown == s.Gen && s.Finished && s.Pattern == pattern
	}
}

func kp(s string) tea.Msg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	if strings.HasPrefix(s, "alt+") {
		return tea.KeyPressMsg{Code: []rune(s[4:])[0], Mod: tea.ModAlt}
	}
	if strings.HasPrefix(s, "ctrl+") {
		return tea.KeyPressMsg{Code: []rune(s[5:])[0], Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func typed(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, kp(string(r)))
	}
	return out
}

func keys(ks ...string) []tea.Msg {
	var out []tea.Msg
	for _, k := range ks {
		out = append(out, kp(k))
	}
	return out
}

// drain runs cmd and everything it leads to on the test goroutine, feeding
// the messages back into the pane, until nothing is left.
func drain(t testing.TB, p *Pane, cmd tea.Cmd) {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		switch m := msg.(type) {
		case tea.BatchMsg:
			queue = append(queue, m...)
		case nil:
		default:
			if isTerminalCmd(msg) {
				continue
			}
			queue = append(queue, p.Update(msg))
		}
	}
}

// isTerminalCmd is a message the program would handle itself (clipboard,
// exec): not the pane's.
func isTerminalCmd(msg tea.Msg) bool {
	name := fmt.Sprintf("%T", msg)
	return strings.HasPrefix(name, "tea.") && name != "tea.KeyPressMsg"
}

type teaMsg = tea.Msg

// waitMarker in a key list makes screen wait for cond before the next key.
type waitMarker struct{ cond func(Snapshot) bool }

var scannedRE = regexp.MustCompile(`scanned \d+`)

// typing puts a new pane's keyboard in the pattern field, as / does: the
// pane opens on its results (see TestOpensOnResults), and these tests type.
func typing(p *Pane) *Pane {
	p.Update(kp("/"))
	p.keysSeen = 0
	p.publish()
	return p
}

// deliverCompletions runs cmd's tree and hands the pane only the path
// completions it lists (searches it would start are dropped).
func deliverCompletions(p *Pane, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch m := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range m {
			deliverCompletions(p, c)
		}
	case completionMsg:
		p.Update(m)
	}
}
