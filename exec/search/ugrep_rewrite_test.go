package search

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Findings of the stop-17 differential fuzzing of ugrep against rg, fixed in
// Vigil. Each test failed before its fix.

// A pattern starting with "---" reached ugrep as `-e ---X`, which ugrep
// 3.11 reads as its ---FILE option: it loaded $HOME/X as a config file
// (BadArgs "option --config: cannot read" when there is none). The pattern
// now goes as --regexp=PATTERN, on both backends and both paths.
func TestPatternStartingWithDashesIsAPattern(t *testing.T) {
	home := t.TempDir()
	// Were this read as a config file, it would make every line match.
	if err := os.WriteFile(filepath.Join(home, "X"), []byte("invert-match\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	root := t.TempDir()
	write(t, root, "f.txt", "one\na ---X b\nthree\n")
	for _, be := range backends(t) {
		for _, req := range []string{
			`{"pattern":"---X","case":"sensitive"}`,
			`{"pattern":"---X","case":"sensitive","fixed_strings":true}`,
			`{"pattern":"---x","case":"insensitive"}`,
			`{"pattern":"---X","case":"sensitive","context":1}`,
		} {
			for _, stream := range []bool{false, true} {
				r := searchStream(t, be, root, req, stream)
				if got := lineSpans(r); !slices.Equal(got, []string{"2:2-6"}) {
					t.Errorf("%s %s stream=%v: spans %v, want [2:2-6]", be, req, stream, got)
				}
			}
		}
	}
}

// ugrep's `.` also takes any single byte: `..` matched one `é`, and `x.y`
// matched x, a byte of invalid UTF-8, y. rg's `.` takes one valid UTF-8
// character, as ugrep's `[^\n]` does, which is what Vigil hands ugrep.
// (?s) no longer lets ugrep's `.` take the newline either.
func TestDotIsOneCharacterInBoth(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "é\nx\xffy\nx\xed\xa0\x80y\nxéy\nab\ncd\nx.y\n")
	cases := []struct{ pattern, want string }{
		{`^..$`, "5:0-2 6:0-2"},       // not the two bytes of é
		{`^.$`, "1:0-2"},              // é is one character
		{`x.y`, "4:0-4 7:0-3"},        // not across an invalid byte or a surrogate's bytes
		{`x.{3}y`, ""},                // ...nor as three characters
		{`x[.]y`, "7:0-3"},            // a class keeps its dot literal
		{`x\.y`, "7:0-3"},             // so does an escape
		{`\Qx.y\E`, "7:0-3"},          // and a quote (ugrep only)
		{`(?s)b.c`, ""},               // never into the next line
		{`x(?:.|\.)y`, "4:0-4 7:0-3"}, // in a group
	}
	for _, be := range backends(t) {
		for _, c := range cases {
			if be == "rg" && c.pattern[0] == '\\' {
				continue // \Q…\E is ugrep's
			}
			expectSpans(t, be, root, `{"pattern":`+mustJSON(c.pattern)+`,"case":"sensitive"}`, c.want)
		}
	}
}

// With word_regexp, ugrep 3.11 refuses a regex ending in `\$` ("mismatched
// ( )"), so the fixed string `X$` folded for case insensitive (or quoted for
// a carriage return) was BadArgs with ugrep. `\$` now reaches ugrep as `[$]`.
func TestWordEndingInDollar(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "a X$ b\nX$Y\nx$\r\n")
	cases := []struct{ req, want string }{
		{`{"pattern":"X$","fixed_strings":true,"word_regexp":true,"case":"insensitive"}`, "1:2-4 3:0-2"},
		{`{"pattern":"X$","fixed_strings":true,"word_regexp":true,"case":"sensitive"}`, "1:2-4"},
		{`{"pattern":"X\\$","word_regexp":true,"case":"sensitive"}`, "1:2-4"},
		{`{"pattern":"X\\$","word_regexp":true,"case":"smart"}`, "1:2-4"},
		{`{"pattern":"[X]\\$","word_regexp":true,"case":"insensitive"}`, "1:2-4 3:0-2"},
	}
	for _, be := range backends(t) {
		for _, c := range cases {
			expectSpans(t, be, root, c.req, c.want)
		}
	}
}

// A carriage return inside a bracket class, raw or escaped, still reaches
// ugrep as `\r` now that ugrepRewrite copies classes whole (a raw one splits
// the pattern in two there as anywhere else).
func TestCarriageReturnInClass(t *testing.T) {
	need(t, "ugrep")
	root := t.TempDir()
	write(t, root, "f.txt", "a\rb\nab\na\\b\nb\n")
	for _, pat := range []string{"a[\r]b", "a[\\\r]b", "a[x\r]b"} {
		expectSpans(t, "ugrep", root, `{"pattern":`+mustJSON(pat)+`,"case":"sensitive"}`, "1:0-3")
	}
}

func joinSpaces(s []string) string { return strings.Join(s, " ") }

