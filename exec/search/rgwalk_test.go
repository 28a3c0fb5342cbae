package search

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// walkCorpus holds what makes rg's own walk and Vigil's walker disagree
// unless Vigil follows rg's ignore rules exactly.
func walkCorpus(t *testing.T) string {
	root := t.TempDir()
	far := "needle first\n" + strings.Repeat("filler line\n", 9000) + "\x00\nneedle after far nul\n"
	files := map[string]string{
		".gitignore":           "*.log\n!keep.log\nbuild/\n!.github/\n",
		".ignore":              "!special.log\n",
		".rgignore":            "secret.txt\n",
		"secret.txt":           "needle secret\n",
		"keep.log":             "needle keep\n",
		"drop.log":             "needle drop\n",
		"sub/.gitignore":       "special.log\nplain.txt\n",
		"sub/special.log":      "needle special\n",
		"sub/plain.txt":        "needle plain\n",
		"sub/ok.txt":           "needle ok\nctx a\nctx b\n",
		".github/workflow.yml": "needle workflow\n",
		".hidden.txt":          "needle hidden\n",
		"repo/.git/HEAD":       "ref\n",
		"repo/a.log":           "needle nested repo\n",
		"build/x.txt":          "needle build\n",
		"early.bin":            "needle\x00early\n",
		"mid.txt":              "needle one\n" + strings.Repeat("a", 9000) + "\n\x00\nneedle after mid nul\n",
		"far.txt":              far,
		"big.txt":              "needle big\n" + strings.Repeat("filler line\n", 20000),
		"a-b.txt":              "needle dash\n",
		"a/b.txt":              "needle slash\n",
		"caf\u00e9/x.txt":      "needle nfc dir\n",
		"cafe\u0301/y.txt":     "needle nfd dir\n",
		"sp ace: colon.txt":    "needle colon\n",
		".env":                 "needle env\n",
		"keys/id_rsa":          "needle key\n",
	}
	for p, c := range files {
		write(t, root, p, c)
	}
	return root
}

// runBoth runs a request through the rg walk and through the ordered path
// (with both backends) and checks that all agree (walksVsOrdered). It
// returns Run's rg response and whether the rg walk answered by itself.
func runBoth(t *testing.T, root, reqJSON string) (Response, bool) {
	t.Helper()
	_, answered, viaRun := walksVsOrdered(t, root, reqJSON)
	return viaRun["rg"], answered["rg"]
}

// walksVsOrdered runs a request through each backend's walk (when
// eligible), its ordered path and Run, and fails unless every answer is
// the same (rg is left out for fuzzy, which it refuses). It returns each
// walk's answer, whether the walk gave it (no fallback), and Run's.
func walksVsOrdered(t *testing.T, root, reqJSON string) (walks map[string]Response, answered map[string]bool, viaRun map[string]Response) {
	t.Helper()
	req, err := DecodeRequest([]byte(reqJSON))
	if err != nil {
		t.Fatal(err)
	}
	walks, answered, viaRun = map[string]Response{}, map[string]bool{}, map[string]Response{}
	want := ""
	same := func(what, got string) {
		t.Helper()
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("%s: %s (-) against the first answer (+):\n%s", reqJSON, what, lineDiff(got, want))
		}
	}
	for _, be := range backends(t) {
		if be == "rg" && req.Fuzzy != nil {
			continue // ugrep only
		}
		opts := DefaultOptions(root)
		opts.Backend = be
		q, err := prepare(context.Background(), req, opts)
		if err != nil {
			t.Fatal(err)
		}
		ord, err := q.run(context.Background(), req.Pattern, nil)
		if err != nil {
			t.Fatal(err)
		}
		same("ordered "+be, responseSummary(ord))
		if p, _ := prepare(context.Background(), req, opts); p.walkEligible() {
			w, fb, err := p.runWalk(context.Background(), req.Pattern)
			if err != nil {
				t.Fatal(err)
			}
			if !fb {
				walks[be], answered[be] = w, true
				same(be+" walk", responseSummary(w))
			}
		}
		// Run itself (the walk or its fallback) must agree too.
		viaRun[be] = search(t, be, root, reqJSON)
		same("Run with "+be, responseSummary(viaRun[be]))
	}
	return walks, answered, viaRun
}

func TestRGWalkMatchesOrderedWalk(t *testing.T) {
	root := walkCorpus(t)
	cases := []struct {
		req      string
		answered bool     // the rg walk answers without the ordered path
		want     []string // paths expected in matches[], in order
	}{
		{`{"pattern":"needle","max_file_size_bytes":150000}`, true,
			[]string{".github/workflow.yml", "a-b.txt", "a/b.txt", "caf\u00e9/y.txt", "caf\u00e9/x.txt", "far.txt", "keep.log", "mid.txt", "repo/a.log", "sp ace: colon.txt", "sub/ok.txt", "sub/special.log"}},
		{`{"pattern":"needle","context":2,"max_results":1000}`, true, nil},
		{`{"pattern":"needle","exclude_glob":["*.yml","a"]}`, true, nil},
		{`{"pattern":"needle","recursive":false}`, true, nil},
		{`{"pattern":"needle","path":"sub","no_ignore":true}`, true, []string{"sub/ok.txt", "sub/plain.txt", "sub/special.log"}},
		// Ignore files above the search root: the ordered path answers.
		{`{"pattern":"needle","path":"sub"}`, false, []string{"sub/ok.txt", "sub/special.log"}},
		{`{"pattern":"needle","hidden":true,"no_ignore":true}`, true, nil},
		{`{"pattern":"needle","max_matches_per_file":1,"case":"insensitive"}`, true, nil},
		{`{"pattern":"NEEDLE","fixed_strings":true}`, true, []string{}},
		// Truncation and max_files are decided by the ordered path.
		{`{"pattern":"needle","max_results":3}`, false, nil},
		{`{"pattern":"needle","max_results":14,"context":1}`, false, nil},
		{`{"pattern":"needle","max_files":3}`, false, nil},
	}
	for _, c := range cases {
		r, answered := runBoth(t, root, c.req)
		if answered != c.answered {
			t.Errorf("%s: rg walk answered=%v, want %v", c.req, answered, c.answered)
		}
		if c.want != nil {
			if got := paths(r); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("%s: paths\n%q\nwant\n%q", c.req, got, c.want)
			}
		}
	}
}

