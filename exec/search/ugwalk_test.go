package search

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ugrepFileSets compares the files ugrep lists with the ugrep walk's
// selection flags (-l, an empty pattern: every non-empty file) and the
// files Vigil's walker lists when it reads no ignore file, since ugrep
// reads none. They must be the same set: ugrep searching a file the
// walker does not list would search a denied, excluded or hidden file,
// and one fewer would lose matches. eligible is false when the ugrep walk
// would not run for the request.
func ugrepFileSets(t *testing.T, root, reqJSON string, deny []string) (onlyUgrep, onlyWalker []string, eligible bool) {
	t.Helper()
	req, err := DecodeRequest([]byte(reqJSON))
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions(root)
	opts.Backend = "ugrep"
	if deny != nil {
		opts.Deny = deny
	}
	p, err := prepareUnchecked(req, opts)
	if err != nil {
		t.Logf("%s deny=%q: rejected: %v", reqJSON, deny, err)
		return nil, nil, false
	}
	if !p.ugrepWalkEligible() {
		return nil, nil, false
	}
	yes := true
	req.NoIgnore = &yes
	all, err := prepareUnchecked(req, opts)
	if err != nil {
		t.Fatal(err)
	}
	tally := all.tallyWalk(context.Background(), func() {}, false)
	flags, from := p.ugrepWalkSelection()
	cmd := exec.Command("ugrep", slices.Concat(flags, []string{"-l", "-e", "", "--", from})...)
	cmd.Dir = p.pl.sandbox
	out, err := cmd.Output()
	if err != nil && exitCode(err) != 1 {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	var ul []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			ul = append(ul, strings.TrimPrefix(l, "./"))
		}
	}
	for _, x := range ul {
		if !slices.Contains(tally.list, x) {
			onlyUgrep = append(onlyUgrep, x)
		}
	}
	for _, x := range tally.list {
		if !slices.Contains(ul, x) {
			onlyWalker = append(onlyWalker, x)
		}
	}
	return onlyUgrep, onlyWalker, true
}

func TestUgrepWalkSelectsTheWalkersFilesWithoutIgnoreFiles(t *testing.T) {
	tree := map[string]string{
		".env": "x", "a/.env": "x", "x/.env/in": "x", "k.pem": "x", "d/c.pem/in": "x", "id_rsa": "x",
		"a/b/id_x/in": "x", ".ssh/k": "x", "d/.ssh/k": "x", ".git/HEAD": "x", "s/.git/HEAD": "x",
		".hidden": "x", ".h/a": "x", "s/.h/b": "x", "a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x",
		"a/b/z": "x", "a/z": "x", "abz": "x", "a/xbz": "x", "sp ace": "x", "caf\u00e9/x": "x",
		"cafe\u0301/y": "x", "s/t/u/deep.go": "x", ".gitignore": "*.txt\ns/\n",
	}
	root := t.TempDir()
	for f, c := range tree {
		write(t, root, f, c)
	}
	os.Symlink("a.txt", filepath.Join(root, "link.txt"))
	os.Symlink("s", filepath.Join(root, "linkdir"))
	var reqs []string
	for _, base := range []string{`"pattern":"x"`, `"pattern":"x","hidden":true`, `"pattern":"x","recursive":false`, `"pattern":"x","hidden":true,"path":"s"`, `"pattern":"x","path":"s/t"`} {
		reqs = append(reqs, "{"+base+"}")
	}
	globs := []string{"*.txt", "a/b", "/a/b", "a/**/z", "a*z", "z", "s/t/", "s/*", "**/t/c.txt", "/s", "s/**", "*", "**", "**/", "t/", "a", "*/b.txt", "**/u/**", ".h", ".h/", "caf*", "*.go"}
	checked := 0
	for _, g := range globs {
		reqs = append(reqs, `{"pattern":"x","exclude_glob":[`+mustJSON(g)+`]}`, `{"pattern":"x","hidden":true,"exclude_glob":[`+mustJSON(g)+`]}`)
	}
	for _, req := range reqs {
		for _, deny := range [][]string{nil, {}, {"a/", "**/z"}} {
			onlyU, onlyW, ok := ugrepFileSets(t, root, req, deny)
			if ok {
				checked++
			}
			if len(onlyU)+len(onlyW) > 0 {
				t.Errorf("%s deny=%q: only ugrep %q, only walker %q", req, deny, onlyU, onlyW)
			}
		}
	}
	for _, g := range globs {
		onlyU, onlyW, ok := ugrepFileSets(t, root, `{"pattern":"x","hidden":true}`, []string{g})
		if ok {
			checked++
		}
		if len(onlyU)+len(onlyW) > 0 {
			t.Errorf("deny %q: only ugrep %q, only walker %q", g, onlyU, onlyW)
		}
	}
	if checked < 100 {
		t.Errorf("only %d requests took the ugrep walk", checked)
	}
}

