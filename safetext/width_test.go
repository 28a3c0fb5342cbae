package safetext

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestTruncateNeverSplitsAnEscape(t *testing.T) {
	txt := Inspect("ab\u202ecd") // ab\u202ecd: 2 + 6 + 2 cells
	if txt.Width() != 10 {
		t.Fatalf("Width = %d, want 10", txt.Width())
	}
	for w := 0; w <= 12; w++ {
		got := txt.Truncate(w)
		s := got.String()
		if got.Width() > w {
			t.Errorf("Truncate(%d) = %q is %d cells wide", w, s, got.Width())
		}
		if strings.Contains(s, `\u`) && !strings.Contains(s, `\u202e`) {
			t.Errorf("Truncate(%d) = %q split the escape", w, s)
		}
		if got.Hidden != 1 {
			t.Errorf("Truncate(%d).Hidden = %d, want the whole value's 1", w, got.Hidden)
		}
		if w >= 10 && s != `ab\u202ecd` {
			t.Errorf("Truncate(%d) = %q, want it whole", w, s)
		}
	}
	if got := txt.Truncate(9).String(); got != `ab\u202e…` {
		t.Fatalf("Truncate(9) = %q", got)
	}
	if got := txt.Truncate(8).String(); got != `ab…` {
		t.Fatalf("Truncate(8) = %q, want the escape left out whole", got)
	}
	if got := txt.Truncate(8).Render(func(s string) string { return "[" + s + "]" }); got != `ab…` {
		t.Fatalf("Truncate(7).Render = %q", got)
	}
}

func TestTruncateCountsCellsNotBytes(t *testing.T) {
	txt := Inspect("日本語テキスト")
	if txt.Width() != 14 {
		t.Fatalf("Width = %d, want 14", txt.Width())
	}
	if got := txt.Truncate(6).String(); got != "日本…" {
		t.Fatalf("Truncate(6) = %q", got)
	}
	// a wide grapheme that does not fit is left out, not half drawn
	if got := txt.Truncate(4).String(); got != "日…" {
		t.Fatalf("Truncate(4) = %q", got)
	}
	if got := Inspect("e\u0301tude").Truncate(3).String(); got != "e\u0301t…" {
		t.Fatalf("combining mark cut: %q", got)
	}
}

func TestInspectLinesKeepsSpansPerLine(t *testing.T) {
	got := InspectLines("a\tb\r\nc\u200bd\re", Options{TabWidth: 4})
	if len(got) != 2 || got[0].String() != "a   b" || got[1].String() != `c\u200bd\re` || got[1].Hidden != 2 {
		t.Fatalf("InspectLines = %+v", got)
	}
}

// The backslash rule: data cannot forge one of Vigil's hex escapes, and
// ordinary Windows paths and regular expressions are left readable.
func TestBackslashesCannotForgeAnEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`\u202e`, `\\u202e`},
		{`\U0001F600`, `\\U0001F600`},
		{`\x1b[2J`, `\\x1b[2J`},
		{`\\u202e`, `\\\\u202e`},
		{"\\\u202e", `\\\u202e`},
		{"\\\x1b", `\\\x1b`},
		{"\\\n", `\\\n`},
		{"\\\xff", `\\\xff`},
		{`C:\Users\new\temp`, `C:\Users\new\temp`},
		{`C:\x64\bin`, `C:\\x64\bin`},
		{`^\d+\s*\w\.txt$`, `^\d+\s*\w\.txt$`},
		{`\u20`, `\u20`},
		{`\xZZ`, `\xZZ`},
		{`\`, `\`},
		{"\\\t", `\\\t`},
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// where tabs are layout, a backslash before one is plain text
	if got := InspectWith("\\\tx", Options{TabWidth: 4}).String(); got != `\   x` {
		t.Errorf("content tab after a backslash = %q", got)
	}
	if n := Hidden(`\u202e`); n != 0 {
		t.Errorf("a typed \\u202e counted as %d hidden characters", n)
	}
}

func TestWrapKeepsEscapesWhole(t *testing.T) {
	txt := Inspect("send to paypa\u200bl.com now please")
	for w := 1; w <= 40; w++ {
		lines := txt.Wrap(w)
		var all []string
		for _, l := range lines {
			if l.Width() > w {
				t.Fatalf("width %d: line %q is %d wide", w, l.String(), l.Width())
			}
			all = append(all, l.String())
			for _, sp := range l.Spans {
				if sp.Escaped && sp.Text != `\u200b` && w >= 6 {
					t.Fatalf("width %d: escape split: %q", w, all)
				}
			}
		}
		joined := strings.Join(all, "")
		if strings.ReplaceAll(joined, " ", "") != strings.ReplaceAll(txt.String(), " ", "") {
			t.Fatalf("width %d: text lost or changed: %q", w, all)
		}
	}
	got := func(w int) string {
		var out []string
		for _, l := range txt.Wrap(w) {
			out = append(out, l.String())
		}
		return strings.Join(out, "|")
	}
	if g := got(16); g != `send to|paypa\u200bl.com|now please` {
		t.Fatalf("Wrap(16) = %q", g)
	}
	if g := got(8); g != `send to|paypa|\u200bl.|com now|please` {
		t.Fatalf("Wrap(8) = %q", g)
	}
	if g := got(100); g != `send to paypa\u200bl.com now please` {
		t.Fatalf("Wrap(100) = %q", g)
	}
	if g := Inspect("  indented text").Wrap(10); len(g) != 2 || g[0].String() != "  indented" || g[1].String() != "text" {
		t.Fatalf("indentation: %+v", g)
	}
	if g := Inspect("").Wrap(5); len(g) != 1 || g[0].String() != "" {
		t.Fatalf("empty: %+v", g)
	}
	if g := Inspect("日本語テキスト").Wrap(5); len(g) != 4 || g[0].String() != "日本" || g[3].String() != "ト" {
		t.Fatalf("wide: %q", g)
	}
	if txt.Wrap(8)[0].Hidden != 1 {
		t.Fatal("Hidden not carried on the first line")
	}
}

// Wrap never breaks the data's doubled backslashes: `xxxxx\\u202e` wrapped
// after its first backslash put `\u202e` alone on the next line, which under
// NO_COLOR reads exactly as Vigil's mark for a right-to-left override.
func TestWrapKeepsBackslashRunsWhole(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
	}{{`xxxxx\u202e`, 6}, {`see C:\x64\u202e yes`, 8}, {`ab\U0001f600`, 3}} {
		lines := Inspect(c.in).Wrap(c.width)
		for i, l := range lines {
			s := l.String()
			if i > 0 && strings.HasPrefix(s, `\`) && !strings.HasPrefix(s, `\\`) {
				t.Errorf("Wrap(%q, %d) line %d is %q: a lone backslash starts it", c.in, c.width, i, s)
			}
			if w := l.Width(); w > c.width {
				t.Errorf("Wrap(%q, %d) line %d is %d cells", c.in, c.width, i, w)
			}
		}
	}
}

func TestCellKeepsAValueInItsColumn(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"abc", 6, "abc   "},
		{"agent:x       MEDIA_PLAY  living-room", 12, "agent:x    …"},
		{"a\x1b[2Jb", 6, `a\x1b…`},
		{"", 3, "   "},
	} {
		got := Cell(c.in, c.w)
		if got != c.want {
			t.Errorf("Cell(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if w := ansi.StringWidth(got); w != c.w {
			t.Errorf("Cell(%q, %d) is %d cells wide", c.in, c.w, w)
		}
	}
}
