package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestT_LS_PARSE_01(t *testing.T) {
	// Both parsers, fed real output captured from the installed backends.
	rg := []byte(`{"type":"match","data":{"path":{"text":"./a.txt"},"lines":{"text":"x err\r\n"},"line_number":3,"absolute_offset":9,"submatches":[{"match":{"text":"err"},"start":2,"end":5}]}}`)
	rec, ok, err := parseRGLine(rg)
	if err != nil || !ok || string(rec.path) != "./a.txt" || rec.line != 3 || string(rec.text) != "x err" || rec.spans[0] != (span{2, 5}) {
		t.Fatalf("rg: %+v ok=%v err=%v", rec, ok, err)
	}
	if _, ok, err := parseRGLine([]byte(`{"type":"begin","data":{"path":{"text":"a"}}}`)); ok || err != nil {
		t.Fatalf("begin: ok=%v err=%v", ok, err)
	}
	// ugrep reports where the match is (byte offset and length in the
	// file); resolveLines takes the line from the file's bytes.
	ug := []byte(`{"f":"./a \"q\".txt","n":2,"b":8,"d":3}` + "\n")
	rec, err = parseUgrepLine(ug)
	if err != nil || string(rec.path) != `./a "q".txt` || rec.line != 2 || rec.spans[0] != (span{8, 11}) {
		t.Fatalf("ugrep: %+v err=%v", rec, err)
	}
	var f fileRecs
	f.add(rec, 10)
	if !resolveLines([]byte("one\nét err\r\nthree"), &f) || string(f.text) != "ét err" || f.spans[0] != (span{4, 7}) {
		t.Fatalf("ugrep resolved: %q %v", f.text, f.spans)
	}
	// End to end: match and context events.
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "one\ntwo err\nthree\n")
		r := search(t, be, root, `{"pattern":"err","context":1}`)
		want := `{"type":"context","data":{"path":{"text":"a.txt"},"line_number":1,"lines":{"text":"one"}}}
{"type":"match","data":{"path":{"text":"a.txt"},"line_number":2,"column":5,"lines":{"text":"two err"},"match_text":"err","submatches":[{"start":4,"end":7}]}}
{"type":"context","data":{"path":{"text":"a.txt"},"line_number":3,"lines":{"text":"three"}}}
`
		if got := eventsJSON(r); got != want {
			t.Fatalf("got\n%s", got)
		}
	})
}

func orderCorpus(t *testing.T) string {
	root := t.TempDir()
	for _, p := range []string{"a/b/c.txt", "a+.txt", "a-b.txt", "a.txt", "b.txt", "a/z.txt", "A.txt", "é.txt", "ab/x.txt"} {
		write(t, root, p, "hit\n")
	}
	return root
}

func TestT_LS_ORD_01(t *testing.T) {
	want := []string{"A.txt", "a+.txt", "a-b.txt", "a.txt", "a/b/c.txt", "a/z.txt", "ab/x.txt", "b.txt", "é.txt"}
	eachBackend(t, func(t *testing.T, be string) {
		root := orderCorpus(t)
		first := search(t, be, root, `{"pattern":"hit"}`)
		if got := paths(first); !slices.Equal(got, want) {
			t.Fatalf("order %q, want %q", got, want)
		}
		for range 3 {
			if again := search(t, be, root, `{"pattern":"hit"}`); eventsJSON(again) != eventsJSON(first) {
				t.Fatal("order changed between identical runs")
			}
		}
	})
}

func TestT_LS_TRUNC_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "x\nx\nx\n")
		write(t, root, "b.txt", "x\n")
		r := search(t, be, root, `{"pattern":"x","max_results":3}`)
		if !r.Truncated || r.Count != 3 || paths(r)[0] != "a.txt" || len(paths(r)) != 1 {
			t.Fatalf("truncated=%v count=%d paths=%v", r.Truncated, r.Count, paths(r))
		}
		if !strings.Contains(r.Content, "[truncated") {
			t.Fatalf("content lacks the note: %q", r.Content)
		}
	})
}

func TestT_LS_TRUNC_02(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "x\nx\n")
		write(t, root, "b.txt", "x\n")
		r := search(t, be, root, `{"pattern":"x","max_results":3}`)
		if r.Truncated || r.Count != 3 {
			t.Fatalf("truncated=%v count=%d", r.Truncated, r.Count)
		}
	})
}