// Globs whose reading by ugrep is not the walker's keep the ugrep walk
// away: it would search files the walker denies, or skip some it selects.
func TestUgrepWalkRefusesGlobsItMayReadDifferently(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "x\n")
	for _, g := range []string{"a?.txt", "[ab].txt", "{a,b}.txt", `a\*`, "!a.txt", "#a", "a,b", "./a", "a//b", "caf\u00e9", "K*", "*;*", "`x", "**.pem", "***", "s**/t", "a/**x", "//secret", "a//"} {
		opts := DefaultOptions(root)
		opts.Backend = "ugrep"
		opts.Deny = []string{g}
		req, _ := DecodeRequest([]byte(`{"pattern":"x"}`))
		p, err := prepareUnchecked(req, opts)
		if err != nil {
			continue // rejected outright
		}
		if p.ugrepWalkEligible() {
			t.Errorf("deny %q: the ugrep walk would run", g)
		}
	}
}

// ugrepWalkVsOrdered is walksVsOrdered for the ugrep walk: its answer,
// and whether it gave it.
func ugrepWalkVsOrdered(t *testing.T, root, reqJSON string) (Response, bool) {
	t.Helper()
	walks, answered, _ := walksVsOrdered(t, root, reqJSON)
	return walks["ugrep"], answered["ugrep"]
}

// ugrepWalkTree is a tree the ugrep walk answers for with default
// settings: ignore files that skip files but no directory, no hidden
// name whitelisted, and what the deny defaults cover in every shape.
func ugrepWalkTree(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":         "*.log\n!keep.log\n",
		"s/.ignore":          "plain.txt\n",
		"drop.log":           "needle drop\n",
		"keep.log":           "needle keep\n",
		"s/plain.txt":        "needle plain\n",
		"s/ok.txt":           "needle ok\nctx a\nctx b\nneedle again\n",
		"s/t/deep.txt":       "needle deep\n",
		".hidden.txt":        "needle hidden\n",
		".h/in.txt":          "needle in hidden dir\n",
		".env":               "needle env\n",
		"x/.env/in.txt":      "needle env dir\n",
		"keys/id_rsa":        "needle key\n",
		"c.pem/in.txt":       "needle pem dir\n",
		"r/.git/HEAD":        "needle git\n",
		"early.bin":          "needle\x00early\n",
		"late.txt":           "needle one\n" + strings.Repeat("a", 9000) + "\n\x00\nneedle after nul\n",
		"bom.txt":            "\xef\xbb\xbfneedle bom\n",
		"crlf.txt":           "needle crlf\r\nline two\r\nneedle three\r\n",
		"bad\xffutf8.txt":    "needle bad \xff name\n",
		"caf\u00e9/x.txt":    "needle nfc dir\n",
		"cafe\u0301/y.txt":   "needle nfd dir\n",
		"sp ace: colon.txt":  "needle colon\n",
		"q\"uote\\back.txt":  "needle quote\n",
		"tab\tname.txt":      "needle tab\n",
		"long.txt":           strings.Repeat("needle ", 40000) + "\n",
		"u/v/w/many.txt":     strings.Repeat("needle many\nfiller\n", 50),
		"big/over-limit.txt": "needle big\n" + strings.Repeat("filler line\n", 30000),
	}
	for p, c := range files {
		write(t, root, p, c)
	}
	os.Symlink("keep.log", filepath.Join(root, "link.log"))
	return root
}