func TestRGWalkLateNULFileIsText(t *testing.T) {
	root := walkCorpus(t)
	r, answered := runBoth(t, root, `{"pattern":"after (mid|far) nul"}`)
	if !answered || r.Count != 2 || r.Matches[0].Path != "far.txt" || r.Matches[0].LineNumber != 9003 || r.Matches[1].LineNumber != 4 {
		t.Fatalf("answered=%v %s", answered, eventsJSON(r))
	}
}

func TestRGWalkErrorsAndUnreadableDirectory(t *testing.T) {
	root := walkCorpus(t)
	locked := filepath.Join(root, "locked")
	write(t, root, "locked/f.txt", "needle locked\n")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	r, _ := runBoth(t, root, `{"pattern":"needle"}`)
	if os.Geteuid() != 0 && mustJSON(r.Errors) != `[{"path":"locked","error":"cannot read directory: permission denied"}]` {
		t.Fatalf("errors: %s", mustJSON(r.Errors))
	}
}

func TestCmpWalkOrderIsWalkerOrder(t *testing.T) {
	// Two directories equal after NFC: the walker finishes one (raw name
	// order) before the other, whatever their files are called.
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	got := []string{nfc + "/a", nfd + "/b", "a/b", "a-b", "a/b/c"}
	slices.SortFunc(got, func(a, b string) int { return cmpWalkOrder(a, false, b, false) })
	want := []string{"a-b", "a/b", "a/b/c", nfd + "/b", nfc + "/a"}
	if !slices.Equal(got, want) {
		t.Fatalf("%q\nwant\n%q", got, want)
	}
}

func TestRGWalkFallsBackOnRejectedInput(t *testing.T) {
	root := walkCorpus(t)
	// A bad pattern makes rg exit without a summary: the ordered path's
	// pattern check reports it as BadArgs.
	_, err := searchErr("rg", root, `{"pattern":"a(b"}`)
	if te, ok := err.(*ToolError); !ok || te.Kind != "BadArgs" {
		t.Fatalf("err = %v", err)
	}
}

// The rg walk checks rg's files against the walker's list; the walker
// walks the same files whether ordered or not.
func TestTallyListsTheWalkersFiles(t *testing.T) {
	for _, root := range []string{walkCorpus(t), trickyCorpus(t)} {
		write(t, root, "caf\u00e9/z/deep.txt", "x\n")
		write(t, root, "cafe\u0301/a.txt", "x\n")
		for _, reqJSON := range []string{`{"pattern":"x","hidden":true,"no_ignore":true}`, `{"pattern":"x"}`} {
			req, _ := DecodeRequest([]byte(reqJSON))
			opts := DefaultOptions(root)
			opts.Backend = "rg" // the tally for the rg walk
			p, err := prepareUnchecked(req, opts)
			if err != nil {
				t.Fatal(err)
			}
			var ordered []string
			w := &walker{ctx: context.Background(), pl: p.pl, e: p.e, deny: p.deny,
				emit: func(it item) bool {
					if it.abs != "" {
						ordered = append(ordered, it.arg[2:])
					}
					return true
				}}
			w.run()
			tally := p.tallyWalk(context.Background(), func() {}, false)
			if len(ordered) < 10 || int64(len(ordered)) != tally.files {
				t.Fatalf("%s: %d ordered, %d tallied", reqJSON, len(ordered), tally.files)
			}
			for _, rel := range ordered {
				if !tally.listsAll([]string{rel}) {
					t.Fatalf("%s: %q not listed", reqJSON, rel)
				}
			}
			if tally.listsAll([]string{"nope.txt"}) {
				t.Fatal("listed a file that is not there")
			}
		}
	}
}

// With no backend run to prove the pattern (no files, or only binary
// ones), the ordered path still checks it.
func TestBadPatternWithoutSearchableFiles(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		empty := t.TempDir()
		binOnly := t.TempDir()
		write(t, binOnly, "a.bin", "x\x00y\n")
		for _, root := range []string{empty, binOnly} {
			_, err := searchErr(be, root, `{"pattern":"a(b"}`)
			if te, ok := err.(*ToolError); !ok || te.Kind != "BadArgs" {
				t.Fatalf("%s: err = %v", root, err)
			}
			r, err := searchErr(be, root, `{"pattern":"ab"}`)
			if err != nil || r.Count != 0 || *r.ExitCode != 1 {
				t.Fatalf("%s: %v %+v", root, err, r)
			}
		}
	})
}

func TestTallyListsAll(t *testing.T) {
	tally := walkTally{list: []string{"a", "b/c", "d", "b/c"}}
	for _, c := range []struct {
		rels []string
		want bool
	}{
		{nil, true},
		{[]string{"d", "a"}, true},
		{[]string{"b/c", "b/c", "a"}, true},
		{[]string{"a", "e"}, false},
		{[]string{"b"}, false},
	} {
		if got := tally.listsAll(c.rels); got != c.want {
			t.Errorf("listsAll(%q) = %v, want %v", c.rels, got, c.want)
		}
	}
}
