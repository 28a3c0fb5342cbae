package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Findings of the stop-16 review of 68212c4..7f9ecf6 (fold.go's \Q…\E,
// \cX and `&&`; the CR rewrite for ugrep; ugrepRepeatOver), all fixed: each
// test failed before its fix.

// lineSpans returns line:start-end for every submatch, in order.
func lineSpans(r Response) []string {
	var out []string
	for _, m := range r.Matches {
		for _, s := range m.Submatches {
			out = append(out, fmt.Sprintf("%d:%d-%d", m.LineNumber, s.Start, s.End))
		}
	}
	return out
}

// Fixed: ugrep reads `\Q…\E` as one unit, so a repeat after `\E` repeats the
// whole quote (`\Qab\E{2}` is "abab", `\Qa\E+` is "a+"). foldQuote ends
// its output with an empty quote (`\Q\E[aA]\Q\E[bB]\Q\E{2}`), so the repeat
// applies to nothing: with case insensitive, `\Qab\E{2}` matches a lone "ab"
// and `\Qa\E+` matches "aaa" as three one-letter matches.
// Fix: rewrite a quote as a group of its folded literal,
// `(?:` + foldLiteral(content) + `)` (foldLiteral already escapes the rest).
func TestFoldedQuoteKeepsItsRepeat(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "ab\nABAB\naaa\n")
	for req, want := range map[string][]string{
		`{"pattern":"\\Qab\\E{2}","case":"insensitive"}`: {"2:0-4"},
		`{"pattern":"\\Qa\\E+","case":"insensitive"}`:    {"1:0-1", "2:0-1", "2:2-3", "3:0-3"},
	} {
		r := search(t, "ugrep", root, req)
		if got := lineSpans(r); !slices.Equal(got, want) {
			t.Errorf("ugrep %s: spans %v, want %v (as with case sensitive on the same text in other case)", req, got, want)
		}
	}
}

// Fixed: the CR rewrite in prepareUnchecked is a blind ReplaceAll of the byte
// with `\r`. Inside a quote that is two literal characters, and after a
// backslash it makes `\\` + `r`: `\Qa<CR>b\E` and `a\<CR>b` both match the
// text `a\rb` (backslash, r) with ugrep, and never a, CR, b. (rg refuses
// both patterns; before the change ugrep split them at the CR.)
// Fix: do the CR rewrite with a tokenizer: inside `\Q…\E` emit `\E\r\Q`,
// after a backslash emit just `r` (or refuse `\<CR>` as rg does).
func TestCarriageReturnInQuoteOrAfterBackslash(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "a\rb\na\\rb\n")
	for _, c := range []string{"sensitive", "insensitive"} {
		for _, pat := range []string{`\\Qa\rb\\E`, `a\\\rb`} {
			req := `{"pattern":"` + pat + `","case":"` + c + `"}`
			r, err := searchErr("ugrep", root, req)
			if err != nil || len(r.Matches) != 1 || r.Matches[0].LineNumber != 1 || r.Matches[0].MatchText != "a\rb" {
				t.Errorf("ugrep %s: want a, CR, b on line 1 only (not the text a\\rb on line 2), got %v %s", req, err, eventsJSON(r))
			}
		}
	}
}

// Fixed: foldClass flushes the other-case twins before `&&` only. Both
// backends also take a class subtraction `--[…]` (ugrep: `[a-z--[aeiou]]`
// are the consonants, as in rg), and rg a symmetric difference `~~`. The
// twins of the left operand go after the right one, inside it:
// `[a-z--[aeiou]]` becomes `[a-z--[aeiouA-ZAEIOU]]`, which subtracts every
// capital, so "BCD" is not found; `[a-z~~[aeiou]]` becomes
// `[a-z~~[aeiouA-ZAEIOU]]`, which takes in the capital vowels (rg).
// Fix: treat `--` (and `~~`) as `&&` is treated: write the twins before
// the operator and fold a bracketed operand right after it on its own.
func TestFoldClassSubtraction(t *testing.T) {
	if got, want := foldRegex(`[a-z--[aeiou]]+`, false), `[a-zA-Z--[aeiouAEIOU]]+`; got != want {
		t.Errorf("foldRegex = %q, want %q", got, want)
	}
	root := t.TempDir()
	write(t, root, "f.txt", "BCD bcd aei\n")
	eachBackend(t, func(t *testing.T, be string) {
		r := search(t, be, root, `{"pattern":"[a-z--[aeiou]]+","case":"insensitive"}`)
		if got, want := lineSpans(r), []string{"1:0-3", "1:4-7"}; !slices.Equal(got, want) {
			t.Errorf("%s: spans %v, want %v (BCD and bcd)", be, got, want)
		}
	})
}

