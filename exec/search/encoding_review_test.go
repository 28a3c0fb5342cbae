package search

// Cases from a review of ugrep's offset records (Vigil reading the matched
// lines itself): each either guards a finding that was fixed or pins down
// a behaviour that must hold.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fixed finding. A UTF-16LE file (with BOM, no NUL byte, so it is text
// for both backends) holding a lone low surrogate before the match: ugrep
// 3.11 transcodes the lone unit to a 5-byte sequence (f8 88 80 80 80) while
// Vigil decoded it to U+FFFD (3 bytes), so ugrep's %b offsets did not fit
// Vigil's text: resolveLines saw the match "past the end" and ugrep
// reported "file changed while it was searched" where rg reports the
// match. Now Vigil reads the file as ugrep does and moves its offsets.
func TestUTF16LoneLowSurrogateSpuriousError(t *testing.T) {
	root := t.TempDir()
	write(t, root, "u.txt", "\xff\xfe\x34\xdc\x2d\x4e") // BOM, U+DC34 (lone), U+4E2D 中
	want := ""
	eachBackend(t, func(t *testing.T, be string) {
		r := search(t, be, root, `{"pattern":"中"}`)
		got := responseSummary(r)
		t.Logf("%s", got)
		if len(r.Errors) != 0 {
			t.Errorf("%s: spurious per-file error: %+v", be, r.Errors)
		}
		if len(r.Matches) != 1 || r.Matches[0].MatchText != "中" {
			t.Errorf("%s: want one match of 中, got %s", be, got)
		}
		if want == "" {
			want = got
		} else if got != want {
			t.Errorf("backends disagree:\n%s\n%s", want, got)
		}
	})
}

// Fixed finding. Same cause with a lone high surrogate: ugrep folds it
// and the next unit into one 5-byte sequence, so its offsets are 1 byte
// short of Vigil's decoded text: the submatch cut through characters
// (match_text "\ufffd\ufffd\ufffd", column 6). ugrep still never sees
// the unit it folded (a difference docs/search-backends.md lists), but what it reports
// lands on the match.
func TestUTF16LoneHighSurrogateSplitsCharacters(t *testing.T) {
	root := t.TempDir()
	write(t, root, "u.txt", "\xff\xfe\x34\xd8\x2d\x4e\x2d\x4e") // BOM, U+D834 (lone), 中, 中
	eachBackend(t, func(t *testing.T, be string) {
		r := search(t, be, root, `{"pattern":"中"}`)
		t.Logf("%s", responseSummary(r))
		for _, m := range r.Matches {
			if m.MatchText != "中" {
				t.Errorf("%s: match_text %q (column %d) in line %q: span not on the match", be, m.MatchText, m.Column, m.Line)
			}
			for _, s := range m.Submatches {
				if got := m.Line[s.Start:s.End]; got != "中" {
					t.Errorf("%s: submatch [%d,%d) = %q", be, s.Start, s.End, got)
				}
			}
		}
	})
}

// Fixed finding. A file name with
// both a double quote and a newline: ugrep's %h escapes the quote, so the
// first physical line of the record holds an even number of '"' and
// runBackend's odd-quote test does not read on; the record is malformed,
// the file's match is lost and the search ends with exit_code 2 and
// "ugrep: output could not be parsed". rg finds it.
func TestNameWithQuoteAndNewline(t *testing.T) {
	root := t.TempDir()
	write(t, root, "q\"\nx.txt", "foo\n")
	write(t, root, "plain.txt", "foo\n")
	eachBackend(t, func(t *testing.T, be string) {
		r := search(t, be, root, `{"pattern":"foo"}`)
		if len(r.Matches) != 2 || *r.ExitCode != 0 || r.Stderr != "" {
			t.Errorf("%s: want 2 matches and exit 0, got %s", be, responseSummary(r))
		}
	})
}