// expectSpans fails when be's answer to reqJSON has other submatch spans
// than want ("line:start-end", space-separated).
func expectSpans(t *testing.T, be, root, reqJSON, want string) {
	t.Helper()
	if got := joinSpaces(lineSpans(search(t, be, root, reqJSON))); got != want {
		t.Errorf("%s %s: spans %q, want %q", be, reqJSON, got, want)
	}
}

// searchStream runs req like search, with an emit function when stream is
// set, which sends it down the ordered path rather than a walk.
func searchStream(t *testing.T, be, root, reqJSON string, stream bool) Response {
	t.Helper()
	var emit func(Batch)
	if stream {
		emit = func(Batch) {}
	}
	r, err := searchEmit(be, root, reqJSON, emit)
	if err != nil {
		t.Fatalf("%s %s stream=%v: %v", be, reqJSON, stream, err)
	}
	return r
}

// ugrep's \W, \D, Unicode classes and some bracket classes take the
// newline, so `a\Wb` matched "a" at the end of one line and "b" on the next
// (reported as a match on the first line). Vigil spells them without it.
func TestClassesNeverTakeTheNewline(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "a\nb\na\tb\na1b\naxb\n")
	cases := []struct{ pattern, want string }{
		{`a\Wb`, "3:0-3"},
		{`a\Db`, "3:0-3 5:0-3"},
		{`a\P{L}b`, "3:0-3 4:0-3"},
		{`a\PLb`, "3:0-3 4:0-3"},
		{`a\p{Cc}b`, "3:0-3"},
		{`a[[:space:]]b`, "3:0-3"},
		{`a[[:cntrl:]]b`, "3:0-3"},
		{`a[\x00-\x7f]b`, "3:0-3 4:0-3 5:0-3"},
		{`a[\P{L}]b`, "3:0-3 4:0-3"},
		{`a[^\w]b`, "3:0-3"},
	}
	for _, be := range backends(t) {
		for _, c := range cases {
			for _, stream := range []bool{false, true} {
				r := searchStream(t, be, root, `{"pattern":`+mustJSON(c.pattern)+`,"case":"sensitive"}`, stream)
				if got := joinSpaces(lineSpans(r)); got != c.want {
					t.Errorf("%s %q stream=%v: spans %q, want %q", be, c.pattern, stream, got, c.want)
				}
			}
		}
	}
}

// ugrep repeated only the last UTF-8 byte of a non-ASCII \x escape:
// `\x{e9}*a` did not match "a" after an x, and `\xe9+a` matched a lone
// byte 0xc3 followed by 0xa9 bytes.
func TestRepeatedHexEscapeIsOneCharacter(t *testing.T) {
	root := t.TempDir()
	write(t, root, "f.txt", "xa\nééa\n\xc3\xa9\xa9a\n")
	cases := []struct{ pattern, want string }{
		{`\x{e9}*a`, "1:1-2 2:0-5 3:3-4"},
		{`\xe9+a`, "2:0-5"},
		{`\x{E9}{2}a`, "2:0-5"},
		{`\x61+`, "1:1-2 2:4-5 3:3-4"},
	}
	for _, be := range backends(t) {
		for _, c := range cases {
			expectSpans(t, be, root, `{"pattern":`+mustJSON(c.pattern)+`,"case":"sensitive"}`, c.want)
		}
	}
}

// Classes that include a newline without writing one (\W, [[:space:]])
// made ugrep match across lines, while rg is line-oriented; Vigil hands
// ugrep such classes without the newline. A class with a set operation is
// left as written (docs/search.md lists it) and still crosses lines in ugrep,
// but what ugrep reports is cut to the line it starts on: no event's text
// or match holds a line end.
func TestUgrepNewlineClassesCrossLines(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "foo\nbar\nfoo  \n  bar x\n")
	for _, be := range backends(t) {
		if r := search(t, be, root, `{"pattern":"foo[[:space:]]+bar"}`); r.Count != 0 {
			t.Errorf("%s: foo[[:space:]]+bar crossed a line end: %s", be, responseSummary(r))
		}
	}
	rg := search(t, "rg", root, `{"pattern":"foo[[:space:]--[x]]+bar"}`)
	ug := search(t, "ugrep", root, `{"pattern":"foo[[:space:]--[x]]+bar"}`)
	if rg.Count != 0 || ug.Count != 2 || ug.Matches[0].LineNumber != 1 || ug.Matches[1].LineNumber != 3 {
		t.Errorf("rg %d events, ugrep %d (want 0 and 2, on lines 1 and 3): %s", rg.Count, ug.Count, responseSummary(ug))
	}
	for _, be := range []string{"ugrep", "rg"} {
		r := search(t, be, root, `{"pattern":"\\W+"}`)
		for _, m := range r.Matches {
			if strings.ContainsAny(m.Line+m.MatchText, "\n") {
				t.Errorf("%s: line %d holds a line end: %q / %q", be, m.LineNumber, m.Line, m.MatchText)
			}
		}
	}
}
