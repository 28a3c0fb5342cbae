package search

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileDeletedMidScan(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "x\n")
		write(t, root, "b.txt", "x\n")
		req, _ := DecodeRequest([]byte(`{"pattern":"x"}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		p, err := prepare(t.Context(), req, opts)
		if err != nil {
			t.Fatal(err)
		}
		// Walk first, delete, then search the chunk: what a concurrent rm does.
		var items []item
		w := &walker{ctx: t.Context(), pl: p.pl, e: p.e, deny: p.deny, emit: func(it item) bool { items = append(items, it); return true }}
		w.run()
		os.Remove(filepath.Join(root, "a.txt"))
		c := &chunk{items: items, results: make(chan fileResult, 10)}
		p.searchChunk(t.Context(), c)
		var errs []string
		var hits int
		for fr := range c.results {
			if fr.err != nil {
				errs = append(errs, fr.err.Path+": "+fr.err.Error)
			}
			hits += len(fr.events)
		}
		if mustJSON(errs) != `["a.txt: no such file or directory"]` || hits != 1 {
			t.Fatalf("errs=%v hits=%d", errs, hits)
		}
	})
}
