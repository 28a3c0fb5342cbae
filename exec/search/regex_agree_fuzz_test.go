package search

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRegexBackendsAgree searches a small generated file for a generated
// regex with ugrep and with rg and fails when their matches differ. The
// grammar leaves out what docs/search.md lists under "Differences that remain
// between the backends" (see rxAgreeGen), so what it finds is new. Under
// plain `go test` only the seeds run.
func FuzzRegexBackendsAgree(f *testing.F) {
	// foo, on lines with CRLF and no final newline
	f.Add([]byte("\x00\x02\x00\x07\x00\x00\x06\x00\x00\x06\x00\x00"), []byte("\x06\x0b\x07\x14\x05\x06\x15\x16\x06"), uint8(0))
	// [a-c]+ among non-ASCII letters and invalid UTF-8
	f.Add([]byte("\x00\x00\x05\x00\x08\x00"), []byte("\x04\x0d\x03\x12\x02\x0f\x13\x01"), uint8(0))
	// \w+ over Unicode letters, digits and emoji
	f.Add([]byte("\x00\x00\x05\x0a\x08\x00"), []byte("\x0d\x0e\x0b\x0f\x10\x06\x08\x1e\x0b\x1d\x23\x15"), uint8(0))
	// \d{2} with an Arabic-Indic digit
	f.Add([]byte("\x00\x00\x05\x08\x0b\x02\x00"), []byte("\x0a\x1e\x09\x0b\x09\x15"), uint8(0))
	// (a)(b)?c: an optional group
	f.Add([]byte("\x00\x02\x0a\x00\x00\x00\x00\x00\x0a\x00\x00\x01\x00\x09\x00\x02\x00\x00"), []byte("\x04\x0b\x00\x02\x15\x03\x15"), uint8(0))
	// x*?a: a lazy repeat
	f.Add([]byte("\x00\x01\x00\x03\x0a\x00\x00\x00\x00\x00"), []byte("\x05\x21\x0c\x00\x15"), uint8(0))
	// .+ on CRLF lines
	f.Add([]byte("\x00\x00\x07\x08\x00"), []byte("\x06\x14\x0d\x0f\x14\x16\x07"), uint8(0))
	// \s\S with a tab and a no-break space
	f.Add([]byte("\x00\x01\x05\x09\x00\x05\x0b\x00\x00"), []byte("\x0c\x00\x0b\x1f\x01\x0b\x0d\x15"), uint8(0))
	// a\b: a word boundary at the end
	f.Add([]byte("\x00\x00\x00\x00\x00\x01"), []byte("\x03\x0b\x00\x17\x01\x00\x15"), uint8(0))
	// [^x]{1,2} on invalid UTF-8
	f.Add([]byte("\x00\x00\x05\x01\x0d\x01\x01\x00"), []byte("\x05\x12\x05\x13\x03\x05\x15"), uint8(0))
	// \p{Greek}+ and \p{Lu}
	f.Add([]byte("\x00\x01\x05\x11\x08\x05\x10\x09\x00"), []byte("\x1d\x23\x11\x00\x15\x23\x1a\x15"), uint8(0))
	// case insensitive [a-c]b(?:x)?
	f.Add([]byte("\x00\x02\x05\x00\x00\x00\x01\x00\x1a\x00\x00\x03\x00\x09\x00"), []byte("\x1a\x1b\x05\x15\x03\x15\x1a\x1b\x11\x15"), uint8(1))
	// ^a.*$ on LF lines
	f.Add([]byte("\x01\x02\x00\x00\x00\x07\x07\x09\x00"), []byte("\x03\x15\x21\x15\x00\x15"), uint8(0))
	// \W and [[:space:]] on one line
	f.Add([]byte("\x00\x01\x08\x00\x00\x08\x02\x1d\x01\x01\x00"), []byte("\x00\x17\x0b\x0c\x01\x19\x0b\x05"), uint8(0))
	f.Fuzz(func(t *testing.T, patBytes, fileBytes []byte, mode uint8) {
		need(t, "ugrep")
		need(t, "rg")
		g := &rxAgreeGen{b: patBytes}
		pattern := g.pattern()
		if len(pattern) > 64 {
			// Nested repeats make automata that outgrow ugrep's memory
			// limit (BadArgs "too complex") or take it seconds to
			// build; docs/search.md lists that.
			t.Skip()
		}
		content := g.content(fileBytes, mode&2 != 0)
		caseMode := "sensitive"
		if mode&1 != 0 {
			caseMode = "insensitive"
		}
		root := t.TempDir()
		write(t, root, "f.txt", content)
		pat, err := json.Marshal(pattern)
		if err != nil {
			t.Fatal(err)
		}
		req := `{"pattern":` + string(pat) + `,"path":".","case":"` + caseMode + `","timeout_ms":2000}`
		ugResp, ugErr := searchErr("ugrep", root, req)
		if ugResp.TimedOut {
			// ugrep 3.11 never finishes compiling some patterns
			// (`(?:$){1,}é`); docs/search.md lists it, and the answer is a
			// timed-out one.
			t.Skip()
		}
		ug := diffSummary(ugResp, ugErr)
		rg := diffSummary(searchErr("rg", root, req))
		if ug != rg {
			t.Errorf("%s on %q:\nugrep: %s\nrg:    %s", req, content, ug, rg)
		}
	})
}

