package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