func TestT_LS_CASE_01(t *testing.T) {
	if hasASCIIUpper("straße é") || !hasASCIIUpper("fooBar") || hasASCIIUpper("école") {
		t.Fatal("smartcase detection wrong")
	}
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "foo\nFOO\nÉCOLE\nécole\nKELVIN \u212a\n")
		count := func(req string) int { return search(t, be, root, req).Count }
		if n := count(`{"pattern":"foo"}`); n != 2 {
			t.Fatalf("smart lower: %d", n)
		}
		if n := count(`{"pattern":"FOO"}`); n != 1 {
			t.Fatalf("smart upper: %d", n)
		}
		if n := count(`{"pattern":"école"}`); n != 1 { // ASCII-only folding: É is not é
			t.Fatalf("smart non-ASCII: %d", n)
		}
		if n := count(`{"pattern":"foo","case":"sensitive"}`); n != 1 {
			t.Fatalf("sensitive: %d", n)
		}
		if n := count(`{"pattern":"FoO","case":"insensitive","fixed_strings":true}`); n != 2 {
			t.Fatalf("insensitive fixed: %d", n)
		}
		r := search(t, be, root, `{"pattern":"k","case":"insensitive"}`)
		if r.Count != 1 || r.Matches[0].MatchText != "K" {
			t.Fatalf("Kelvin sign must not fold to k: %v", eventsJSON(r))
		}
	})
}

func TestT_LS_ENC_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "bad.txt", "\xfa\xfb err \xc3\n")
		r := search(t, be, root, `{"pattern":"err"}`)
		if r.Count != 1 || r.Matches[0].Line != "\uFFFD\uFFFD err \uFFFD" || r.Matches[0].Column != 4 {
			t.Fatalf("%s", eventsJSON(r))
		}
		if again := search(t, be, root, `{"pattern":"err"}`); eventsJSON(again) != eventsJSON(r) {
			t.Fatal("lossy decoding not deterministic")
		}
	})
	// rg's base64 "bytes" form.
	rec, ok, err := parseRGLine([]byte(`{"type":"match","data":{"path":{"bytes":"Li//LnR4dA=="},"lines":{"bytes":"/yBlcnIK"},"line_number":1,"absolute_offset":0,"submatches":[{"match":{"text":"err"},"start":2,"end":5}]}}`))
	if err != nil || !ok || string(rec.path) != "./\xff.txt" || string(rec.text) != "\xff err" || lossy(string(rec.text)) != "\uFFFD err" {
		t.Fatalf("%q %q %v %v", rec.path, rec.text, ok, err)
	}
}

func TestT_LS_MPF_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "x x\nx\nx\nx\n")
		write(t, root, "b.txt", "x\n")
		r := search(t, be, root, `{"pattern":"x","max_matches_per_file":2}`)
		if got := mustJSON(paths(r)); r.Count != 3 || got != `["a.txt","b.txt"]` {
			t.Fatalf("count=%d %s", r.Count, eventsJSON(r))
		}
	})
}

func TestT_LS_MF_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		for _, n := range []string{"a", "b", "c", "d"} {
			write(t, root, n+".txt", "x\n")
		}
		r := search(t, be, root, `{"pattern":"x","max_files":2}`)
		if r.FilesScanned != 2 || mustJSON(paths(r)) != `["a.txt","b.txt"]` {
			t.Fatalf("files_scanned=%d paths=%v", r.FilesScanned, paths(r))
		}
	})
}

func TestT_LS_SIZE_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "big.txt", "x"+strings.Repeat(".", 100)+"\n")
		write(t, root, "small.txt", "x\n")
		r := search(t, be, root, `{"pattern":"x","max_file_size_bytes":50}`)
		if mustJSON(paths(r)) != `["small.txt"]` || r.FilesScanned != 2 || len(r.Errors) != 0 {
			t.Fatalf("paths=%v scanned=%d errors=%v", paths(r), r.FilesScanned, r.Errors)
		}
	})
}

func TestT_LS_EXCL_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.go", "x\n")
		write(t, root, "a.txt", "x\n")
		write(t, root, "vendor/v.go", "x\n")
		r := search(t, be, root, `{"pattern":"x","exclude_glob":["*.txt","vendor/"]}`)
		if mustJSON(paths(r)) != `["a.go"]` {
			t.Fatalf("%v", paths(r))
		}
	})
}

