package search

import (
	"path/filepath"
	"testing"
)

// Fixed finding. A file name with
// both a double quote and a newline: ugrep's %h escapes the quote, so the
// first physical line of the record holds an even number of '"' and
// addLine's odd-quote test does not read on; the record is malformed,
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