func TestUgrepWalkAnswersAsTheOrderedPath(t *testing.T) {
	root := ugrepWalkTree(t)
	cases := []struct {
		req      string
		answered bool     // the ugrep walk answers without the ordered path
		want     []string // paths expected in matches[], in order (nil: not checked)
	}{
		{`{"pattern":"needle","max_results":100000}`, true, nil},
		// Not here: ignored (drop.log, s/plain.txt), hidden, denied in
		// every shape, binary (early.bin), a symbolic link.
		{`{"pattern":"needle","max_file_size_bytes":1000000}`, true,
			[]string{"bad\ufffdutf8.txt", "big/over-limit.txt", "bom.txt", "caf\u00e9/y.txt", "caf\u00e9/x.txt", "crlf.txt", "keep.log", "late.txt",
				"long.txt", "q\"uote\\back.txt", "s/ok.txt", "s/t/deep.txt", "sp ace: colon.txt", "tab\tname.txt", "u/v/w/many.txt"}},
		// Files over max_file_size_bytes (long.txt, big/): ugrep reads
		// them for nothing, within its budget; they are skipped.
		{`{"pattern":"needle","max_file_size_bytes":100000}`, true,
			[]string{"bad\ufffdutf8.txt", "bom.txt", "caf\u00e9/y.txt", "caf\u00e9/x.txt", "crlf.txt", "keep.log", "late.txt",
				"q\"uote\\back.txt", "s/ok.txt", "s/t/deep.txt", "sp ace: colon.txt", "tab\tname.txt", "u/v/w/many.txt"}},
		{`{"pattern":"needle","max_file_size_bytes":1000000,"hidden":true,"no_ignore":true,"recursive":false}`, true,
			[]string{".hidden.txt", "bad\ufffdutf8.txt", "bom.txt", "crlf.txt", "drop.log", "keep.log", "late.txt", "long.txt",
				"q\"uote\\back.txt", "sp ace: colon.txt", "tab\tname.txt"}},
		{`{"pattern":"needle","path":"s","context":2}`, true, nil},
		{`{"pattern":"needle","max_results":100000,"exclude_glob":["*.txt","u"]}`, true, []string{"keep.log"}},
		{`{"pattern":"NEEDLE (a|t)","case":"insensitive","max_matches_per_file":1}`, true, nil},
		{`{"pattern":"needle.","fixed_strings":true}`, true, []string{}},
		{`{"pattern":"nedle","fuzzy":1,"word_regexp":true,"max_results":100000}`, true, nil},
		{`{"pattern":"e\\s","max_results":100000}`, true, nil},
		// Truncation and max_files are the ordered path's to decide.
		{`{"pattern":"needle","max_results":3}`, false, nil},
		{`{"pattern":"needle","max_files":3}`, false, nil},
		// Include globs and followed links: never the walk.
		{`{"pattern":"needle","include_glob":["*.txt"]}`, false, nil},
		{`{"pattern":"needle","follow":true}`, false, nil},
	}
	for _, c := range cases {
		r, answered := ugrepWalkVsOrdered(t, root, c.req)
		if answered != c.answered {
			t.Errorf("%s: ugrep walk answered=%v, want %v", c.req, answered, c.answered)
		}
		if answered && c.want != nil {
			if got := paths(r); !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("%s: paths\n%q\nwant\n%q", c.req, got, c.want)
			}
		}
	}
}

// Where ugrep's superset would be wrong (a hidden name an ignore file
// whitelists, which ugrep skips) or wasteful (a directory an ignore file
// prunes, which ugrep searches whole), the ordered path answers, and the
// answer is still right.
func TestUgrepWalkHandsOverWhereItsSupersetFails(t *testing.T) {
	for _, c := range []struct {
		files map[string]string
		req   string
		want  []string
	}{
		{map[string]string{".gitignore": "!.github/\n", ".github/w.yml": "needle w\n", "a.txt": "needle a\n"}, `{"pattern":"needle"}`,
			[]string{".github/w.yml", "a.txt"}},
		{map[string]string{".gitignore": "build/\n", "build/x.txt": "needle build\n", "a.txt": "needle a\n"}, `{"pattern":"needle"}`,
			[]string{"a.txt"}},
		{map[string]string{"s/.gitignore": "t\n", "s/t/x.txt": "needle t\n", "s/a.txt": "needle a\n"}, `{"pattern":"needle"}`,
			[]string{"s/a.txt"}},
		// Ignored files past their budget: ugrep would read them for
		// nothing.
		{map[string]string{".gitignore": "*.log\n", "a.log": "needle " + strings.Repeat("x", 600<<10),
			"b.log": "needle " + strings.Repeat("x", 600<<10), "a.txt": "needle a\n"}, `{"pattern":"needle"}`, []string{"a.txt"}},
	} {
		root := t.TempDir()
		for f, v := range c.files {
			write(t, root, f, v)
		}
		if _, answered := ugrepWalkVsOrdered(t, root, c.req); answered {
			t.Errorf("%v: the ugrep walk answered", c.files)
		}
		if got := paths(search(t, "ugrep", root, c.req)); !slices.Equal(got, c.want) {
			t.Errorf("%v: paths %q, want %q", c.files, got, c.want)
		}
	}
}