func TestT_LS_INCL_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.go", "x\n")
		write(t, root, "a_test.go", "x\n")
		write(t, root, "a.txt", "x\n")
		write(t, root, "sub/b.go", "x\n")
		r := search(t, be, root, `{"pattern":"x","include_glob":["*.go"],"exclude_glob":["*_test.go"]}`)
		if mustJSON(paths(r)) != `["a.go","sub/b.go"]` {
			t.Fatalf("%v", paths(r))
		}
		// The deprecated alias, and include_glob winning over it.
		if r := search(t, be, root, `{"pattern":"x","glob":["*.txt"]}`); mustJSON(paths(r)) != `["a.txt"]` {
			t.Fatalf("glob alias: %v", paths(r))
		}
		if r := search(t, be, root, `{"pattern":"x","glob":["*.txt"],"include_glob":["sub/*.go"]}`); mustJSON(paths(r)) != `["sub/b.go"]` {
			t.Fatalf("include_glob authoritative: %v", paths(r))
		}
	})
}

func TestT_LS_REC_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "top.txt", "x\n")
		write(t, root, "sub/deep.txt", "x\n")
		r := search(t, be, root, `{"pattern":"x","recursive":false}`)
		if mustJSON(paths(r)) != `["top.txt"]` || r.FilesScanned != 1 {
			t.Fatalf("%v %d", paths(r), r.FilesScanned)
		}
		if r := search(t, be, root, `{"pattern":"x","path":"sub/deep.txt","recursive":false}`); mustJSON(paths(r)) != `["sub/deep.txt"]` {
			t.Fatalf("file path ignores recursive: %v", paths(r))
		}
	})
}

func TestT_LS_COL_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "\tété→ err\n")
		r := search(t, be, root, `{"pattern":"err"}`)
		if r.Count != 1 || int(r.Matches[0].Column) != 1+strings.Index("\tété→ err", "err") {
			t.Fatalf("%s", eventsJSON(r))
		}
	})
}

func TestT_LS_MTXT_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "id=42 and id=7\n")
		r := search(t, be, root, `{"pattern":"id=(\\d+)"}`)
		m := r.Matches[0]
		if m.MatchText != "id=42" || len(m.Submatches) != 2 || m.Submatches[1] != (Span{10, 14}) {
			t.Fatalf("%s", eventsJSON(r))
		}
	})
}

func TestT_LS_ERR_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "x\n")
		write(t, root, "locked.txt", "x\n")
		write(t, root, "z.txt", "x\n")
		if err := os.Chmod(filepath.Join(root, "locked.txt"), 0); err != nil {
			t.Fatal(err)
		}
		if f, err := os.Open(filepath.Join(root, "locked.txt")); err == nil {
			f.Close()
			t.Fatal("cannot make an unreadable file here (running with CAP_DAC_OVERRIDE)")
		}
		r := search(t, be, root, `{"pattern":"x"}`)
		if mustJSON(paths(r)) != `["a.txt","z.txt"]` || mustJSON(r.Errors) != `[{"path":"locked.txt","error":"permission denied"}]` {
			t.Fatalf("paths=%v errors=%v", paths(r), r.Errors)
		}
	})
}

func TestIT_LS_E2E_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "src/main.go", "package main\n\nfunc main() { println(\"hello\") }\n")
		write(t, root, "README.md", "say hello\n")
		r := search(t, be, root, `{"pattern":"hello","path":"src"}`)
		if r.Count != 1 || r.Matches[0].Path != "src/main.go" || r.Matches[0].LineNumber != 3 || r.Path != root+"/src" {
			t.Fatalf("%s path=%s", eventsJSON(r), r.Path)
		}
		// An absolute path makes it the order root.
		r = search(t, be, root, `{"pattern":"hello","path":"`+root+`/src"}`)
		if r.Matches[0].Path != "main.go" {
			t.Fatalf("absolute: %s", eventsJSON(r))
		}
	})
}

