package memorypane

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/memory"
)

// hostileStrings are one of each family a terminal acts on or a person cannot
// see, with the marked escape that must be on screen in its place.
var hostileStrings = []struct{ name, in, shown string }{
	{"CSI clear", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"OSC 0 title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
	{"OSC 2 title", "\x1b]2;pwned\x1b\\", `\x1b]2;pwned\x1b\`},
	{"OSC 8 link", "\x1b]8;;https://evil/\x1b\\", `\x1b]8;;https://evil/\x1b\`},
	{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJm\x07", `\x1b]52;c;cm0gLXJm\x07`},
	{"DCS", "\x1bP+q544e\x1b\\", `\x1bP+q544e\x1b\`},
	{"C1 CSI", "\u009b2J", `\u009b2J`},
	{"carriage return", "good\rEVIL", `good\rEVIL`},
	{"backspace", "abc\b\b\bxyz", `abc\x08\x08\x08xyz`},
	{"NEL", "a\u0085b", `a\u0085b`},
	{"DEL", "a\x7fb", `a\x7fb`},
	{"RLO", "invoice\u202egpj.exe", `invoice\u202egpj.exe`},
	{"isolate", "a\u2066b\u2069", `a\u2066b\u2069`},
	{"zero-width space", "paypa\u200bl.com", `paypa\u200bl.com`},
	{"word joiner", "a\u2060b", `a\u2060b`},
	{"no-break space", "a\u00a0b", `a\u00a0b`},
	{"line separator", "a\u2028b", `a\u2028b`},
	{"forged escape", `\u202e`, `\\u202e`},
}

// styling is what lipgloss itself writes: SGR sequences only.
var styling = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// leaks names the first character on screen that no screen may draw from the
// data: anything left after Vigil's own styling that is a control (but the
// line ends Block writes), a format character, a line or paragraph separator,
// or a space other than U+0020.
func leaks(view string) string {
	for _, r := range styling.ReplaceAllString(view, "") {
		switch {
		case r == '\n':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0),
			unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp),
			unicode.Is(unicode.Zs, r) && r != ' ':
			return fmt.Sprintf("%U", r)
		}
	}
	return ""
}

// Memories are hostile: their texts, tags and sources reach the screen only
// as marked escapes in the warning style, in the list and in the detail, and
// the detail counts what it had to mark.
func TestHostileMemoriesOnScreen(t *testing.T) {
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.db"), memory.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, c := range hostileStrings {
		if _, err := st.Add(context.Background(), memory.NewMemory{
			Text: fmt.Sprintf("marker%d before %s after\nsecond line", i, c.in),
			Tags: []string{"t" + c.in}, Source: "s" + c.in, CreatedAt: t0}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	warn := styles().Warning
	for i, c := range hostileStrings {
		p := searched(t, st, fmt.Sprintf("marker%d", i))
		list := p.View(160, 12)
		press(t, p, "<enter>")
		detail := p.View(160, 14)
		for name, view := range map[string]string{"list": list, "detail": detail} {
			if r := leaks(view); r != "" {
				t.Errorf("%s, %s: %s reached the screen: %q", c.name, name, r, view)
			}
			plain := ansi.Strip(view)
			for _, want := range []string{"before " + c.shown + " after", "t" + c.shown, "s" + c.shown} {
				if !strings.Contains(plain, want) {
					t.Errorf("%s, %s: %q not on screen:\n%s", c.name, name, want, plain)
				}
			}
			if c.name != "forged escape" && !strings.Contains(view, warn.Render(firstEscape(c.shown))) {
				t.Errorf("%s, %s: the escape %q is not in the warning style", c.name, name, firstEscape(c.shown))
			}
		}
		// the text's own line end is Vigil's layout in the detail, not an escape
		plain := ansi.Strip(detail)
		if !strings.Contains(plain, "\nsecond line") || strings.Contains(plain, `\nsecond`) {
			t.Errorf("%s: the detail does not lay out the text's lines:\n%s", c.name, plain)
		}
		if c.name != "forged escape" && !strings.Contains(plain, "hidden character") {
			t.Errorf("%s: the detail does not count hidden characters:\n%s", c.name, plain)
		}
		if c.name == "forged escape" && strings.Contains(plain, "hidden character") {
			t.Errorf("a typed \\u202e was counted as hidden:\n%s", plain)
		}
	}
}

func firstEscape(shown string) string {
	i := strings.IndexByte(shown, '\\')
	if i < 0 {
		return ""
	}
	for _, n := range []int{10, 6, 4, 2} {
		if e := shown[i:min(i+n, len(shown))]; len(e) == n && (n == 2 || e[1] == 'x' && n == 4 || e[1] == 'u' && n == 6 || e[1] == 'U' && n == 10) {
			return e
		}
	}
	return shown[i : i+2]
}

// The fuzzy filter matches the shown text; an escape in a matched preview is
// still drawn whole in the warning style.
func TestFilterKeepsEscapesWhole(t *testing.T) {
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.db"), memory.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Add(context.Background(), memory.NewMemory{Text: "filterme pay\u200bpal account", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	p := searched(t, st, "filterme")
	press(t, p, "/pay")
	view := p.View(100, 10)
	if r := leaks(view); r != "" {
		t.Fatalf("%s reached the screen", r)
	}
	if !strings.Contains(view, styles().Warning.Render(`\u200b`)) || !strings.Contains(ansi.Strip(view), `pay\u200bpal`) {
		t.Fatalf("escape not drawn whole in the warning style: %q", view)
	}
}

// Wrapped at any width, a preview and the detail never split an escape
// across two lines (a `\u20` at a line's end would read as something else).
func TestWrapNeverSplitsAnEscape(t *testing.T) {
	st, err := memory.Open(filepath.Join(t.TempDir(), "m.db"), memory.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Add(context.Background(), memory.NewMemory{Text: "wrapme the host is paypa\u200bl.com and \u202eright", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	partial := regexp.MustCompile(`\\u([0-9a-f]{0,3})($|[^0-9a-f])`) // a \u without its four digits
	for _, detail := range []bool{false, true} {
		from := 12 // the list indents previews by 6: an escape needs 6 more
		if detail {
			from = 6
		}
		for w := from; w <= 60; w++ {
			p := searched(t, st, "wrapme")
			if detail {
				press(t, p, "<enter>")
			}
			for _, line := range strings.Split(ansi.Strip(p.View(w, 30)), "\n") {
				line = strings.ReplaceAll(strings.TrimSpace(line), `\uXXXX`, "") // the hidden-characters note
				if partial.MatchString(line) {
					t.Fatalf("detail %v, width %d: an escape is split at %q", detail, w, line)
				}
			}
		}
	}
}
