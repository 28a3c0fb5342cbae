// Regression tests from a review of the rg walk reading rg's plain
// --only-matching output (rgplain.go, finishFile) and of backend output
// through a memfd (follow.go). Each test compares the rg walk with the
// ordered rg path only (ugrep's own differences are those docs/search.md lists
// business), or checks for leaks and races.
package search

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// walkVsOrderedRG runs req through the rg walk (when eligible) and through
// the ordered rg path; answered is false when the walk handed over.
func walkVsOrderedRG(t *testing.T, root, reqJSON string) (walk string, answered bool, ordered string) {
	t.Helper()
	walk, answered, all := agreeCompare(t, root, reqJSON, "rg")
	return walk, answered, all["rg"]
}

// expectWalkAsOrderedRG fails when the rg walk answers (no fallback) with
// something other than the ordered rg path's answer.
func expectWalkAsOrderedRG(t *testing.T, root, reqJSON string) {
	t.Helper()
	walk, answered, ordered := walkVsOrderedRG(t, root, reqJSON)
	if answered && walk != ordered {
		t.Errorf("%s: rg walk answered without falling back (walk -, ordered rg +):\n%s", reqJSON, lineDiff(walk, ordered))
	}
}

// When rg's searcher matches a line but the printer finds no match on
// it, rg 13 -o prints the WHOLE line as the "match" (--json says
// "submatches":[]). It happens whenever a line's only match is the empty
// one at the very end of an unterminated last line (the printer drops an
// empty match at the end of the bytes): "$", `\s*$`, "a|$", "x*" with
// word_regexp... The walk once turned that into a submatch spanning the
// line (match_text = the line, column 1) where the ordered path gives no
// submatch and match_text "" (now: wholeLastLine).
func TestRGWalkEmptyMatchAtEndOfUnterminatedFile(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "abc\nfoo")   // last line without a line end
	write(t, root, "b.txt", "abc\nfoo\r") // ... ending in a lone CR
	write(t, root, "c.txt", "\r")         // a file that is a lone CR: span clamped to {0,0}
	for _, req := range []string{
		`{"pattern":"$"}`,
		`{"pattern":"\\s*$"}`,
		`{"pattern":"a|$"}`,
		`{"pattern":"x*","word_regexp":true}`,
		`{"pattern":"$","context":1}`,
	} {
		expectWalkAsOrderedRG(t, root, req)
	}
}

// The search root's own name is printed by rg in every path
// ("./<root rel>/f.txt"), but walkTally.newline only looks at paths
// relative to the order root, which for an absolute request path is the
// search root itself. A root named `a: binary file matches (found "\0"
// byte around offset 5)` + "\n" + "./b" makes rg's line for <root>/f.txt
// split into a valid binary notice for "./a" and a valid match line for
// "./b/f.txt"; both names exist below the root, so the walker's
// cross-check passes, and the walk once reported b/f.txt:1 "xyz" (which
// does not even contain the pattern) instead of f.txt:1 "foo". Such a root
// now takes the ordered path (rgWalkEligible).
func TestRGWalkNewlineInSearchRootName(t *testing.T) {
	root := t.TempDir()
	dir := "a: binary file matches (found \"\\0\" byte around offset 5)\n./b"
	write(t, root, dir+"/f.txt", "foo\n")
	write(t, root, dir+"/a", "nothing here\n")
	write(t, root, dir+"/b/f.txt", "xyz\n")
	pj, _ := json.Marshal(filepath.Join(root, dir)) // absolute: the order root is the search root
	expectWalkAsOrderedRG(t, root, `{"pattern":"foo","path":`+string(pj)+`}`)
}

// rg 13's word matcher gives different matches with and without
// mmap for a pattern that can match empty ("b?" -w on "x\nb\tx": "b" at
// column 1 without mmap, "" at column 2 with it). rg uses mmap for an
// explicit list of at most 10 files, so the ordered path's answer depends
// on how many files are in its chunk, while the walk never uses mmap: with
// one file the two disagreed, with 11 they agreed. backendArgs now passes
// --no-mmap.
func TestRGWordEmptyMatchDoesNotDependOnMmap(t *testing.T) {
	for _, n := range []int{1, 11} {
		root := t.TempDir()
		write(t, root, "a.txt", "x\nb\tx\n")
		for i := 1; i < n; i++ {
			write(t, root, fmt.Sprintf("pad%02d.txt", i), "nothing\n")
		}
		t.Run(fmt.Sprintf("files=%d", n), func(t *testing.T) {
			expectWalkAsOrderedRG(t, root, `{"pattern":"b?","word_regexp":true}`)
		})
	}
}

