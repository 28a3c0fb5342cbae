package search

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestParseRGPlainMatch(t *testing.T) {
	cases := []struct {
		line      string
		ok        bool
		err       bool
		path      string
		lineNo    uint64
		start, to int
	}{
		{"./a.txt\x0012:345:err", true, false, "./a.txt", 12, 345, 348},
		// The match may hold ":" and, under -a, NUL bytes: only the first
		// NUL ends the path.
		{"./d/x y.go\x001:0:a:b\x00c", true, false, "./d/x y.go", 1, 0, 5},
		{"./e\x003:7:", true, false, "./e", 3, 7, 7}, // an empty match
		{"./f: binary file matches (found \"\\0\" byte around offset 6)", false, false, "", 0, 0, 0},
		{"./a\x000:1:x", true, true, "", 0, 0, 0},                    // no line 0
		{"./a\x00x:1:x", true, true, "", 0, 0, 0},                    // not a number
		{"./a\x001:x", true, true, "", 0, 0, 0},                      // no offset
		{"./a\x001:", true, true, "", 0, 0, 0},                       // nothing after the line number
		{"./a\x00-1:1:x", true, true, "", 0, 0, 0},                   // a sign
		{"./a\x001:99999999999999999999:x", true, true, "", 0, 0, 0}, // overflow
		{"./a\x001:1125899906842625:x", true, true, "", 0, 0, 0},     // past any file Vigil reads
	}
	for _, c := range cases {
		var pb parseBuf
		rec, ok, err := parseRGPlainMatch([]byte(c.line), &pb)
		if ok != c.ok || (err != nil) != c.err {
			t.Errorf("%q: ok=%v err=%v, want ok=%v err=%v", c.line, ok, err, c.ok, c.err)
			continue
		}
		if !ok || err != nil {
			continue
		}
		if string(rec.path) != c.path || rec.line != c.lineNo || len(rec.spans) != 1 || rec.spans[0] != (span{c.start, c.to}) || len(rec.text) != 0 {
			t.Errorf("%q: got path %q line %d spans %v text %q", c.line, rec.path, rec.line, rec.spans, rec.text)
		}
	}
}

func TestParseRGFilesSearched(t *testing.T) {
	if n, ok := parseRGFilesSearched([]byte("11464 files searched")); !ok || n != 11464 {
		t.Errorf("files searched: %d %v", n, ok)
	}
	for _, bad := range []string{"files searched", "+1 files searched", "1 file searched", "x files searched", "1 files searched "} {
		if _, ok := parseRGFilesSearched([]byte(bad)); ok {
			t.Errorf("%q read as a count", bad)
		}
	}
}

// TestRGPlainFormatIsRgs checks the format against the real rg: a line
// per match with its file offset (a NUL byte is text to it, as it is with
// -a on the ordered path) and the stats block.
func TestRGPlainFormatIsRgs(t *testing.T) {
	backends(t) // fails under CI when rg is missing
	root := t.TempDir()
	write(t, root, "a b:c.txt", "x err err\nno\n\terr:\n")
	write(t, root, "bin", "err\n\x00err\n")
	args := append(append([]string{"--no-config", "-a", "-s"}, rgPlainArgs...), "-e", "err", "--", ".")
	cmd := exec.Command("rg", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	searched := int64(-1)
	stats := false
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		switch {
		case stats:
			if n, ok := parseRGFilesSearched([]byte(l)); ok {
				searched = n
			}
		case l == "":
			stats = true
		default:
			rec, ok, err := parseRGPlainMatch([]byte(l), nil)
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			if ok {
				recs = append(recs, fmt.Sprintf("%s %d %v", rec.path, rec.line, rec.spans))
				continue
			}
			t.Fatalf("unknown line %q", l)
		}
	}
	slices.Sort(recs) // rg's threads finish the two files in either order
	want := []string{"./a b:c.txt 1 [{2 5}]", "./a b:c.txt 1 [{6 9}]", "./a b:c.txt 3 [{14 17}]", "./bin 1 [{0 3}]", "./bin 2 [{5 8}]"}
	if strings.Join(recs, "|") != strings.Join(want, "|") {
		t.Errorf("records %q, want %q", recs, want)
	}
	if searched != 2 {
		t.Errorf("files searched %d", searched)
	}
}