// Fixed (rg only): rg reads `[` in a class as a nested class; foldClass
// reads it as a member (ugrep's reading) and puts the outer class's twins
// inside a nested negated class: `[x[^b]]` becomes `[x[^bXB]]`, which
// leaves out "X" (rg -i matches it).
// Fix: for rg, fold a nested class on its own (as after `&&`), e.g. give
// backendPattern the backend name.
func TestFoldNestedNegatedClassRG(t *testing.T) {
	need(t, "rg")
	if got, want := foldRegex(`[x[^b]]`, true), `[x[^bB]X]`; got != want {
		t.Errorf("foldRegex for rg = %q, want %q", got, want)
	}
	root := t.TempDir()
	write(t, root, "f.txt", "X\n")
	r := search(t, "rg", root, `{"pattern":"[x[^b]]","case":"insensitive"}`)
	if len(r.Matches) != 1 {
		t.Errorf("rg: [x[^b]] case insensitive does not find X: %s", eventsJSON(r))
	}
}

// Fixed: ugrepRepeatOver skips a brace after any escaped character as if it
// were an escape's braced argument (`\x{…}`), so a counted repeat of an
// escape is never read: `\.{2,70000}` runs on ugrep and matches runs of
// 4,464 dots (70000 mod 65536), rg matches all 70,000. Same for `\d`, `\)`,
// `\{`, `\w` (ugrep then compiles for minutes and is killed).
// Fix: skip a braced argument only after the escapes that take one
// (x, p, P, u, U, o, N, g, k), e.g. `if strings.IndexByte("xpPuUoNgk",
// pattern[i]) >= 0 && ...`.
func TestRepeatCountOfAnEscape(t *testing.T) {
	for _, pat := range []string{`\.{2,70000}`, `\d{1,70000}`, `\){70000}`, `\{{2,70000}`, `\w{2,70000}`} {
		if _, over := ugrepRepeatOver(pat); !over {
			t.Errorf("%q: count not found", pat)
		}
	}
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", strings.Repeat(".", 70000)+"\n")
	_, err := searchErr("ugrep", root, `{"pattern":"\\.{2,70000}"}`)
	var te *ToolError
	if !errors.As(err, &te) || te.Kind != BadArgs {
		t.Errorf("ugrep: \\.{2,70000} ran (err %v), want BadArgs naming the count", err)
	}
}

// Fixed: false BadArgs on patterns both backends take. The class scanner
// stops at the `]` of a POSIX class (`[[:alpha:]{70000}]`: the braces are
// members), and `(?x)` comments and `\Q…\E` quotes are read as repeats.
// Fix: skip `[:…:]` inside a class as foldClass does; skip `\Q…\E`; skip
// `#` to the end of the line under `(?x)` (or leave these to ugrep's own
// error only when the count is really a repeat). Kept: a count in a `#`
// comment under (?x) is still refused (a clear error rather than the risk
// of a wrapped count going through); `(?#...)` comments are skipped.
func TestRepeatCountNotInClassesOrQuotes(t *testing.T) {
	for _, pat := range []string{`[[:alpha:]{70000}]+`, `[a[:digit:]{70000}]+`, `(?#{70000})a`, `\Qa{70000}\E`} {
		if count, over := ugrepRepeatOver(pat); over {
			t.Errorf("%q: %s read as a repeat count; ugrep takes the pattern", pat, count)
		}
	}
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "ab{7}\n")
	r, err := searchErr("ugrep", root, `{"pattern":"[[:alpha:]{70000}]+"}`)
	if err != nil || len(r.Matches) != 1 {
		t.Errorf("ugrep: [[:alpha:]{70000}]+ refused or not found: %v %s", err, eventsJSON(r))
	}
}