func TestIT_LS_FZ_01(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "a.txt", "colour\ncolor\nxyz\n")
			r, err := searchErr(be, root, `{"pattern":"color","fuzzy":1}`)
			if be == "rg" {
				var te *ToolError
				if !errors.As(err, &te) || te.Kind != BadArgs || !strings.Contains(te.Message, "fuzzy") {
					t.Fatalf("rg fuzzy: %v", err)
				}
				return
			}
			if err != nil || r.Count != 2 {
				t.Fatalf("%v %s", err, eventsJSON(r))
			}
		})
	}
}

func TestIT_LS_EXIT_01(t *testing.T) {
	if Classify(1) != OKNoMatches || Classify(0) != OKWithMatches {
		t.Fatal("classification")
	}
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "nothing\n")
		r := search(t, be, root, `{"pattern":"absent"}`)
		if r.Count != 0 || r.ExitCode == nil || *r.ExitCode != 1 || r.Stderr != "" {
			t.Fatalf("%+v", r)
		}
	})
}

func TestIT_LS_EXIT_02(t *testing.T) {
	if Classify(2) != BackendError || Classify(3) != BackendError {
		t.Fatal("classification")
	}
	eachBackend(t, func(t *testing.T, be string) {
		// A real exit 2 from the backend: a file that vanished before the
		// backend opened it (bypassing Vigil's own pre-check).
		opts := DefaultOptions(t.TempDir())
		opts.Backend = be
		info, err := selectBackend(opts)
		if err != nil {
			t.Fatal(err)
		}
		cmd := command(context.Background(), info, opts.Root, nil, backendArgs(info, effective{}, "x", false, []string{"./missing.txt"}))
		err = cmd.Run()
		if c := exitCode(err); Classify(c) != BackendError {
			t.Fatalf("exit %d classified %s", c, Classify(c))
		}
		// And an invalid regex is BadArgs, from the backend's own parser.
		root := t.TempDir()
		write(t, root, "a.txt", "x\n")
		_, err = searchErr(be, root, `{"pattern":"a("}`)
		var te *ToolError
		if !errors.As(err, &te) || te.Kind != BadArgs || !strings.HasPrefix(te.Message, "pattern:") {
			t.Fatalf("%v", err)
		}
	})
}

func TestIT_LS_CTX_01(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "a.txt", "a\nb\nX\nc\nd\nX\ne\n")
		r := search(t, be, root, `{"pattern":"X","case":"sensitive","context":1,"max_results":4}`)
		types := ""
		for _, m := range r.Matches {
			types += m.Type[:1]
		}
		if r.Count != 4 || types != "cmcc" || !r.Truncated {
			t.Fatalf("types=%s truncated=%v", types, r.Truncated)
		}
	})
}

func TestIT_LS_PATH_01(t *testing.T) {
	// NFD and NFC spellings share one sort key; separators are "/".
	if sortKey("e\u0301.txt") != "\u00e9.txt" || sortKey("d/\xff") != "d/\uFFFD" {
		t.Fatal("sort key")
	}
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "d/e\u0301.txt", "x\n")
		write(t, root, "d/f.txt", "x\n")
		write(t, root, "d/e.txt", "x\n")
		r := search(t, be, root, `{"pattern":"x"}`)
		if mustJSON(paths(r)) != `["d/e.txt","d/f.txt","d/é.txt"]` {
			t.Fatalf("%v", paths(r))
		}
	})
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		fifo := filepath.Join(root, "big.txt")
		// A large file and a tiny timeout: the backend is killed, timed_out set.
		write(t, root, "big.txt", strings.Repeat("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 30000))
		_ = fifo
		r := search(t, be, root, `{"pattern":"(a+a+)+b","timeout_ms":1}`)
		if !r.TimedOut || !strings.Contains(r.Content, "timed out") {
			t.Fatalf("timed_out=%v", r.TimedOut)
		}
	})
}

func TestCancelStopsRun(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		for i := range 50 {
			write(t, root, filepath.Join("d", string(rune('a'+i%26))+strings.Repeat("x", i)+".txt"), "hit\n")
		}
		req, _ := DecodeRequest([]byte(`{"pattern":"hit"}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		_, err := Run(ctx, req, opts, func(b Batch) { calls++; cancel() })
		if !errors.Is(err, context.Canceled) || calls == 0 {
			t.Fatalf("err=%v calls=%d", err, calls)
		}
		_ = time.Now
	})
}