// TestRGWalkPlainOutputCases are the cases where reading lines from the
// file at rg's offsets could go wrong: each must be answered by the rg
// walk itself, the same as the ordered path.
func TestRGWalkPlainOutputCases(t *testing.T) {
	root := t.TempDir()
	filler := strings.Repeat("filler line\n", 8000) // past rg's first buffer and the sniff window
	write(t, root, "late-nul-no-notice.txt", "x err\nerr y\n"+filler+"y err\x00tail\n")
	write(t, root, "late-nul-notice.txt", filler+"\x00\nerr after\n")
	write(t, root, "bom8.txt", "\ufefferr first\nerr second\n")
	write(t, root, "bom16.txt", "\xff\xfee\x00r\x00r\x00\n\x00")
	write(t, root, "crlf.txt", "one err x\r\nerr two\r\n") // no "err$": CRLF and "$" differ between the backends (docs/search.md)
	write(t, root, "many.txt", "err:err err\n\nerr\n")
	write(t, root, "invalid.txt", "\xff err \xfe\n")
	write(t, root, "empty-lines.txt", "\n\nerr\n\n")
	for _, c := range []struct {
		req           string
		backendsAgree bool
	}{
		{`{"pattern":"err"}`, true},
		// "$" must not match before the late NUL (a byte like any other
		// to -a, as on the ordered path).
		{`{"pattern":"err$"}`, true},
		{`{"pattern":"^err"}`, true},
		// Empty matches: ugrep reports none of them (docs/search.md).
		{`{"pattern":"e*","max_results":100000}`, false},
		{`{"pattern":"\\b","max_results":100000}`, false},
		{`{"pattern":"err","max_matches_per_file":1}`, true},
		{`{"pattern":"err","context":1}`, true},
		{`{"pattern":"ERR","case":"insensitive","word_regexp":true}`, true},
	} {
		walk, answered, ordered := agreeCompare(t, root, c.req)
		if !answered {
			t.Errorf("%s: the rg walk handed over", c.req)
		} else if walk != ordered["rg"] {
			t.Errorf("%s: rg walk (-) and ordered rg (+) differ:\n%s", c.req, lineDiff(walk, ordered["rg"]))
		}
		if c.backendsAgree && ordered["rg"] != ordered["ugrep"] {
			t.Errorf("%s: ordered paths disagree (rg -, ugrep +):\n%s", c.req, lineDiff(ordered["rg"], ordered["ugrep"]))
		}
		if !strings.Contains(walk, "late-nul-no-notice.txt") {
			t.Errorf("%s: no match in the file with a late NUL", c.req)
		}
	}
}

// TestRGWalkNewlineNameHandsOver: rg's lines cannot frame a path with a
// line end, so the ordered path answers for such a tree.
func TestRGWalkNewlineNameHandsOver(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a\n./b\x20: binary file matches (found \"\\0\" byte around offset 5)", "err\n")
	write(t, root, "b", "no\n")
	write(t, root, "plain.txt", "err\n")
	r, answered := runBoth(t, root, `{"pattern":"err"}`)
	if answered || r.Count != 2 {
		t.Fatalf("answered=%v %s", answered, eventsJSON(r))
	}
}

// FuzzParseRGPlain: no input panics, and a well-formed match line reads
// back as written.
func FuzzParseRGPlain(f *testing.F) {
	f.Add([]byte("./a.txt"), uint64(3), uint64(10), []byte("err"))
	f.Add([]byte("./a b"), uint64(1), uint64(0), []byte(""))
	f.Add([]byte("./x\n"), uint64(9), uint64(1<<40), []byte("a\x00:b"))
	f.Fuzz(func(t *testing.T, path []byte, line, off uint64, match []byte) {
		raw := append(append([]byte{}, path...), match...)
		_, _, _ = parseRGPlainMatch(raw, nil)
		_, _ = parseRGFilesSearched(raw)
		if len(path) == 0 || strings.IndexByte(string(path), 0) >= 0 || line == 0 || line > 1<<50 || off > 1<<50 {
			return
		}
		l := fmt.Appendf(nil, "%s\x00%d:%d:%s", path, line, off, match)
		var pb parseBuf
		rec, ok, err := parseRGPlainMatch(l, &pb)
		if !ok || err != nil {
			t.Fatalf("%q: ok=%v err=%v", l, ok, err)
		}
		if string(rec.path) != string(path) || rec.line != line || len(rec.spans) != 1 ||
			rec.spans[0] != (span{int(off), int(off) + len(match)}) {
			t.Fatalf("%q: got %q %d %v", l, rec.path, rec.line, rec.spans)
		}
	})
}
