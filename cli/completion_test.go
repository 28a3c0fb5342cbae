package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// complete runs `vigil __complete ARGS…` as a shell does and returns the
// values offered and the directive line.
func complete(t *testing.T, args ...string) ([]string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &errb
	app.In = strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd = t.TempDir()
	if code := execute(context.Background(), app, append([]string{"__complete"}, args...)); code != 0 {
		t.Fatalf("__complete %q: exit %d\n%s%s", args, code, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	values := lines[:len(lines)-1]
	for i, v := range values {
		values[i], _, _ = strings.Cut(v, "\t") // the description a shell may show
	}
	return values, lines[len(lines)-1]
}

func TestCompletionOfTaskIDs(t *testing.T) {
	home := demoHome(t)
	if _, errs, code := run(t, home, "deny", "demo-seek-soon", "--reason", "no"); code != 0 {
		t.Fatalf("deny: %s", errs)
	}
	// a folder whose name would steer the shell or the terminal is never offered
	if err := os.Mkdir(filepath.Join(home, "tasks", "evil\x1b]0;pwned\x07"), 0o700); err != nil {
		t.Fatal(err)
	}
	all := []string{"demo-kitchen-pause", "demo-play-movie", "demo-seek-soon", "demo-stream-secret"}
	pending := []string{"demo-kitchen-pause", "demo-play-movie", "demo-stream-secret"}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"approve", "--home", home, ""}, pending},
		{[]string{"deny", "--home", home, "demo-s"}, []string{"demo-stream-secret"}},
		{[]string{"--home", home, "result", ""}, append([]string{"verify"}, all...)}, // --home before the command; result's subcommand too
		{[]string{"preview", "--home", home, "demo-p"}, []string{"demo-play-movie"}},
		{[]string{"approve", "--home", home, "demo-play-movie", ""}, nil}, // one task id only
		{[]string{"audit", "show", "--home", home, "--task", "demo-k"}, []string{"demo-kitchen-pause"}},
	}
	for _, c := range cases {
		got, directive := complete(t, c.args...)
		if !slices.Equal(got, c.want) || directive != ":4" {
			t.Errorf("__complete %q = %q %s, want %q :4 (no file completion)", c.args, got, directive, c.want)
		}
	}
}

func TestCompletionOfFlagValues(t *testing.T) {
	home := demoHome(t)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"search", "--backend", ""}, []string{"auto", "ugrep", "rg"}},
		{[]string{"search", "--case", "s"}, []string{"smart", "sensitive"}},
		{[]string{"--theme", ""}, []string{"auto", "dark", "light", "high-contrast"}},
		{[]string{"pending", "--theme", "d"}, []string{"dark"}},
		{[]string{"audit", "tail", "--event", "app"}, []string{"approved"}},
		{[]string{"lease", "issue", "--home", home, "--device", ""}, []string{"living-room", "kitchen"}},
		{[]string{"lease", "issue", "--cap", "SEARCH_"}, []string{"SEARCH_FILES", "SEARCH_EMAILS", "SEARCH_DATASETS"}},
	}
	for _, c := range cases {
		got, _ := complete(t, c.args...)
		// cobra filters fixed lists by the prefix; ours are filtered the same way
		var kept []string
		for _, g := range got {
			if strings.HasPrefix(g, c.args[len(c.args)-1]) {
				kept = append(kept, g)
			}
		}
		if !slices.Equal(kept, c.want) {
			t.Errorf("__complete %q = %q, want %q", c.args, got, c.want)
		}
	}
	got, _ := complete(t, "audit", "show", "--event", "")
	for _, e := range []string{"submitted", "approved", "denied", "executed", "expired", "tampered", "sealed", "memory_added"} {
		if !slices.Contains(got, e) {
			t.Errorf("--event completion lacks %q: %q", e, got)
		}
	}
}

// The completion docs say bash needs the bash-completion package: the
// script cobra generates calls its _get_comp_words_by_ref, and without
// the package every tab prints "command not found".
func TestCompletionDocsNameBashCompletion(t *testing.T) {
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &errb
	if code := execute(context.Background(), app, []string{"completion", "bash"}); code != 0 ||
		!strings.Contains(out.String(), "_get_comp_words_by_ref ") {
		t.Fatalf("completion bash: exit %d; the script no longer calls _get_comp_words_by_ref: revisit the docs", code)
	}
	ref, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(ref), "\n## Shell completion and man page\n")
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{"Bash needs the **bash-completion** package", "apt install bash-completion",
		"brew install\nbash-completion@2", "_get_comp_words_by_ref: command not found"} {
		if !strings.Contains(section, want) {
			t.Errorf("docs/reference.md's completion section does not say %q", want)
		}
	}
}
