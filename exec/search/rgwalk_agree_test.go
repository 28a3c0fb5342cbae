// Regression tests from a review of the rg walk: each case is one where
// the rg walk once answered differently from the ordered path (or the
// ordered path itself was wrong), so both paths run and must agree.
package search

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// agreeCompare runs req through the rg walk (when eligible) and through
// the ordered path with each backend (or only those named); it reports
// whether the rg walk answered by itself and every summary. The ugrep
// walk, when eligible and when it answers, must match the ordered ugrep
// path.
func agreeCompare(t *testing.T, root, reqJSON string, only ...string) (walk string, answered bool, ordered map[string]string) {
	t.Helper()
	req, err := DecodeRequest([]byte(reqJSON))
	if err != nil {
		t.Fatal(err)
	}
	ordered = map[string]string{}
	bes := backends(t)
	if len(only) > 0 {
		bes = only
	}
	for _, be := range bes {
		opts := DefaultOptions(root)
		opts.Backend = be
		p, err := prepare(context.Background(), req, opts)
		if err != nil {
			t.Fatal(err)
		}
		var ugWalk string // the ugrep walk's answer, if it gave one
		if p.walkEligible() {
			w, fb, err := p.runWalk(context.Background(), req.Pattern)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case fb:
			case be == "rg":
				walk, answered = responseSummary(w), true
			default:
				ugWalk = responseSummary(w)
			}
		}
		q, _ := prepare(context.Background(), req, opts)
		r, err := q.run(context.Background(), req.Pattern, nil)
		if err != nil {
			t.Fatal(err)
		}
		ordered[be] = responseSummary(r)
		// The ugrep walk is held to the ordered ugrep path here, for every
		// caller.
		if ugWalk != "" && ugWalk != ordered[be] {
			t.Errorf("%s: ugrep walk answered without falling back (walk -, ordered ugrep +):\n%s", reqJSON, lineDiff(ugWalk, ordered[be]))
		}
	}
	return
}

// expectAgree fails when the rg walk answers with something other
// than the ordered path's answer.
func expectAgree(t *testing.T, root, reqJSON string) {
	t.Helper()
	walk, answered, ordered := agreeCompare(t, root, reqJSON)
	t.Logf("%s: rg walk answered=%v\nordered rg: %s", reqJSON, answered, ordered["rg"])
	if ordered["rg"] != ordered["ugrep"] {
		t.Errorf("%s: ordered paths disagree (rg -, ugrep +):\n%s", reqJSON, lineDiff(ordered["rg"], ordered["ugrep"]))
	}
	if answered && walk != ordered["rg"] {
		t.Errorf("%s: rg walk answered without falling back (walk -, ordered +):\n%s", reqJSON, lineDiff(walk, ordered["rg"]))
	}
}

func TestRGWalkAgreesDoubleStarPrefix(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "**/a/b\n")
	write(t, root, "x/a/b/f.txt", "needle\n")
	write(t, root, "top.txt", "needle\n")
	expectAgree(t, root, `{"pattern":"needle"}`)
}

