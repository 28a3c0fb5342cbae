package search

import (
	"slices"
	"strings"
	"testing"
)

// Which regex engine ugrep runs: PCRE2 (-P) unless the request is fuzzy,
// a plain literal, a word search, or a pattern PCRE2 answers differently
// (pcreUnfit).
func TestUgrepEngineChoice(t *testing.T) {
	cases := []struct {
		e    effective
		want []string
	}{
		{effective{pattern: `func \w+Context\(`}, []string{"-P"}},
		{effective{pattern: `a|ab`}, []string{"-P"}},
		{effective{pattern: `[^a]+x`}, []string{"-P"}},   // a negated class is not an anchor
		{effective{pattern: `x\\b`}, []string{"-P"}},     // a backslash, then b
		{effective{pattern: `(?:ab)c+`}, []string{"-P"}}, // a group, not a lookbehind
		{effective{pattern: `(?i)é`}, []string{"-P"}},
		{effective{pattern: `[*+{,}]a+`}, []string{"-P"}}, // class members are not repeats
		{effective{pattern: `[]a]+x`}, []string{"-P"}},
		{effective{pattern: `a{3}b+\x{41}`}, []string{"-P"}},
		{effective{pattern: `(?:ab)+`}, nil}, // a repeated group
		{effective{pattern: `(\w+\s?)+bar`}, nil},
		{effective{pattern: `\w*\w*c`}, nil},
		{effective{pattern: `a{2,}b{1,3}`}, nil},
		{effective{pattern: `\Qa*\E`}, nil},
		{effective{pattern: `(?x)a b`}, nil},
		{effective{pattern: `[a`}, nil},
		{effective{pattern: "err"}, nil},
		{effective{pattern: "a.b", fixed: true}, nil},
		{effective{pattern: "fo+", word: true}, nil},
		{effective{pattern: "^foo"}, nil},
		{effective{pattern: `[a]^`}, nil},
		{effective{pattern: `\[^a`}, nil}, // an escaped bracket: the ^ is an anchor
		{effective{pattern: `foo\b`}, nil},
		{effective{pattern: `\Bx`}, nil},
		{effective{pattern: `\Ax`}, nil},
		{effective{pattern: `(?<=a)b`}, nil},
		{effective{pattern: `(?<n>a)b`}, nil},
		{effective{pattern: `[[:alpha:]]+`}, nil},
		{effective{pattern: "a.b", fuzzy: 2}, []string{"-Z2"}},
	}
	for _, c := range cases {
		if got := ugrepEngine(c.e); !slices.Equal(got, c.want) {
			t.Errorf("%+v: ugrep runs with %q, want %q", c.e, got, c.want)
		}
	}
}

// With PCRE2, ugrep answers as rg does where its DFA did not: leftmost-
// first alternation, `.` skipping invalid UTF-8, `$` only before a line
// feed, Unicode folding for an inline (?i). Every path of both backends
// gives the same events, and those events are rg's semantics.
func TestUgrepPCREAgreesWithRG(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "xab\nz\xff\xfeq\nab\r\nété\n")
	cases := []struct {
		req  string
		want []string // match_text of each event, in order
	}{
		{`{"pattern":"a|ab"}`, []string{"a", "a"}},
		{`{"pattern":"z.*"}`, []string{"z"}},
		{`{"pattern":"b$"}`, []string{"b"}},
		{`{"pattern":"(?i)É"}`, []string{"é"}},
		{`{"pattern":"(?:x|xa)b?"}`, []string{"x"}},
	}
	for _, c := range cases {
		expectAgree(t, root, c.req)
		eachBackend(t, func(t *testing.T, be string) {
			r := search(t, be, root, c.req)
			var got []string
			for _, m := range r.Matches {
				got = append(got, m.MatchText)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: match texts %q, want %q (%s)", c.req, got, c.want, eventsJSON(r))
			}
		})
	}
}

// ugrep 3.11 gives PCRE2 a line longer than 256 KiB in windows, each a
// subject of its own, so `\ba` matched again at offset 262143 of a line of
// a's (and `^` there too). Patterns that look behind stay on the DFA: one
// match, on every path.
func TestLookBehindOnLongLineStaysOnDFA(t *testing.T) {
	root := t.TempDir()
	write(t, root, "long.txt", strings.Repeat("a", 300000)+"\n")
	for req, want := range map[string]Span{`{"pattern":"\\ba"}`: {0, 1}, `{"pattern":"^"}`: {0, 0}} {
		expectAgree(t, root, req)
		eachBackend(t, func(t *testing.T, be string) {
			r := search(t, be, root, req)
			if len(r.Matches) != 1 || len(r.Matches[0].Submatches) != 1 || r.Matches[0].Submatches[0] != want {
				t.Errorf("%s: want one match at the line's start, got %d events %.300s", req, len(r.Matches), eventsJSON(r))
			}
		})
	}
	// The same long line on PCRE2 (no look-behind): matches across a
	// window's start are whole.
	write(t, root, "long.txt", strings.Repeat("x", 262140)+" foobarbaz "+strings.Repeat("y", 300000)+"\n")
	expectAgree(t, root, `{"pattern":"foo\\w+baz"}`)
}

// ugrep 3.11 says nothing when PCRE2 gives up on a pattern that
// backtracks without bound, and skips the rest of the file: such patterns
// stay on the DFA, and the match on the second line is found.
func TestBacktrackingPatternStaysOnDFA(t *testing.T) {
	cases := []struct{ req, content string }{
		{`{"pattern":"(\\w+\\s?)+bar"}`, strings.Repeat("foo x ", 50) + "\nfoo bar\n"},
		{`{"pattern":"\\w*\\w*\\w*c"}`, strings.Repeat("a", 20000) + "\nabc\n"},
	}
	for _, c := range cases {
		root := t.TempDir()
		write(t, root, "f.txt", c.content)
		expectAgree(t, root, c.req)
		eachBackend(t, func(t *testing.T, be string) {
			r := search(t, be, root, c.req)
			if len(r.Matches) != 1 || r.Matches[0].LineNumber != 2 {
				t.Errorf("%s: want the match on line 2, got %.300s", c.req, eventsJSON(r))
			}
		})
	}
}

// A POSIX class takes in every script under ugrep's PCRE2 (Unicode
// properties on), only ASCII letters in rg and the DFA: such patterns stay
// on the DFA.
func TestPOSIXClassStaysASCII(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "été x\n")
	expectAgree(t, root, `{"pattern":"[[:alpha:]]+"}`)
	eachBackend(t, func(t *testing.T, be string) {
		r := search(t, be, root, `{"pattern":"[[:alpha:]]+"}`)
		if len(r.Matches) != 1 || r.Matches[0].MatchText != "t" {
			t.Errorf("want the ASCII letter t first, got %s", eventsJSON(r))
		}
	})
}
