package safetext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// unsafeRune is what must never reach a terminal from the data: every C0
// control (Vigil writes its own \n and \t for layout, outside Line), DEL, C1,
// format characters, line and paragraph separators, and every space but
// U+0020.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) ||
		unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) ||
		(unicode.Is(unicode.Zs, r) && r != ' ') || invisibleLetter(r) || r == utf8.RuneError
}

// markedHexEscapes counts the hex escapes a reader without colour takes for
// Vigil's marks: `\x`+2, `\u`+4 or `\U`+8 hex digits after an odd run of
// backslashes.
func markedHexEscapes(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		if (j-i)%2 == 1 && hexShape(s[j:]) {
			n++
		}
		i = j
	}
	return n
}

func hexShape(rest string) bool {
	if rest == "" {
		return false
	}
	digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[rest[0]]
	if digits == 0 || len(rest) <= digits {
		return false
	}
	for _, c := range []byte(rest[1 : 1+digits]) {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
			return false
		}
	}
	return true
}

func FuzzLine(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.in)
	}
	for _, s := range []string{"", `\u202e`, `\\u202e`, "\\\u202e", `C:\x64\new`, "a\tb", "日本\u200d語", "\xf0\x9f", `\x1`, `\\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		txt := Inspect(s)
		out := txt.String()
		if out != Line(s) {
			t.Fatalf("String and Line differ for %q", s)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q) = %q is not valid UTF-8", s, out)
		}
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("Line(%q) = %q lets %U through", s, out, r)
			}
		}
		escaped, hexMarks := 0, 0
		for _, sp := range txt.Spans {
			if sp.Escaped {
				escaped++
				if sp.Text != `\n` && sp.Text != `\r` && sp.Text != `\t` {
					hexMarks++
				}
			}
		}
		if txt.Hidden != escaped {
			t.Fatalf("Line(%q): Hidden = %d but %d escapes", s, txt.Hidden, escaped)
		}
		// Without colour, what reads as a hex mark is exactly a mark: the data
		// can neither forge one nor hide one.
		if got := markedHexEscapes(out); got != hexMarks {
			t.Fatalf("Line(%q) = %q reads as %d hex escapes, Vigil made %d", s, out, got, hexMarks)
		}
		if txt.Width() != len(out) && isASCII(out) {
			t.Fatalf("Line(%q): Width %d for %d ASCII bytes", s, txt.Width(), len(out))
		}
		for w := 0; w <= txt.Width()+1; w += 1 + w/3 {
			cut := txt.Truncate(w)
			if cut.Width() > w {
				t.Fatalf("Truncate(%d) of %q is %d cells", w, out, cut.Width())
			}
			cs := cut.String()
			if !strings.HasPrefix(out, strings.TrimSuffix(cs, Ellipsis)) {
				t.Fatalf("Truncate(%d) of %q = %q is not a prefix", w, out, cs)
			}
			for _, sp := range cut.Spans {
				if sp.Escaped && !strings.Contains(out, sp.Text) {
					t.Fatalf("Truncate(%d) of %q split an escape: %q", w, out, sp.Text)
				}
			}
		}
		for _, w := range []int{1, 7, 10, 33} {
			var joined strings.Builder
			for _, l := range txt.Wrap(w) {
				if l.Width() > w && w >= 2 { // a wide grapheme alone on a line of 1
					t.Fatalf("Wrap(%d) of %q: a line of %d cells", w, out, l.Width())
				}
				for _, sp := range l.Spans {
					if sp.Escaped && w >= 10 && !isWholeEscape(sp.Text) {
						t.Fatalf("Wrap(%d) of %q split an escape: %q", w, out, sp.Text)
					}
				}
				joined.WriteString(l.String())
			}
			if strings.ReplaceAll(joined.String(), " ", "") != strings.ReplaceAll(out, " ", "") {
				t.Fatalf("Wrap(%d) of %q changed the text: %q", w, out, joined.String())
			}
		}
		for _, l := range Lines(s) {
			for _, r := range l {
				if unsafeRune(r) {
					t.Fatalf("Lines(%q) lets %U through", s, r)
				}
			}
		}
	})
}

func isWholeEscape(s string) bool {
	switch {
	case s == `\n`, s == `\r`, s == `\t`:
		return true
	case len(s) == 4 && strings.HasPrefix(s, `\x`), len(s) == 6 && strings.HasPrefix(s, `\u`), len(s) == 10 && strings.HasPrefix(s, `\U`):
		return hexShape(s[1:])
	}
	return false
}