// Guard. Offsets vs decoded text for the encodings and line
// endings both backends treat specially, with and without context lines:
// ugrep (offsets + Vigil's read), rg and the rg walk must agree. (Left
// out: `中$` on an odd-length UTF-16 file, where ugrep drops the odd byte
// and rg makes it U+FFFD: a backend difference, present before the change.)
func TestEncodingsAndLineEndsAgree(t *testing.T) {
	long := strings.Repeat("foo ", 100000) // one line past ugrep's 256 KiB window
	cases := map[string]string{
		"bom":       "\ufeffab foo\nx\nfoo\n",
		"bomcrlf":   "\ufefffoo\r\nx\r\nfoo\r\n",
		"crlf":      "\r\nfoo\r\nbar foo\r\n\r\n",
		"lonecr":    "foo\rbar foo\rx\ny\rfoo",
		"nonl":      "a\nb\nfoo",
		"invalid":   "a\xff foo\xfe\nx\xc3\nfoo\xe2\x82\n",
		"u16le":     "\xff\xfe\x2d\x4e\x87\x65\x2d\x4e",
		"u16be":     "\xfe\xff\x4e\x2d\x65\x87\x4e\x2d",
		"u16odd":    "\xff\xfe\x2d\x4e\x2d\x4e\x2d",
		"u16pair":   "\xff\xfe\x34\xd8\x1e\xdd\x2d\x4e", // U+1D11E then 中
		"long":      long + "\n" + long + "x\nfoo",
		"latenul":   strings.Repeat("foo\n", 3000) + "\x00foo\n", // NUL past 8 KiB: text
		"emptyline": "\n\nfoo\n\n",
	}
	reqs := []string{`{"pattern":"foo|中"}`, `{"pattern":"foo|中","context":2}`, `{"pattern":"^"}`, `{"pattern":"o\\b"}`, `{"pattern":"foo|中","max_results":3,"context":1}`}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "f.txt", content)
			for _, req := range reqs {
				expectAgree(t, root, req)
			}
		})
	}
}

