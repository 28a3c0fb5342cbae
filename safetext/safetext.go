// Package safetext is the one way text from outside — lease claims,
// manifests, file names and contents, mail, datasets, memories, audit fields —
// reaches a terminal. Every human surface (the TUI's panes and the human
// output of every command) shows untrusted text through it; JSON output does
// not (the JSON encoder escapes on its own).
//
// It never lets a character that could steer the terminal through: C0 and C1
// controls, ESC, DEL, carriage returns, backspaces and line ends from the data
// become marked escapes (`\x1b`, `\r`, `\u0085`). Characters a person cannot
// see or that change the direction of what follows — bidi embeddings,
// overrides and isolates, zero-width characters, the word joiner, BOM, soft
// hyphen, unusual spaces, line and paragraph separators, every other format
// (Cf) character, and a few letters that draw nothing — are not removed but
// made visible the same way and counted, so a screen can say "3 hidden
// characters". Invalid UTF-8 bytes show as `\xff`.
//
// Escapes are plain ASCII, so an escape is as wide as it is long: callers
// cut, wrap and pad after escaping, never before (Text.Truncate and
// Text.Wrap count display cells and never split an escape), and columns stay
// aligned. Spans tell
// which parts are escapes so a screen can style them as a warning.
//
// Under NO_COLOR there is no style to tell an escape from text that merely
// looks like one, so data could forge a marked escape by typing `\u202e`
// itself. The rule that prevents it is kept minimal, so Windows paths and
// regular expressions stay readable: a run of backslashes is doubled only
// when what follows it would read as a hex escape (`\x` and two hex digits,
// `\u` and four, `\U` and eight, either case) or is itself shown as an
// escape. So a typed `\u202e` shows as `\\u202e`, `C:\x64` as `C:\\x64`,
// while `C:\Users\new` and `\d+\s` are unchanged. Read left to right, a hex
// escape preceded by an odd run of backslashes is Vigil's mark, by an even
// run the data's text. The short escapes `\n`, `\r` and `\t` are not
// protected: they stand for layout characters, and doubling every `\n` and
// `\t` would garble every Windows path; a forged one hides nothing. Line is
// therefore not idempotent: escaping its output doubles those backslashes.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is a run of shown text. Escaped spans stand for characters that did
// not reach the terminal as they were.
type Span struct {
	Text    string
	Escaped bool
}

// Text is untrusted text made safe to show.
type Text struct {
	Spans []Span
	// Hidden counts the characters shown as escapes.
	Hidden int
}

// Options change how text is laid out; the zero value shows one field.
type Options struct {
	// TabWidth > 0 expands tabs to spaces at that tab stop (file contents,
	// where tabs are layout); 0 shows a tab as the escape \t (names, ids).
	TabWidth int
}

// Inspect makes s safe to show on one line.
func Inspect(s string) Text { return InspectWith(s, Options{}) }