// rxAgreeGen turns fuzz bytes into a regex from a grammar both backends
// read alike, and into a file for it. Left out, because docs/search.md
// documents them as differences: alternation (leftmost-longest in ugrep),
// inline flags ((?s), (?x), (?i), (?U)), \A, \z, \B, class set operations
// and nested classes, escapes only one backend takes, empty groups, `\n`,
// counts near ugrep's limit, and patterns that can match empty (rg reports
// empty matches, ugrep does not): a pattern whose shortest match is empty
// gets a literal appended. Some items restrict the file instead; see
// content. Also left out are differences this target found (docs/search.md
// lists them): `^` and `\b` away from the pattern's ends and `\b` at its
// start, and a lazy repeat before a final `\b` (see pattern). What it
// found in Vigil's hands (classes taking the newline in ugrep, a repeated
// non-ASCII `\x` escape, ugrep's `.` taking single bytes) is fixed and
// generated freely.
type rxAgreeGen struct {
	b []byte
	i int
	// What the pattern uses, which decides what the file may hold.
	dollar   bool // `$` matches before a CRLF in ugrep only
	boundary bool // \b: ugrep's word characters are ASCII, rg's Unicode
	lazy     bool // a lazy repeat, which a final \b makes greedy in ugrep
}

func (g *rxAgreeGen) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	c := g.b[g.i]
	g.i++
	return int(c)
}

// Literals, each one character of pattern (escaped where needed).
var rxAgreeLiterals = []string{
	"a", "b", "c", "x", "A", "B", "o", "f", "9", " ", "-", "_",
	"é", "ß", "中", "😀", `\.`, `\t`, "#", `\-`, "É", "α", `\x41`, `\x{e9}`, `\xe9`, `\x{1F600}`,
}

// Items matching one character.
var rxAgreeClasses = []string{
	`[a-c]`, `[^x]`, `[abc]`, `[^a-c]`, `[0-9]`, `[xé]`, `[^é]`, `[a-zA-Z]`,
	`\d`, `\s`, `\w`, `\S`, `[[:alpha:]]`, `[[:digit:]]`, `[[:punct:]]`,
	`\p{L}`, `\p{Lu}`, `\p{Greek}`, `[\d\s]`, `[^\w]`, `[.]`, `[-a]`, `[é-ü]`,
}

// Items that take a newline in ugrep unless Vigil spells them without it.
var rxAgreeNewlineClasses = []string{
	`\W`, `\D`, `[[:space:]]`, `\P{L}`, `\PL`, `\p{Cc}`, `[[:cntrl:]]`,
	`[\x00-\x7f]`, `[\P{L}]`, `[\W]`,
}

// pattern is `^` (at times), a sequence, and `\b` (at times). ugrep 3.11
// handles `^` and `\b` well only at the very start or end of a pattern:
// `\b` between two characters never matches (`a\b-` finds nothing in
// "a-"), an anchor in a group followed by more pattern never matches
// (`(^a)b`, `(?:\ba)b`, `(?:a\b) `), and a group holding only an anchor
// (`(^)a`, `a(\b)`) is an "empty expression". At the start, \b is left
// out too: rg 13 (its issue #1275) does not see the character before where
// a match may start, so `\b.` on "z\t" finds z and not the tab after it.
func (g *rxAgreeGen) pattern() string {
	var b strings.Builder
	if g.next()%4 == 1 {
		b.WriteString("^")
	}
	s, minLen := g.seq(0)
	b.WriteString(s)
	if minLen == 0 {
		b.WriteString(rxAgreeLiterals[g.next()%len(rxAgreeLiterals)])
	}
	// ugrep 3.11 is greedy in a lazy repeat when the pattern ends with
	// \b: `.*?a\b` on "a-a" finds "a-a" where rg finds "a" and "-a".
	if g.next()%4 == 1 && !g.lazy {
		g.boundary = true
		b.WriteString(`\b`)
	}
	return b.String()
}

