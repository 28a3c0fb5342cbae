//go:build linux

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// runOnTerminal runs vigil with stdout on a pseudo-terminal and returns
// what the terminal received, stderr and the exit code.
func runOnTerminal(t *testing.T, home string, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	master, tty := openPTY(t)
	var errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = tty, &errb
	app.In = strings.NewReader("")
	app.Getenv = func(k string) string { return env[k] }
	app.Cwd = home
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	tty.Close() // the master then reads to the end of what was written
	out, _ := io.ReadAll(master)
	return string(out), errb.String(), ExitCode(err)
}

// On a terminal `vigil search` prints grep's lines: path:line:text for a
// match, path-line-text for context, -- between groups, the matches
// coloured as grep does (plain under NO_COLOR), then a summary in words.
func TestSearchOnATerminalPrintsGrepLines(t *testing.T) {
	requireTool(t, "ugrep")
	home := searchHome(t)
	args := []string{"search", "--backend", "ugrep", "-C", "1", "--case", "insensitive", "parser"}
	want := strings.Join([]string{
		"main.go-2-",
		"main.go:3:// TODO: parser",
		"main.go-4-func main() {}",
		"--",
		"notes/café.txt:1:Parser notes, unicode name",
		"--",
		`notes/todo.md:1:- fix the "parser"`,
		"notes/todo.md-2-- ship it",
		"3 matches in 3 files (3 files scanned)",
		""}, "\n")
	out, errs, code := runOnTerminal(t, home, nil, args...)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got := ansi.Strip(out); got != want {
		t.Fatalf("terminal output:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(out, "\x1b[1;31mparser\x1b[m") {
		t.Fatalf("the match is not coloured: %q", out)
	}
	plain, _, _ := runOnTerminal(t, home, map[string]string{"NO_COLOR": "1"}, args...)
	if plain != want {
		t.Fatalf("NO_COLOR output:\n%q\nwant:\n%q", plain, want)
	}
	// one of each: the summary's words agree with the count
	one, _, _ := runOnTerminal(t, home, nil, "search", "--backend", "ugrep", "ship")
	if !strings.HasSuffix(ansi.Strip(one), "\n1 match in 1 file (3 files scanned)\n") {
		t.Fatalf("one match: %q", one)
	}
}

// --json on a terminal, and a pipe without it, print the same bytes: the
// response object agents and scripts read.
func TestSearchJSONOnATerminalIsTheSameBytes(t *testing.T) {
	requireTool(t, "ugrep")
	home := searchHome(t)
	args := []string{"search", "--backend", "ugrep", "parser"}
	piped, _, code := run(t, home, args...)
	if code != 0 || !strings.HasPrefix(piped, `{"pattern":"parser"`) {
		t.Fatalf("piped: exit %d %q", code, piped)
	}
	onTTY, _, code := runOnTerminal(t, home, nil, append(args, "--json")...)
	if code != 0 || onTTY != piped {
		t.Fatalf("--json on a terminal differs from the pipe:\n%q\n%q", onTTY, piped)
	}
}

// A file name holding a terminal escape reaches the terminal escaped, and
// a refused request is a sentence on stderr with the usual exit code.
func TestSearchOnATerminalIsSafeAndSaysWhy(t *testing.T) {
	requireTool(t, "ugrep")
	home := searchHome(t)
	if err := os.WriteFile(filepath.Join(home, "files", "evil\x1b[2Jname.txt"), []byte("parser here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runOnTerminal(t, home, map[string]string{"NO_COLOR": "1"}, "search", "--backend", "ugrep", "parser here")
	if code != 0 || strings.Contains(out, "\x1b") || !strings.Contains(out, `evil\x1b[2Jname.txt:1:parser here`) {
		t.Fatalf("exit %d, output %q", code, out)
	}
	out, errs, code := runOnTerminal(t, home, nil, "search", "--backend", "ugrep", "--context", "-1", "x")
	if code != ExitBadInput || out != "" || !strings.HasPrefix(errs, "vigil search: ") || strings.Contains(errs, "{") {
		t.Fatalf("bad args on a terminal: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