func TestIgnoreLinesAgreeWithRgOrAreFlagged(t *testing.T) {
	files := []string{"ab", "a}b", "a,b", "a[", "xx", "xa", "a]", "a-", "abb", "a/xb", "a/x/b", "d/a/b", "a/b", "x/a/b", "a/q/w/b", "axb", "a.txt", "é.txt", "ab.txt", "foo", "foo.txt", "dir/foo", "dir/sub/foo", "#foo", "!foo", "foo ", "d/x.txt", "d/y/z.txt", "x[/]y", "xay", "caf\u00e9", "cafe\u0301", ".h/f.txt", ".h2/.g", "id_dir/x", "sp ace", "tab\tx"}
	gis := []string{"foo.txt\t", "a[!x]b", "?.txt", "??.txt", "foo//", "\\#foo", "\\!foo", "\ufeffa.txt", "d/**", "d/**/", "/d/**/z.txt", "*/", "foo\\ ", "[!a]b.txt", "caf?", "caf??", "cafe?", "[a-z].txt", "!.h/\n*", "!.h2/\n!.g", "d/*\n!d/y/", "**/foo/", "dir/**/foo", "a/", "/a\n!x/a", "*.txt\n!/d/x.txt", "foo\r", " foo", "{a,b}.txt", "[[]a]", "a?b", "*", "d", "d/\n!d/y/z.txt", "a}b", "a,b", "[]", "[!]", "a[", "{a,b", "x{}", "\\", "a\\", "[a-", "[z-a]", "***", "a/**b", "**a/b", "a]", "[]a]", "[!]a]", "a[]-]", "a[\\]]", "a{,b}", "{a}", "a/*b", "**/**/b", "a/**/**/b", "/**/b", "**/", "a**", "*/b", "a\\/b", "a\\*"}
	flagged := 0
	for _, gi := range gis {
		root := t.TempDir()
		for _, f := range files {
			write(t, root, f, "x\n")
		}
		write(t, root, ".gitignore", gi+"\n")
		req, _ := DecodeRequest([]byte(`{"pattern":"x","hidden":true}`))
		opts := DefaultOptions(root)
		opts.Deny = nil
		opts.Backend = "rg" // the tally for the rg walk
		p, err := prepareUnchecked(req, opts)
		if err != nil {
			t.Fatal(err)
		}
		tally := p.tallyWalk(context.Background(), func() {}, false)
		if tally.rgUnsafe {
			flagged++
			continue // the rg walk hands such trees to the ordered path
		}
		cmd := exec.Command("rg", "--files", "--no-config", "--hidden", "--no-require-git", "--no-ignore-parent", "--no-ignore-global", "--no-ignore-exclude", ".")
		cmd.Dir = root
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if code := exitCode(err); code != 0 && code != 1 { // 1: no files
			t.Fatalf("gitignore %q: rg --files: %v: %s", gi, err, stderr.String())
		}
		var rgl []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" && l != "./.gitignore" {
				rgl = append(rgl, strings.TrimPrefix(l, "./"))
			}
		}
		var wl []string
		for _, l := range tally.list {
			if l != ".gitignore" {
				wl = append(wl, l)
			}
		}
		slices.Sort(rgl)
		slices.Sort(wl)
		if !slices.Equal(rgl, wl) {
			var onlyRG, onlyW []string
			for _, x := range rgl {
				if !slices.Contains(wl, x) {
					onlyRG = append(onlyRG, x)
				}
			}
			for _, x := range wl {
				if !slices.Contains(rgl, x) {
					onlyW = append(onlyW, x)
				}
			}
			t.Errorf("gitignore %q: only rg %q, only walker %q", gi, onlyRG, onlyW)
		}
	}
	if flagged < 10 {
		t.Errorf("only %d of the lines were flagged as syntax rg may read differently", flagged)
	}
}

// walkFileSets compares the files rg --files selects (with the rg
// walk's own flags) and the files Vigil's walker lists.
func walkFileSets(t *testing.T, root, reqJSON string, deny []string) (onlyRG, onlyWalker []string) {
	t.Helper()
	req, err := DecodeRequest([]byte(reqJSON))
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions(root)
	opts.Backend = "rg"
	if deny != nil {
		opts.Deny = deny
	}
	p, err := prepareUnchecked(req, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !p.rgWalkEligible() {
		return nil, nil // the ordered path answers: nothing to compare
	}
	tally := p.tallyWalk(context.Background(), func() {}, false)
	flags, root := p.rgWalkSelection()
	args := append(append([]string{"--files"}, flags...), "--", root)
	cmd := exec.Command("rg", args...)
	cmd.Dir = p.pl.sandbox
	out, _ := cmd.Output()
	var rgl []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			rgl = append(rgl, strings.TrimPrefix(l, "./"))
		}
	}
	slices.Sort(rgl)
	for _, x := range rgl {
		if !tally.listsAll([]string{x}) {
			onlyRG = append(onlyRG, x)
		}
	}
	for _, x := range tally.list {
		if !slices.Contains(rgl, x) {
			onlyWalker = append(onlyWalker, x)
		}
	}
	return
}