// seq returns a sequence of pieces and its shortest match in characters.
func (g *rxAgreeGen) seq(depth int) (string, int) {
	n := 1 + g.next()%4
	var b strings.Builder
	total := 0
	for range n {
		s, m := g.piece(depth)
		b.WriteString(s)
		total += m
	}
	return b.String(), total
}

func (g *rxAgreeGen) piece(depth int) (string, int) {
	c := g.next()
	var atom string
	minLen := 1
	switch k := c % 16; {
	case k < 5:
		atom = rxAgreeLiterals[g.next()%len(rxAgreeLiterals)]
	case k < 7:
		atom = rxAgreeClasses[g.next()%len(rxAgreeClasses)]
	case k == 7:
		atom = "."
	case k == 8:
		atom = rxAgreeNewlineClasses[g.next()%len(rxAgreeNewlineClasses)]
	case k == 9:
		// The only anchor inside (see pattern), never repeated
		// (ugrep refuses `a$?`).
		g.dollar = true
		return "$", 0
	case k < 13 && depth < 3:
		inner, m := g.seq(depth + 1)
		if c&0x10 != 0 {
			atom = "(?:" + inner + ")"
		} else {
			atom = "(" + inner + ")"
		}
		minLen = m
	default:
		atom = rxAgreeLiterals[g.next()%len(rxAgreeLiterals)]
	}
	q := g.next()
	switch q % 16 {
	case 0, 1, 2, 3, 4, 5, 6:
		return atom, minLen
	case 7:
		return atom + "*", 0
	case 8:
		return atom + "+", minLen
	case 9:
		return atom + "?", 0
	case 10:
		g.lazy = true
		return atom + []string{"*?", "+?", "??"}[g.next()%3], 0
	case 11:
		m := g.next() % 4
		return atom + "{" + rxAgreeItoa(m) + "}", m * minLen
	case 12:
		m := g.next() % 3
		return atom + "{" + rxAgreeItoa(m) + ",}", m * minLen
	default:
		m := g.next() % 3
		n := m + g.next()%3
		lazy := ""
		if q&0x10 != 0 {
			g.lazy = true
			lazy = "?"
		}
		return atom + "{" + rxAgreeItoa(m) + "," + rxAgreeItoa(n) + "}" + lazy, m * minLen
	}
}

func rxAgreeItoa(n int) string {
	return string(rune('0' + n))
}

// Pieces of the file.
var rxAgreeVocab = []string{
	"a", "b", "c", "ab", "abc", "x", "foo", "bar", "_", "9", "42", " ", "\t",
	"é", "ß", "中", "😀", "É", "\xff", "\xc3", "\r\n", "\n", "\n\n", "-", ".",
	"#", "A", "B", "ü", "α", "٣", "\u00a0", "o", "xa", "a-b", "Ω",
}

// content builds the file from fileBytes, leaving out what would show a
// documented difference for the pattern g made.
func (g *rxAgreeGen) content(fileBytes []byte, finalNewline bool) string {
	var b strings.Builder
	for _, c := range fileBytes {
		w := rxAgreeVocab[int(c)%len(rxAgreeVocab)]
		if g.dollar && w == "\r\n" {
			w = "\n" // `$` matches before a CRLF in ugrep only
		}
		if g.boundary && w != "" && w[0] >= 0x80 {
			w = "z" // \b next to non-ASCII letters
		}
		b.WriteString(w)
		if b.Len() > 200 {
			break
		}
	}
	// ugrep 3.11 can miss a match that ends the file, without a final line
	// end, after a byte of invalid UTF-8 (`\w*A`, `\S*A`, `.*A` on
	// "x\xc3A"; with a final "\n" it finds the A). The docs/search.md lists it.
	if finalNewline || !utf8.ValidString(b.String()) {
		b.WriteString("\n")
	}
	return b.String()
}
