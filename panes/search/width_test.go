package searchpane

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// hostileFiles hold what a repository can: escapes, wide and zero-width
// characters, combining marks, tabs and a line far wider than any screen,
// in names and in lines.
func hostileFiles() map[string]string {
	long := strings.Repeat("界", 400) + " needle " + strings.Repeat("x", 3000)
	return map[string]string{
		"wide/日本語の名前\u200b.txt":           "needle 日本語 needle\n\tneedle\ttabs\n",
		"esc\x1b[2J\x1b]52;c;aGk=\x07.go": "needle \x1b[31mred\x1b[0m \u202eRLO\n" + long + "\n",
		"emoji/👩‍👩‍👧‍👦.md":                "e\u0301e\u0301 needle 👩‍👩‍👧‍👦 🇫🇷 needle\n",
	}
}

// Every line of the pane is exactly its width, whatever the results hold,
// with the selection on each row in turn (the whole-row highlight must not
// push a wide character past the edge), with the preview beside the list
// and below it.
func TestEveryLineIsThePaneWidth(t *testing.T) {
	files := hostileFiles()
	o := fakeOptions(t)
	for name, body := range files {
		write(t, o.Search.Root, name, body)
	}
	o.Engine = fakeEngine(files)
	p := New(o, styles())
	t.Cleanup(p.Close)
	runTyped(t, p, "needle")
	if p.results.res.matches < 5 {
		t.Fatalf("want the hostile matches, have %d", p.results.res.matches)
	}
	check := func(what string, w, h int) {
		t.Helper()
		lines := strings.Split(p.View(w, h), "\n")
		if len(lines) != h {
			t.Fatalf("%s at %d×%d: %d lines", what, w, h, len(lines))
		}
		for i, l := range lines {
			if got := ansi.StringWidth(l); got != w {
				t.Fatalf("%s at %d×%d: line %d is %d wide:\n%q\n%s", what, w, h, i, got, l, ansi.Strip(strings.Join(lines, "\n")))
			}
		}
	}
	for _, preview := range []bool{false, true} {
		if p.preview.open != preview {
			drain(t, p, p.Update(panetest.Key("p")))
		}
		drain(t, p, p.Update(panetest.Key("g")))
		for range p.results.res.matches + 2 {
			for _, size := range [][2]int{{120, 34}, {80, 22}, {60, 12}, {41, 8}} {
				check(fmt.Sprintf("preview %v, row %d", preview, p.results.list.Cursor()), size[0], size[1])
			}
			drain(t, p, p.Update(panetest.Key("j")))
		}
	}
}

// A pasted pattern with escapes and wide characters is drawn escaped and
// within the width, in the field and in the error under it.
func TestPastedHostilePatternKeepsTheWidth(t *testing.T) {
	p := New(fakeOptions(t), styles())
	t.Cleanup(p.Close)
	p.Update(panetest.Key("/"))
	drain(t, p, p.Update(tea.PasteMsg{Content: "日本語(\x1b[2J\x1b]52;c;aGk=\x07\u202e" + strings.Repeat("界", 80)}))
	for _, w := range []int{120, 80, 41} {
		out := p.View(w, 20)
		checkNoRawControls(t, out)
		for i, l := range strings.Split(out, "\n") {
			if got := ansi.StringWidth(l); got != w {
				t.Fatalf("at width %d line %d is %d wide: %q", w, i, got, l)
			}
		}
	}
}