// Guard. The max_results cut with context lines (which count
// toward max_results), with the per-file line cap (max_results + 1, rg -m)
// and the chunk that stops building events: for every k the answer is the
// first k events of the uncut answer, truncated exactly when more exist,
// and files after the cut leave no trace (errors, binary files).
func TestMaxResultsIsPrefixOfUncut(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "foo\nfoo\nx\nfoo\nfoo\nfoo\ny\nz\nfoo\n")
	write(t, root, "b.bin", "foo\x00\nfoo\nfoo\n")
	write(t, root, "c.txt", "x\nfoo\n")
	write(t, root, "d.txt", strings.Repeat("foo foo\n", 20))
	if err := os.Symlink("missing", filepath.Join(root, "e.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "f.txt", "foo\n")
	for _, extra := range []string{``, `,"context":1`, `,"context":3`, `,"max_matches_per_file":2`, `,"max_matches_per_file":7,"context":2`} {
		eachBackend(t, func(t *testing.T, be string) {
			full := search(t, be, root, `{"pattern":"foo","max_results":100000`+extra+`}`)
			if full.Truncated {
				t.Fatal("full answer truncated")
			}
			for k := 1; k <= len(full.Matches)+1; k++ {
				r := search(t, be, root, fmt.Sprintf(`{"pattern":"foo","max_results":%d%s}`, k, extra))
				n := min(k, len(full.Matches))
				want := eventsJSON(Response{Matches: full.Matches[:n]})
				if got := eventsJSON(r); got != want {
					t.Errorf("%s k=%d%s: not the uncut prefix:\n%s", be, k, extra, lineDiff(want, got))
				}
				if r.Truncated != (k < len(full.Matches)) {
					t.Errorf("%s k=%d%s: truncated=%v with %d events uncut", be, k, extra, r.Truncated, len(full.Matches))
				}
				lastPath := r.Matches[len(r.Matches)-1].Path
				for _, e := range r.Errors {
					if r.Truncated && e.Path > lastPath {
						t.Errorf("%s k=%d%s: error for %s past the cut at %s", be, k, extra, e.Path, lastPath)
					}
				}
			}
		})
	}
}

// Guard. Binary files found only after they matched (ugrep,
// pattern that cannot match NUL): counted in files_scanned, absent from
// errors[] and events, and they do not use up max_results for the files
// after them in the same chunk; same answer as rg (sniffed before).
func TestBinaryAfterMatchCountsAndCut(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.bin", strings.Repeat("foo\n", 50)+"\x00")
	write(t, root, "b.bin", strings.Repeat("x", 8191)+"\x00foo\n")
	write(t, root, "c.txt", "foo\n")
	write(t, root, "d.bin", "\x00"+strings.Repeat("foo\n", 50))
	write(t, root, "e.txt", strings.Repeat("y", 8192)+"\x00foo\n") // NUL past the window: text
	for _, req := range []string{`{"pattern":"foo"}`, `{"pattern":"foo","max_results":1}`, `{"pattern":"foo","max_results":2,"context":1}`, `{"pattern":"fo+"}`} {
		expectAgree(t, root, req)
		eachBackend(t, func(t *testing.T, be string) {
			r := search(t, be, root, req)
			if r.FilesScanned != 5 && !r.Truncated {
				t.Errorf("%s %s: files_scanned %d, want 5", be, req, r.FilesScanned)
			}
			if len(r.Errors) != 0 {
				t.Errorf("%s %s: errors %+v", be, req, r.Errors)
			}
			for _, m := range r.Matches {
				if strings.HasSuffix(m.Path, ".bin") {
					t.Errorf("%s %s: event from binary %s", be, req, m.Path)
				}
			}
			if len(r.Matches) == 0 || r.Matches[0].Path != "c.txt" {
				t.Errorf("%s %s: first event should be c.txt: %s", be, req, responseSummary(r))
			}
		})
	}
}

// Guard. Event texts never alias the pooled read buffers: an
// answer serialises the same after many other files were read into the
// recycled buffers (with context lines, BOM stripping and line resolution).
func TestPooledBuffersNotAliased(t *testing.T) {
	a := t.TempDir()
	write(t, a, "x.txt", "\ufeffbefore\nfoo one\nafter\n")
	write(t, a, "y.txt", "ctx\nfoo two\n")
	b := t.TempDir()
	for i := range 200 {
		write(t, b, fmt.Sprintf("f%03d.txt", i), strings.Repeat(fmt.Sprintf("ZZZZ%d foo ZZZZ\n", i), 50))
	}
	eachBackend(t, func(t *testing.T, be string) {
		for _, req := range []string{`{"pattern":"foo"}`, `{"pattern":"foo","context":1}`} {
			r := search(t, be, a, req)
			before := responseSummary(r)
			for range 3 {
				search(t, be, b, `{"pattern":"foo","context":1}`)
				search(t, be, b, `{"pattern":"foo"}`)
			}
			if after := responseSummary(r); after != before {
				t.Errorf("%s %s: events changed after later searches:\n%s", be, req, lineDiff(before, after))
			}
		}
	})
}

// Guard. explainStderr places warnings for names with newlines
// (and names that are prefixes of others) and keeps unrelated lines.
func TestExplainStderrNewlineNames(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a\nb", "x")
	write(t, root, "a", "x")
	write(t, root, "c: d", "x")
	c := &chunk{items: []item{
		{abs: filepath.Join(root, "a\nb"), arg: "./a\nb", rel: "a\nb"},
		{abs: filepath.Join(root, "a"), arg: "./a", rel: "a"},
		{abs: filepath.Join(root, "c: d"), arg: "./c: d", rel: "c: d"},
	}}
	index := map[string]int{"./a\nb": 0, "./a": 1, "./c: d": 2}
	p := &prepared{}
	stderr := "ugrep: warning: ./a\nb: Permission denied\nsomething else\nugrep: warning: ./a: Input/output error\nugrep: warning: ./c: d: Is a directory\n"
	rest := p.explainStderr(c, stderr, index)
	if rest != "something else" {
		t.Errorf("unexplained %q", rest)
	}
	for i, want := range []string{"permission denied", "input/output error", "is a directory"} {
		if c.items[i].err != want {
			t.Errorf("%q: err %q, want %q", c.items[i].arg, c.items[i].err, want)
		}
	}
}

// Guard. ugrep-only patterns with a newline (rg rejects them):
// multi-line matches resolve to their first line without a spurious
// "file changed" error, and fuzzy matches land on the text they matched.
func TestUgrepMultilineAndFuzzy(t *testing.T) {
	root := t.TempDir()
	write(t, root, "m.txt", "ab\ncb\ncd\n\n\nx")
	write(t, root, "z.txt", "hello wrld\nhéllo wörld\nxx helo\n")
	for _, c := range []struct{ req, want string }{
		{`{"pattern":"b\\nc"}`, "m.txt:1:b m.txt:2:b"},
		{`{"pattern":"\\n[cx]"}`, "m.txt:1: m.txt:2: m.txt:5: z.txt:2:"},
		{`{"pattern":"world","fuzzy":1}`, "z.txt:1:wrld z.txt:2:wörld"},
	} {
		r := search(t, "ugrep", root, c.req)
		var got []string
		for _, m := range r.Matches {
			got = append(got, fmt.Sprintf("%s:%d:%s", m.Path, m.LineNumber, m.MatchText))
		}
		if strings.Join(got, " ") != c.want || len(r.Errors) != 0 {
			t.Errorf("%s: got %q errors %+v, want %q", c.req, got, r.Errors, c.want)
		}
	}
}

// Fixed finding. sniffAfter's doc says "a file over
// max_file_size_bytes is never read", but the size was only checked by
// statEach before ugrep runs; appendFileEventsWhy then read the whole file
// (readRegularInto: fstat size + 64 KiB) with no cap. A file that grew
// past the cap between the stat and Vigil's read (a log being written) is
// read entirely into memory, and its lines are shown. Simulated here by
// calling fileEvents on a ugrep record for a file already over the cap.
func TestReadForLinesIgnoresMaxFileSize(t *testing.T) {
	root := t.TempDir()
	write(t, root, "big.txt", "foo\n"+strings.Repeat("x", 1<<20))
	p := &prepared{be: BackendInfo{Name: "ugrep"}, pat: "foo", e: effective{maxSize: 1000, maxResults: 10}}
	var f fileRecs
	f.add(record{line: 1, spans: []span{{0, 3}}}, 0)
	evs, why := p.fileEvents(item{abs: filepath.Join(root, "big.txt"), rel: "big.txt"}, &f)
	if len(evs) != 0 || why == "" {
		t.Errorf("a file over max_file_size_bytes (1 MiB > 1000) was read for its lines: %d events, why %q", len(evs), why)
	}
}

// Guard. Chunks past 64 files (statEach's parallel branch, ugrep
// given binaries) mixed with binaries, BOM files and files without a final
// newline agree with rg, also when max_results cuts inside a later chunk.
func TestManyFilesSniffAfterAgree(t *testing.T) {
	root := t.TempDir()
	for i := range 400 {
		var c string
		switch i % 5 {
		case 0:
			c = "foo\x00bar\nfoo\n"
		case 1:
			c = "\ufefffoo\nbar\n"
		case 2:
			c = "x\r\nfoo"
		case 3:
			c = strings.Repeat("z", 9000) + "\x00 foo\n"
		default:
			c = "nothing\n"
		}
		write(t, root, fmt.Sprintf("d%d/f%03d.txt", i%7, i), c)
	}
	for _, req := range []string{`{"pattern":"foo"}`, `{"pattern":"foo","context":1,"max_results":150}`, `{"pattern":"foo","max_results":7}`} {
		expectAgree(t, root, req)
	}
}
