package memorypane

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/memory"
)

// Every line of the pane is its width (down to 1×1), whatever the memories hold (wide,
// zero-width and combining characters, escapes, a word longer than any
// screen, many tags), with the selection on each hit, filtered or not, and
// in the detail view.
func TestEveryLineIsThePaneWidth(t *testing.T) {
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.db"), memory.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, m := range []memory.NewMemory{
		{Text: "wide 日本語のメモ " + strings.Repeat("界", 200), Tags: []string{"日本", "👩‍👩‍👧‍👦"}, Source: "ソース"},
		{Text: "wide e\u0301\u200b \x1b[2J\x1b]52;c;aGk=\x07 \u202eRLO " + strings.Repeat("x", 4000), Tags: []string{"t\x1b[31m", strings.Repeat("long", 25)}, Source: "s\u200b"},
		{Text: "wide\ttabs\tand\nlines\n\n\nmore", Tags: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}, Source: "src"},
	} {
		m.CreatedAt = t0
		if _, err := st.Add(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	p := searched(t, st, "wide")
	press(t, p, "<esc>")
	if len(p.shown) != 3 {
		t.Fatalf("want three hits, have %d", len(p.shown))
	}
	check := func(what string, w, h int) {
		t.Helper()
		lines := strings.Split(p.View(w, h), "\n")
		if len(lines) != h {
			t.Fatalf("%s at %d×%d: %d lines", what, w, h, len(lines))
		}
		for i, line := range lines {
			if got := ansi.StringWidth(line); got != w {
				t.Fatalf("%s at %d×%d: line %d is %d wide: %q", what, w, h, i, got, line)
			}
		}
	}
	sizes := [][2]int{{120, 34}, {80, 22}, {60, 10}, {40, 8}, {12, 6}, {5, 3}, {2, 2}, {1, 1}}
	for _, filter := range []string{"", "日"} {
		if filter != "" {
			press(t, p, "/"+filter+"<enter>")
		}
		press(t, p, "g")
		for range 3 {
			for _, s := range sizes {
				check("list "+filter, s[0], s[1])
			}
			press(t, p, "<enter>")
			if p.mode != modeDetail {
				t.Fatal("enter opened no detail")
			}
			for _, s := range sizes {
				check("detail "+filter, s[0], s[1])
			}
			press(t, p, "<esc>j")
		}
	}
}