func TestRGWalkSelectsTheWalkersFiles(t *testing.T) {
	cases := []struct {
		files map[string]string
		req   string
		deny  []string
	}{
		{map[string]string{"sub/.git": "gitdir: x\n", ".gitignore": "*.log\n", "sub/a.log": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{"sub/.git/HEAD": "x", ".ignore": "*.log\n", "sub/a.log": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{"sub/.git/HEAD": "x", ".gitignore": "!.h/\n", ".h/a.txt": "x", "sub/.h/b.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".ignore": "!.h/\n", ".h/a.txt": "x", ".h/.i/b.txt": "x", "s/.h/c": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "!.h\n", ".h/a.txt": "x", "s/.h": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "!/.h/\n", ".h/a.txt": "x", "s/.h/b": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "!.h/\n", ".h/a.txt": "x"}, `{"pattern":"x"}`, []string{".h/"}},
		{map[string]string{".gitignore": "!.env\n", ".env": "x", "a/.env": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{"s/.gitignore": "/a.txt\n", "s/a.txt": "x", "a.txt": "x", "s/t/a.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{"s/.gitignore": "t/a.txt\n", "s/t/a.txt": "x", "t/a.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{"s/.gitignore": "*.txt\n", "s/a.txt": "x", "s/t/b.txt": "x"}, `{"pattern":"x","path":"s"}`, nil},
		{map[string]string{".gitignore": "s/\n", "s/a.txt": "x"}, `{"pattern":"x","path":"s","no_ignore":true}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["**/t/c.txt"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x"}`, []string{"**/t/c.txt"}},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["s/*"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["*.txt/"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["/s"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["s/**"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["a.txt\t"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["a.txt "]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["#a.txt"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x", "s/t/c.txt": "x"}, `{"pattern":"x","exclude_glob":["s/t/"]}`, nil},
		{map[string]string{"a.txt": "x", "s/b.txt": "x"}, `{"pattern":"x","recursive":false}`, nil},
		{map[string]string{".rgignore": "!a.txt\n", ".gitignore": "*.txt\n", "a.txt": "x", "s/.ignore": "a.txt\n", "s/a.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "*.txt\n", "s/.gitignore": "!a.txt\n", "s/a.txt": "x", "s/b.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "s\n!s/a.txt\n", "s/a.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "s/*\n!s/a.txt\n", "s/a.txt": "x", "s/b.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".rgignore": "a.txt\n!.h\n", ".h": "x", "a.txt": "x", "b.txt": "x"}, `{"pattern":"x","no_ignore":true}`, nil},
		{map[string]string{".rgignore": "!.h\n", ".h": "x", "s/.h": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "*\n!*/\n!*.txt\n", "s/a.txt": "x", "s/b.log": "x", ".t/c.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "/s/*\n!/s/keep/\n", "s/keep/a": "x", "s/drop/b": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{"s/.gitignore": "../a.txt\n", "a.txt": "x", "s/a.txt": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "s/t\n", "s/t/a": "x", "u/s/t/b": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "t/\n", "s/.git/HEAD": "x", "s/t/a": "x"}, `{"pattern":"x","hidden":true}`, nil},
		{map[string]string{"s/.gitignore": "a\n", "s/.git": "x", "s/a": "x"}, `{"pattern":"x","path":"s"}`, nil},
		{map[string]string{".ignore": "!.git/\n", ".git/HEAD": "x"}, `{"pattern":"x","hidden":true}`, []string{}},
		{map[string]string{".gitignore": "*.txt\n", "x.txt/f": "x"}, `{"pattern":"x"}`, nil},
		{map[string]string{".gitignore": "f\n", "s/f": "x", "s/g": "x"}, `{"pattern":"x","exclude_glob":["s/g"]}`, nil},
	}
	for i, c := range cases {
		root := t.TempDir()
		for f, v := range c.files {
			write(t, root, f, v)
		}
		req := c.req
		if req == "" {
			req = `{"pattern":"x"}`
		}
		onlyRG, onlyW := walkFileSets(t, root, req, c.deny)
		if len(onlyRG)+len(onlyW) > 0 {
			t.Errorf("case %d %v %s deny=%v: only rg %q, only walker %q", i, c.files, req, c.deny, onlyRG, onlyW)
		}
	}
}

func TestRGWalkAgreesUTF16File(t *testing.T) {
	root := t.TempDir()
	write(t, root, "u16.txt", "\xff\xfen\x00e\x00e\x00d\x00l\x00e\x00\n\x00")
	write(t, root, "plain.txt", "needle\n")
	expectAgree(t, root, `{"pattern":"needle"}`)
}

func TestRGWalkAgreesOnAwkwardContent(t *testing.T) {
	root := t.TempDir()
	pad := func(n int) string { return strings.Repeat("a", n) }
	write(t, root, "nul8191.txt", "needle\n"+pad(8191-7)+"\x00\nneedle 2\n")
	write(t, root, "nul8192.txt", "needle\n"+pad(8192-7)+"\x00\nneedle 2\n")
	write(t, root, "nul8193.txt", "needle\n"+pad(8193-7)+"\x00\nneedle 2\n")
	write(t, root, "bom8.txt", "\xef\xbb\xbfneedle bom\n")
	write(t, root, "crlf.txt", "a\r\nneedle\r\nb\r\n")
	write(t, root, "cr.txt", "needle\rx\n")
	write(t, root, "empty.txt", "")
	write(t, root, "nonl.txt", "needle")
	write(t, root, "late.txt", "needle\n"+strings.Repeat("b\n", 40000)+"\x00needle\n")
	write(t, root, "bad\xffname.txt", "needle\n")
	write(t, root, "new\nline.txt", "needle\n")
	write(t, root, "co: lon.txt", "needle\n")
	write(t, root, "big.txt", "needle\n"+pad(3000))
	for _, req := range []string{
		`{"pattern":"needle"}`,
		`{"pattern":"needle","max_matches_per_file":1}`,
		`{"pattern":"needle","context":1}`,
		`{"pattern":"needle","max_file_size_bytes":3000}`,
		`{"pattern":"needle","max_file_size_bytes":3000,"max_matches_per_file":1}`,
		`{"pattern":"^","max_results":100000}`,
		`{"pattern":"\\r"}`,
	} {
		expectAgree(t, root, req)
	}
}

// A pattern that can match a NUL byte (".", "\W", "[^a]") in a file whose
// only match needs a NUL past the sniff window: rg's --binary would hide
// the file, so the rg walk searches with -a, as the ordered path does.
func TestRGWalkAgreesNULMatchPastSniffWindow(t *testing.T) {
	root := t.TempDir()
	write(t, root, "late.txt", strings.Repeat("x", 9000)+"\np\x00q\n")
	expectAgree(t, root, `{"pattern":"p.q"}`)
}

// lineDiff lists the lines only in a (-) or only in b (+), shortened.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	short := func(s string) string {
		if len(s) > 300 {
			return s[:300] + "..."
		}
		return s
	}
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+short(l))
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+short(l))
		}
	}
	return strings.Join(out, "\n")
}

func TestRGWalkAgreesUnreadableNewlineName(t *testing.T) {
	root := t.TempDir()
	write(t, root, "ok.txt", "needle\n")
	write(t, root, "new\nline.txt", "needle\n")
	if err := os.Chmod(filepath.Join(root, "new\nline.txt"), 0); err != nil {
		t.Fatal(err)
	}
	expectAgree(t, root, `{"pattern":"needle"}`)
}

func TestRGWalkAgreesUnreadableColonName(t *testing.T) {
	root := t.TempDir()
	write(t, root, "ok.txt", "needle\n")
	write(t, root, "co: lon.txt", "needle\n")
	if err := os.Chmod(filepath.Join(root, "co: lon.txt"), 0); err != nil {
		t.Fatal(err)
	}
	expectAgree(t, root, `{"pattern":"needle"}`)
}

func TestRGWalkAgreesNonSearchableDir(t *testing.T) {
	root := t.TempDir()
	write(t, root, "ok.txt", "needle\n")
	write(t, root, "rx/f.txt", "needle\n")
	if err := os.Chmod(filepath.Join(root, "rx"), 0o644); err != nil { // readable, not searchable
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "rx"), 0o755) })
	expectAgree(t, root, `{"pattern":"needle"}`)
}

// Ignore-file lines that rg 13's globset reads differently from
// compileGlob: rg would select fewer files, which the one-way cross-check
// (every file rg reports must be listed by the walker) cannot notice, so
// the walker flags them and the ordered path answers.
func TestRGWalkAgreesOnDivergentIgnoreSyntax(t *testing.T) {
	for _, c := range []struct{ name, gitignore, file string }{
		{"trailing-tab", "foo.txt\t", "foo.txt"},
		{"negated-class-matches-slash", "a[!x]b", "a/b"},
		{"question-mark-is-a-byte", "??.txt", "\u00e9.txt"},
		{"stray-close-brace", "a}b", "ab"},
		{"doublestar-prefix-with-slash", "**/a/b", "x/a/b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, ".gitignore", c.gitignore+"\n")
			write(t, root, c.file, "needle\n")
			write(t, root, "other.txt", "needle\n")
			expectAgree(t, root, `{"pattern":"needle"}`)
		})
	}
}

// exclude_glob and deny globs: rg trims trailing whitespace of override
// globs and compileGlob keeps it, so such globs keep the ordered path.
func TestRGWalkAgreesExcludeTrailingSpace(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "needle\n")
	write(t, root, "b.txt", "needle\n")
	expectAgree(t, root, `{"pattern":"needle","exclude_glob":["a.txt "]}`)
}

// A deny glob "**/dir/file" denies at any depth (compileGlob once stripped
// the "**/" and anchored the rest at the sandbox root).
func TestDenyDoubleStarDeniesAtAnyDepth(t *testing.T) {
	eachBackend(t, func(t *testing.T, be string) {
		root := t.TempDir()
		write(t, root, "app/config/secrets.yml", "password: hunter2\n")
		write(t, root, "config/secrets.yml", "password: hunter2\n")
		req, _ := DecodeRequest([]byte(`{"pattern":"password"}`))
		opts := DefaultOptions(root)
		opts.Backend = be
		opts.Deny = append(opts.Deny, "**/config/secrets.yml")
		p, err := prepare(context.Background(), req, opts)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.run(context.Background(), req.Pattern, nil) // the ordered path
		if err != nil {
			t.Fatal(err)
		}
		if r.Count != 0 {
			t.Errorf("denied file searched: %s", eventsJSON(r))
		}
	})
}

// max_file_size_bytes on a UTF-8 BOM file: rg's bytes_searched is 3 less
// than the size (rg strips the BOM), so the rg walk sniffs sizes itself.
func TestRGWalkAgreesBOMFileOverMaxSize(t *testing.T) {
	root := t.TempDir()
	write(t, root, "bom.txt", "\xef\xbb\xbfneedle!!\n") // 12 bytes
	write(t, root, "ok.txt", "needle\n")
	expectAgree(t, root, `{"pattern":"needle","max_file_size_bytes":10}`)
}

// rg's "./a: b.txt: Permission denied" names "a: b.txt", even when a file
// "a" exists too.
func TestRGWalkAgreesUnreadableColonNameWithPrefixFile(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a", "nothing here\n")
	write(t, root, "a: b.txt", "needle\n")
	write(t, root, "ok.txt", "needle\n")
	if err := os.Chmod(filepath.Join(root, "a: b.txt"), 0); err != nil {
		t.Fatal(err)
	}
	expectAgree(t, root, `{"pattern":"needle"}`)
}

// max_files equal to the number of files: the ordered walker stops after
// the last allowed file and never reports a later unreadable directory,
// so at max_files the ordered path answers.
func TestRGWalkAgreesMaxFilesExact(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "needle\n")
	write(t, root, "zlocked/f.txt", "needle\n")
	if err := os.Chmod(filepath.Join(root, "zlocked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "zlocked"), 0o755) })
	expectAgree(t, root, `{"pattern":"needle","max_files":1}`)
}

// A tree whose files are all skipped (hidden, ignored, denied) must still
// stop the walk on cancel: the walker once looked at its context only when
// it emitted something.
func TestWalkerStopsOnCancelWhileSkipping(t *testing.T) {
	root := t.TempDir()
	for i := range 200 {
		write(t, root, "d"+strconv.Itoa(i)+"/.hidden", "x\n")
	}
	write(t, root, "zz/last.txt", "x\n")
	req, _ := DecodeRequest([]byte(`{"pattern":"x"}`))
	p, err := prepareUnchecked(req, DefaultOptions(root))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got []string
	w := &walker{ctx: ctx, pl: p.pl, e: p.e, deny: p.deny, emit: func(it item) bool {
		got = append(got, it.rel)
		return true
	}}
	w.run()
	if len(got) > 0 {
		t.Errorf("walk went on after cancel and emitted %q (read all 201 directories first)", got)
	}
}

func TestRGWalkAgreesAbsoluteSubdir(t *testing.T) {
	root := t.TempDir()
	write(t, root, "s/.gitignore", "*.log\n!keep.log\nt/x\n")
	write(t, root, "s/a.log", "needle\n")
	write(t, root, "s/keep.log", "needle\n")
	write(t, root, "s/t/x", "needle\n")
	write(t, root, "s/t/y", "needle\n")
	write(t, root, "s/u/.env", "needle\n")
	write(t, root, "s/id_rsa", "needle\n")
	abs, _ := filepath.EvalSymlinks(filepath.Join(root, "s"))
	expectAgree(t, root, `{"pattern":"needle","path":`+mustJSON(abs)+`,"hidden":true}`)
	expectAgree(t, root, `{"pattern":"needle","path":`+mustJSON(abs)+`,"context":1}`)
}
