package search

import (
	"testing"
)

// Findings of the review of b1d1e76 (ugrepRewrite, --regexp=, limitMemory).
// All fixed in the next commit; each test failed before its fix.

// ugrep takes `(?#...)` comment groups (rg refuses them; ugrepRepeatOver
// already skips them), and ugrepRewrite rewrites inside them. A non-ASCII
// `\x` escape in a comment becomes the group `(?:\x{e9})`, whose `)` now
// ends the comment, so the `)` that ended it is unmatched: a pattern
// ugrep took before is BadArgs.
//
//	ugrep -e '(?#\x{e9})b'       -> matches the b's
//	ugrep -e '(?#(?:\x{e9}))b'   -> "mismatched ( )" (what Vigil sends now)
//
// Likewise an unclosed `[` in a comment (`(?#[)a.b`) stops the rewrite for
// the rest of the pattern (the `.` is then ugrep's any-byte dot).
// Fix: copy `(?#...)` verbatim up to its first `)` in ugrepRewrite, as
// ugrepRepeatOver skips it.
func TestUgrepCommentGroupKeptVerbatim(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "xb\n")
	for _, pat := range []string{`(?#\\x{e9})b`, `(?#\\xe9)b`} {
		r, err := searchErr("ugrep", root, `{"pattern":"`+pat+`","case":"sensitive"}`)
		if err != nil {
			t.Errorf("ugrep %s: %v, want the b on line 1", pat, err)
			continue
		}
		if got := joinSpaces(lineSpans(r)); got != "1:1-2" {
			t.Errorf("ugrep %s: spans %q, want 1:1-2", pat, got)
		}
	}
}

// ugrep's `\cX` (a control character; ugrep-only syntax, BadArgs from rg)
// takes the next byte as its argument whatever it is, but ugrepRewrite
// reads that byte as pattern: `\c.` (ctrl-N, 0x0e) becomes `\c[^\n]`
// (ESC followed by the text `^\n]`), `\c\W` (0x1c then W) becomes
// `\c[^\w\n]`. fold.go's copyEscape already keeps `\cX` whole.
//
//	ugrep -e '\c.'      on "x\x0ey" -> 1:1 (the 0x0e)
//	ugrep -e '\c[^\n]'  on "x\x0ey" -> nothing (what Vigil sends now)
//
// Fix: in ugrepRewrite copy `\c` and the byte after it unchanged.
func TestUgrepControlEscapeArgumentNotRewritten(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "x\x0ey\nx\x1cWy\n")
	for pat, want := range map[string]string{
		`\\c.`:     "1:1-2",
		`x\\c\\Wy`: "2:0-4",
	} {
		r, err := searchErr("ugrep", root, `{"pattern":"`+pat+`","case":"sensitive"}`)
		if err != nil {
			t.Errorf("ugrep %s: %v", pat, err)
			continue
		}
		if got := joinSpaces(lineSpans(r)); got != want {
			t.Errorf("ugrep %s: spans %q, want %q", pat, got, want)
		}
	}
}

// The `\x` fix (group a non-ASCII escape so a repeat takes the whole
// character) misses the braced `\u{...}`, which both backends take as a
// code point (the 4-digit `\uHHHH` is the documented rg-only form). ugrep
// repeats only the last UTF-8 byte of it, so the backends disagree:
//
//	ugrep -e '\u{e9}+a'    on "ééa" -> "éa" at byte 2; on "é\xa9a" -> all 4 bytes
//	ugrep -e '\u{E9}{2}'   on "éé"  -> nothing
//	rg    -e '\u{e9}+a'    on "ééa" -> "ééa" at byte 0
//	ugrep -e '(?:\u{e9})+a'         -> "ééa", as rg
//
// Fix: treat `\u{...}` as `\x{...}` in ugrepRewrite (group it when the code
// point is 0x80 or more). ugrep's octal `\o{351}`/`\0351` has the same
// flaw but is ugrep-only syntax.
func TestBracedUnicodeEscapeRepeatIsOneCharacter(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "ééa\nxé\xa9a\n")
	cases := []struct{ pattern, want string }{
		{`\\u{e9}+a`, "1:0-5"},
		{`\\u{E9}{2}`, "1:0-4"},
	}
	for _, be := range backends(t) {
		for _, c := range cases {
			expectSpans(t, be, root, `{"pattern":"`+c.pattern+`","case":"sensitive"}`, c.want)
		}
	}
}

// A carriage return inside a quote is spelled `\Qa\E\r\Qb\E`, which splits
// the quote; ugrep repeats a quote as one unit (`\Qab\E{2}` is "abab"), so
// a repeat after it now takes only the last piece: `\Qa<CR>b\E{2}` reaches
// ugrep as `\Qa\E\r\Qb\E{2}`, "a CR b b". (Present since the CR rewrite of
// HEAD~1, kept by ugrepRewrite; ugrep-only syntax.)
//
//	ugrep -e '\Qa\E\r\Qb\E{2}' on "a\rba\rb" -> nothing
//
// Fix: when a quote holds a CR, wrap the split quote in a group:
// `(?:\Qa\E\r\Qb\E)`.
func TestQuoteWithCarriageReturnKeepsItsRepeat(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "a\rba\rb\na\rbb\n")
	r, err := searchErr("ugrep", root, `{"pattern":"\\Qa\rb\\E{2}","case":"sensitive"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := joinSpaces(lineSpans(r)); got != "1:0-6" {
		t.Errorf("ugrep \\Qa<CR>b\\E{2}: spans %q, want 1:0-6", got)
	}
}