// The ugrep walk is what `vigil search` runs by default: its JSON is the
// ordered path's, byte for byte, on the tree above.
func TestUgrepWalkJSONIsTheOrderedPaths(t *testing.T) {
	root := ugrepWalkTree(t)
	req, _ := DecodeRequest([]byte(`{"pattern":"needle","context":1,"max_results":100000}`))
	opts := DefaultOptions(root)
	opts.Backend = "ugrep"
	p, err := prepare(context.Background(), req, opts)
	if err != nil {
		t.Fatal(err)
	}
	walk, fb, err := p.runWalk(context.Background(), req.Pattern)
	if err != nil || fb {
		t.Fatalf("the ugrep walk did not answer: fallback=%v err=%v", fb, err)
	}
	q, _ := prepare(context.Background(), req, opts)
	ord, err := q.run(context.Background(), req.Pattern, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(&walk)
	b, _ := json.Marshal(&ord)
	if string(a) != string(b) {
		t.Errorf("JSON differs (walk -, ordered +):\n%s", lineDiff(string(a), string(b)))
	}
	if walk.Count < 20 || !strings.Contains(walk.Content, "s/ok.txt-2-ctx a") {
		t.Errorf("count %d, content:\n%s", walk.Count, walk.Content)
	}
}

// A name denied only in its NFC form (U+212A KELVIN SIGN is "K" in NFC) is
// denied by the walker; ugrep, matching the stored name, would search it,
// so such globs keep the walk away and the file is neither searched nor
// shown.
func TestDenyMatchingOnlyTheNFCFormKeepsTheWalkAway(t *testing.T) {
	root := t.TempDir()
	write(t, root, "\u212Aey.txt", "needle kelvin\n")
	write(t, root, "a.txt", "needle a\n")
	for _, be := range backends(t) {
		opts := DefaultOptions(root)
		opts.Backend = be
		opts.Deny = []string{"K*"}
		req, _ := DecodeRequest([]byte(`{"pattern":"needle"}`))
		p, err := prepareUnchecked(req, opts)
		if err != nil {
			t.Fatal(err)
		}
		if p.walkEligible() {
			t.Errorf("%s: the walk would run with deny K*", be)
		}
		r, err := Run(context.Background(), req, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := paths(r); !slices.Equal(got, []string{"a.txt"}) {
			t.Errorf("%s: paths %q, want only a.txt", be, got)
		}
	}
}

// An ignored hidden directory (.cache/ in .gitignore, common) is one
// ugrep skips anyway when hidden is off: the walk still answers.
func TestUgrepWalkAnswersWithIgnoredHiddenDirectory(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", ".cache/\n.big.img\n")
	write(t, root, ".cache/x.txt", "needle cache\n")
	write(t, root, ".big.img", "needle "+strings.Repeat("x", 2000))
	write(t, root, "a.txt", "needle a\n")
	r, answered := ugrepWalkVsOrdered(t, root, `{"pattern":"needle","max_file_size_bytes":1000}`)
	if !answered || !slices.Equal(paths(r), []string{"a.txt"}) {
		t.Errorf("answered=%v paths %q", answered, paths(r))
	}
	// With hidden on, ugrep would enter .cache: the ordered path answers.
	if _, answered := ugrepWalkVsOrdered(t, root, `{"pattern":"needle","hidden":true}`); answered {
		t.Error("the walk answered with hidden on and an ignored hidden directory")
	}
}

// A file over max_file_size_bytes is skipped (and counted) without being
// read, on every path: neither walk lets its backend read a 64 GiB image
// (sparse here; reading it would take far longer than the timeout) that
// the ordered path never opens.
func TestWalksDoNotReadFilesOverTheSizeCap(t *testing.T) {
	walksDoNotReadFilesOverTheSizeCap(t)
}

// Without /proc the walker learns every file's size instead.
func TestWalksDoNotReadFilesOverTheSizeCapWithoutProc(t *testing.T) {
	was := procFDDir
	procFDDir = func(int) string { return "/nonexistent/proc/fd" }
	defer func() { procFDDir = was }()
	walksDoNotReadFilesOverTheSizeCap(t)
}

func walksDoNotReadFilesOverTheSizeCap(t *testing.T) {
	t.Helper()
	for _, ignored := range []bool{false, true} {
		root := t.TempDir()
		write(t, root, "a.txt", "needle\n")
		if ignored {
			write(t, root, ".gitignore", "*.img\n")
		}
		big := filepath.Join(root, "disk.img")
		if err := os.WriteFile(big, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(big, 64<<30); err != nil {
			t.Fatal(err)
		}
		for _, be := range backends(t) {
			r := search(t, be, root, `{"pattern":"needle","timeout_ms":5000}`)
			if r.TimedOut || r.Count != 1 {
				t.Errorf("%s ignored=%v: timed_out=%v count=%d", be, ignored, r.TimedOut, r.Count)
			}
		}
	}
}

// A file over max_file_size_bytes within ugrep's budget is read by ugrep
// for nothing; when it holds more matches than a walk may hold
// (walkSpanCap: lines of maxSubmatches "e" searched for "e"), the ordered
// path answers, and the walk's memory stays bounded.
func TestWalkHoldsBoundedMatches(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "e\n")
	write(t, root, "bundle.js", strings.Repeat(strings.Repeat("e", maxSubmatches)+"\n", walkSpanCap/maxSubmatches+64))
	const reqJSON = `{"pattern":"e","max_file_size_bytes":1000000,"max_results":1000000}`
	req, _ := DecodeRequest([]byte(reqJSON))
	opts := DefaultOptions(root)
	opts.Backend = "ugrep"
	p, err := prepare(context.Background(), req, opts)
	if err != nil {
		t.Fatal(err)
	}
	var fb bool
	peak := peakHeap(func() { _, fb, err = p.runWalk(context.Background(), req.Pattern) })
	// The heap bound is loose: it counts garbage not yet collected, and
	// the race detector's runs collect later (115 MiB seen with 1M spans
	// held). Without the cap the walk would answer: fb is the sharp test.
	if err != nil || !fb || peak > 256<<20 {
		t.Errorf("fallback=%v err=%v peak heap %d MiB", fb, err, peak>>20)
	}
	if got := paths(search(t, "ugrep", root, reqJSON)); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("paths %q", got)
	}
}

// The watch on the backend's open files (hugewatch.go) leaves its output
// alone: a walk whose output passes walkTooLargeBudget still answers.
func TestHugeWatchIgnoresTheOutput(t *testing.T) {
	root := denseTree(t, 300, 2000) // "bar" on 600,000 lines
	for _, be := range backends(t) {
		req, _ := DecodeRequest([]byte(`{"pattern":"bar","max_results":1000000}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		p, err := prepare(context.Background(), req, opts)
		if err != nil {
			t.Fatal(err)
		}
		r, fb, err := p.runWalk(context.Background(), req.Pattern)
		if err != nil || fb || r.Count != 600_000 {
			t.Errorf("%s: fallback=%v err=%v count %d", be, fb, err, r.Count)
		}
	}
}

// openFileOver sees the files a process has open, by size.
func TestOpenFileOver(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "big")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	dir := procFDDir(os.Getpid())
	if !openFileOver(dir, 1<<29) {
		t.Error("a 1 GiB file open here was not seen")
	}
	if openFileOver(dir, 1<<30) {
		t.Error("a file of exactly the limit counted as over it")
	}
}
