package search

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

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