// InspectWith makes s safe to show on one line with the given layout options.
func InspectWith(s string, o Options) Text {
	var t Text
	var plain strings.Builder
	col := 0
	flush := func() {
		if plain.Len() > 0 {
			t.Spans = append(t.Spans, Span{Text: plain.String()})
			plain.Reset()
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			// A run of backslashes is doubled when it could make what follows
			// read as one of Vigil's escapes (see the package doc).
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			n := j - i
			if forges(s[j:], o) {
				n *= 2
			}
			plain.WriteString(strings.Repeat(`\`, n))
			col += n
			i = j
			continue
		case r == utf8.RuneError && size <= 1:
			flush()
			t.Spans = append(t.Spans, Span{Text: fmt.Sprintf(`\x%02x`, s[i]), Escaped: true})
			t.Hidden++
			col += 4
		case r == '\t' && o.TabWidth > 0:
			n := o.TabWidth - col%o.TabWidth
			plain.WriteString(strings.Repeat(" ", n))
			col += n
		default:
			if esc, ok := Escape(r); ok {
				flush()
				t.Spans = append(t.Spans, Span{Text: esc, Escaped: true})
				t.Hidden++
				col += len(esc)
			} else {
				plain.WriteRune(r)
				col++ // tab stops only need to be right for the ASCII indentation they come with
			}
		}
		i += size
	}
	flush()
	return t
}

// forges reports whether rest, the text after a run of backslashes, would
// make the run read as the start of a marked escape: it begins with the shape
// of a hex escape, or with a character that is shown as an escape.
func forges(rest string, o Options) bool {
	if rest == "" {
		return false
	}
	digits := 0
	switch rest[0] {
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	}
	if digits > 0 && len(rest) > digits {
		hex := true
		for _, c := range []byte(rest[1 : 1+digits]) {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				hex = false
				break
			}
		}
		if hex {
			return true
		}
	}
	r, size := utf8.DecodeRuneInString(rest)
	if r == utf8.RuneError && size <= 1 {
		return true
	}
	if r == '\t' && o.TabWidth > 0 {
		return false
	}
	_, esc := Escape(r)
	return esc
}

// String is the shown text without styling.
func (t Text) String() string {
	if len(t.Spans) == 1 {
		return t.Spans[0].Text
	}
	var b strings.Builder
	for _, sp := range t.Spans {
		b.WriteString(sp.Text)
	}
	return b.String()
}

// Render is the shown text with each escape passed through mark (a warning
// style); a nil mark leaves escapes plain.
func (t Text) Render(mark func(string) string) string {
	if mark == nil {
		return t.String()
	}
	var b strings.Builder
	for _, sp := range t.Spans {
		if sp.Escaped {
			b.WriteString(mark(sp.Text))
		} else {
			b.WriteString(sp.Text)
		}
	}
	return b.String()
}

// Line makes s safe to show on one line, unstyled.
func Line(s string) string { return Inspect(s).String() }

// Lines lays out a multi-line body: it is split at its line ends (\n or
// \r\n) and each line is made safe on its own, so the data's own line ends
// never reach the terminal; any other carriage return shows as \r.
func Lines(s string) []string {
	parts := strings.Split(s, "\n")
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = Line(strings.TrimSuffix(p, "\r"))
	}
	return out
}

// Hidden counts the characters of s that would be shown as escapes on one
// line (line ends included).
func Hidden(s string) int { return Inspect(s).Hidden }

// HiddenNote is the phrase a screen shows beside text with hidden
// characters ("3 hidden characters shown as \uXXXX"), or "" for none.
func HiddenNote(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return `1 hidden character shown as \uXXXX`
	default:
		return fmt.Sprintf(`%d hidden characters shown as \uXXXX`, n)
	}
}

// Escape reports whether r must not reach a terminal as itself, and the
// marked escape that stands for it.
func Escape(r rune) (string, bool) {
	switch {
	case r == '\n':
		return `\n`, true
	case r == '\r':
		return `\r`, true
	case r == '\t':
		return `\t`, true
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), true
	case r == ' ':
		return "", false
	case r < 0x7f:
		return "", false
	case invisibleLetter(r) || !unicode.IsPrint(r):
		// IsPrint is false for C1 controls (Cc), format characters (Cf: bidi
		// controls, zero-width space/joiners, word joiner, BOM, soft hyphen,
		// tag characters), every space but U+0020 (Zs), line and paragraph
		// separators (Zl, Zp), private use, surrogates and unassigned code
		// points: none draws a glyph a person can trust.
		if r > 0xffff {
			return fmt.Sprintf(`\U%08x`, r), true
		}
		return fmt.Sprintf(`\u%04x`, r), true
	}
	return "", false
}

// invisibleLetter lists characters Unicode counts as letters or marks that
// draw nothing: they are used to hide text inside names (Hangul fillers, the
// combining grapheme joiner, Khmer inherent vowels, variation selectors other
// than the emoji ones, the Mongolian free variation selectors).
func invisibleLetter(r rune) bool {
	switch r {
	case 0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x3164, 0xffa0, 0x2800:
		return true
	case 0x180b, 0x180c, 0x180d, 0x180f:
		return true
	}
	return (r >= 0xfe00 && r <= 0xfe0d) || (r >= 0xe0100 && r <= 0xe01ef)
}

// IsBidiControl reports the characters that reorder what follows them on
// screen: embeddings, overrides, isolates and the directional marks.
func IsBidiControl(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// HasBidiControl reports whether s holds any bidi control.
func HasBidiControl(s string) bool { return strings.IndexFunc(s, IsBidiControl) >= 0 }
