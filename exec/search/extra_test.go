package search

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func FuzzParseRG(f *testing.F) {
	f.Add([]byte(`{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x\n"},"line_number":1,"submatches":[{"match":{"text":"x"},"start":0,"end":1}]}}`))
	f.Add([]byte(`{"type":"match","data":{"path":{"bytes":"/w=="},"lines":{"bytes":"eA=="},"line_number":1,"submatches":[{"start":5,"end":1}]}}`))
	// A long line's message, which cutRGMatch cuts.
	long := `{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"` + strings.Repeat("x", maxSubmatches+2) + `\n"},"line_number":1,"absolute_offset":0,"submatches":[`
	for i := range maxSubmatches + 2 {
		long += fmt.Sprintf(`{"match":{"text":"x"},"start":%d,"end":%d},`, i, i+1)
	}
	f.Add([]byte(strings.TrimSuffix(long, ",") + "]}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, ok, err := parseRGLine(b)
		if ok && err == nil {
			for _, s := range rec.spans {
				_ = rec.text[s.start:s.end]
			}
		}
		// A cut message (a long line's start) is always one the parser
		// reads, with at most maxSubmatches+1 spans.
		if cut, ok := cutRGMatch(b); ok {
			rec, ok, err := parseRGLine(cut)
			if !ok || err != nil || len(rec.spans) > maxSubmatches+1 {
				t.Fatalf("cut %q: ok %v err %v, %d spans", cut, ok, err, len(rec.spans))
			}
		}
	})
}

func FuzzParseUgrep(f *testing.F) {
	f.Add([]byte(`{"f":"./a","n":1,"b":2,"d":3}`+"\n"), []byte("x\u00e9err\n"))
	f.Add([]byte("{\"f\":\"./\x01\xff\",\"n\":1,\"b\":99,\"d\":99}"), []byte("\xc3"))
	f.Add([]byte(`{"f":"./a","n":2,"b":4,"d":1}`), []byte("abc\r\ndef"))
	f.Fuzz(func(t *testing.T, b, data []byte) {
		rec, err := parseUgrepLine(b)
		if err != nil {
			return
		}
		// Whatever the file holds, resolving never panics, and when it
		// succeeds every span lies within its line.
		var fr fileRecs
		fr.add(rec, 10)
		fr.add(rec, 10) // a second match on the same line
		if resolveLines(data, &fr) {
			for _, l := range fr.lines {
				text := fr.text[l.text0:l.text1]
				for _, s := range fr.spans[l.span0:l.span1] {
					_ = text[s.start:s.end]
				}
			}
		}
	})
}