// NUL bytes past the sniff window (in rg's first 64 KiB buffer,
// in later ones, on a matching line, straddling a buffer boundary), BOMs,
// CRLF, lone CRs, invalid UTF-8, a 600 KB line, with -m, context and -w,
// for patterns that do and do not make the walk use -a.
func TestRGWalkBinaryBOMAndEncodingsAgree(t *testing.T) {
	y := func(n int) string { return strings.Repeat("y", n) }
	contents := []string{
		y(9000) + "\nfoo\nbar\x00foo\nfoo\n",
		"foo\n" + y(70000) + "\nbar\x00baz\nfoo\n",
		"foo\n" + y(200000) + "\nbar\x00foo\nqux\n",
		y(8191) + "\x00foo\n",
		y(8192) + "\x00foo\n",
		y(65530) + "foo\x00foo\n" + "foo\n",
		y(65536*3+5) + "\nfoo\x00\nfoo\n",
		"foo\x00\n",
		"\xef\xbb\xbffoo bar\nfoo\n",
		"\xff\xfef\x00o\x00o\x00\n\x00",
		"\xfe\xff\x00f\x00o\x00o\x00\n",
		y(9000) + "\nfoo\r\nx\x00y\r\nfoo\n",
		y(300000) + "foo" + y(300000) + "\nfoo\n",
		"abc\r\nfoo\r\n\r\nfoo\rbar\n",
		"caf\xc3\xa9 foo\n\xff\xfefoo\n",
	}
	root := t.TempDir()
	for i, c := range contents {
		write(t, root, fmt.Sprintf("f%02d.txt", i), c)
	}
	for _, pat := range []string{"foo", "^", `\x00`, ".", "foo$", `\bfoo\b`, "y+f"} {
		for _, extra := range []string{``, `,"max_matches_per_file":1`, `,"context":1`, `,"word_regexp":true`} {
			pj, _ := json.Marshal(pat)
			expectWalkAsOrderedRG(t, root, `{"pattern":`+string(pj)+extra+`}`)
		}
	}
}

// Names with ":", tabs, CR, backslashes, invalid UTF-8, NFC/NFD
// twins, a leading "-", and names ending in rg's binary notice text (one
// of them with a late NUL, so the notice line for it carries the text
// twice), searched from the root and from absolute and relative subdirs.
func TestRGWalkAwkwardNamesAgree(t *testing.T) {
	names := []string{"a:b.txt", "a:1:2:x.txt", "1:2:3", "sp ace.txt", "tab\tx.txt", "cr\rname.txt", "back\\slash.txt",
		"bad\xffname.txt", "-dash.txt", "caf\u00e9.txt", "cafe\u0301.txt", "d\u00e9/x.txt", "de\u0301/x.txt",
		"x: binary file matches (found \"\\0\" byte around offset 5)", "y: binary file matches (found \"\\0\" byte around offset 5)"}
	for _, sub := range []string{"", "s:1:2", "de\u0301", "a b"} {
		root := t.TempDir()
		for _, n := range names {
			c := "foo\n"
			if strings.HasPrefix(n, "x: binary") {
				c = "foo\n" + strings.Repeat("x", 9000) + "\x00foo\n"
			}
			write(t, root, filepath.Join(sub, n), c)
		}
		paths := []string{""}
		if sub != "" {
			a, _ := json.Marshal(filepath.Join(root, sub))
			r, _ := json.Marshal(sub)
			paths = []string{`,"path":` + string(a), `,"path":` + string(r)}
		}
		for _, p := range paths {
			expectWalkAsOrderedRG(t, root, `{"pattern":"foo"`+p+`}`)
			expectWalkAsOrderedRG(t, root, `{"pattern":"foo","context":1`+p+`}`)
		}
	}
}

// ~25 MB of rg output, so followReader punches
// holes several times, agrees byte for byte with the ordered path.
func TestRGWalkLargeOutputAgrees(t *testing.T) {
	root := denseTree(t, 12, 20000)
	walk, answered, ordered := walkVsOrderedRG(t, root, `{"pattern":"foo","max_results":10000000}`)
	if !answered {
		t.Fatal("the rg walk handed over")
	}
	if walk != ordered {
		t.Errorf("rg walk and ordered path differ (%d vs %d bytes)", len(walk), len(ordered))
	}
}

// Small timeouts and cancellations at random points while the backend (rg
// or ugrep) writes dense output and the finisher reads files: no panic, no
// match that is not one, no goroutine or backend process left.
func TestWalkTimeoutsAndCancelLeaveNothing(t *testing.T) {
	root := denseTree(t, 300, 2000)
	for i := 0; i < 300; i += 7 {
		// A late NUL: searched again.
		write(t, root, fmt.Sprintf("d%02d/f%05d.txt", i%50, i), strings.Repeat("foo bar foo\n", 2000)+strings.Repeat("z", 9000)+"\x00foo\n")
	}
	before := runtime.NumGoroutine()
	for k := 0; k < 60; k++ {
		req, _ := DecodeRequest([]byte(fmt.Sprintf(`{"pattern":"foo","max_results":10000000,"timeout_ms":%d}`, 1+k%25)))
		opts := DefaultOptions(root)
		opts.Backend = []string{"rg", "ugrep"}[k%2] // the ugrep walk too
		p, err := prepare(context.Background(), req, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if k%3 == 0 {
			go func() { time.Sleep(time.Duration(k%10) * time.Millisecond); cancel() }()
		}
		r, fb, err := p.runWalk(ctx, req.Pattern)
		cancel()
		if !fb && err == nil {
			for _, m := range r.Matches {
				if m.Type == "match" && !strings.Contains(m.Line, "foo") {
					t.Fatalf("not a match: %+v", m)
				}
			}
		}
	}
	expectNothingLeft(t, before)
}