// trickyCorpus holds what tends to make two backends disagree.
func trickyCorpus(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		"caf\u00e9.txt":    "needle nfc\n",
		"cafe\u0301.txt":   "needle nfd\n",
		"a+b.txt":          "needle plus\n",
		"-dash.txt":        "needle dash\n",
		"sp ace.txt":       "needle space\n",
		"tab\tname.txt":    "needle tab\n",
		"bad.txt":          "\xfa needle \xfb needle\n",
		"crlf.txt":         "one\r\nneedle crlf\r\nthree\r\n",
		"bin.dat":          "needle\x00binary\n",
		".hidden.txt":      "needle hidden\n",
		"ignored.log":      "needle ignored\n",
		".gitignore":       "*.log\n",
		"dir/deep.txt":     "x\nneedle deep\ny\nneedle again\n",
		"locked.txt":       "needle locked\n",
		"gone.txt":         "needle gone\n",
		".git/config":      "needle git\n",
		"keys/id_rsa":      "needle key\n",
		"Needle upper.txt": "NEEDLE\n",
	}
	for p, c := range files {
		write(t, root, p, c)
	}
	if err := os.Symlink(".", filepath.Join(root, "dir", "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "locked.txt"), 0); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestBackendsAgreeOnTrickyCorpus(t *testing.T) {
	bes := backends(t)
	if len(bes) < 2 {
		t.Skip("needs both backends")
	}
	for _, req := range []string{
		`{"pattern":"needle"}`,
		`{"pattern":"needle","hidden":true,"no_ignore":true,"follow":true,"context":1}`,
		`{"pattern":"NEEDLE","case":"insensitive","word_regexp":true}`,
		`{"pattern":"ne+dle","max_matches_per_file":1}`,
	} {
		var ref string
		for _, be := range bes {
			root := trickyCorpus(t)
			r := search(t, be, root, req)
			got := eventsJSON(r) + mustJSON(r.Errors) + mustJSON(r.FilesScanned)
			if !strings.Contains(got, "locked.txt") || strings.Contains(got, "needle git") || strings.Contains(got, "needle key") || strings.Contains(got, "binary") {
				t.Fatalf("%s %s: sandbox/binary/error handling wrong:\n%s", be, req, got)
			}
			if ref == "" {
				ref = got
			} else if got != ref {
				t.Fatalf("%s differs for %s:\n%s\nvs\n%s", be, req, got, ref)
			}
		}
	}
}

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

func TestGoldenResponseJSON(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "notes/todo.md", "- fix the \"parser\"\n- ship it\n")
		write(t, root, "main.go", "package main\n// TODO: parser\n")
		r := search(t, be, root, `{"pattern":"parser","context":1}`)
		got := strings.ReplaceAll(string(r.AppendJSON(nil)), root, "$ROOT") + "\n"
		golden := filepath.Join("testdata", "response.golden.json")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	})
}

func TestDecodeAndValidate(t *testing.T) {
	for in, want := range map[string]string{
		`{"pattern":"x","bogus":1}`:                 "bogus: unknown field",
		`{"pattern":"   "}`:                         "pattern: must be non-empty",
		`{}`:                                        "pattern: required",
		`{"pattern":"x","context":-1}`:              "context: must be >= 0",
		`{"pattern":"x","fuzzy":5}`:                 "fuzzy: must be in [1, 4]",
		`{"pattern":"x","max_files":1e9}`:           "max_files: must be of type integer",
		`{"pattern":"x","include_glob":[""]}`:       "include_glob[0]: must be a non-empty",
		`{"pattern":"x","exclude_glob":["[a"]}`:     "exclude_glob[0]: invalid glob",
		`{"pattern":"x","max_matches_per_file":51}`: "max_matches_per_file: must be <= the configured hard cap 50",
		`{"pattern":"x","path":"../etc"}`:           "path: \"../etc\" escapes the sandbox root",
		`{"pattern":"x","path":".git"}`:             "denied by the sandbox deny list",
		`{"pattern":"x","path":"nope"}`:             "does not exist",
	} {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, ".git"), 0o755)
		req, err := DecodeRequest([]byte(in))
		if err == nil {
			err = Validate(req, DefaultOptions(root))
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

// FuzzUTF16LikeUgrep: reading any UTF-16 as ugrep does and moving any
// offsets onto the text never panics, and resolved spans stay in their line.
func FuzzUTF16LikeUgrep(f *testing.F) {
	f.Add([]byte("\x34\xdc\x2d\x4e"), false, 5, 3)
	f.Add([]byte("\xd8\x34\x4e\x2d\x4e\x2d\x00\x0a"), true, 2, 1)
	f.Fuzz(func(t *testing.T, data []byte, bigEndian bool, off, n int) {
		text, shifts := decodeUTF16LikeUgrep(data, bigEndian)
		if off < 0 || n < 0 || off > 1<<20 || n > 1<<20 {
			return
		}
		var fr fileRecs
		fr.add(record{line: 1 + uint64(bytes.Count(text[:min(off, len(text))], []byte{'\n'})), spans: []span{{off, off + n}}}, 10)
		ugrepToText(&fr, shifts)
		if resolveLines(text, &fr) {
			for _, l := range fr.lines {
				for _, s := range fr.spans[l.span0:l.span1] {
					_ = fr.text[l.text0:l.text1][s.start:s.end]
				}
			}
		}
	})
}
