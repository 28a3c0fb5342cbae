package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestReadmeCommandTableMatchesHelp: the README's table of commands names
// exactly the commands `vigil --help` lists (help itself aside), and `vigil
// man`, which fang hides from the list, runs.
func TestReadmeCommandTableMatchesHelp(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := readmeCommands(t, string(readme))
	listed := helpCommands(t)
	for _, c := range listed {
		if c != "help" && !slices.Contains(documented, c) {
			t.Errorf("vigil --help lists %q; the README's command table does not", c)
		}
	}
	for _, c := range documented {
		if !slices.Contains(listed, c) && c != "man" {
			t.Errorf("the README's command table has %q; vigil --help does not list it", c)
		}
	}
	page, code := manPage(t)
	if code != 0 || !strings.Contains(page, ".TH") || !strings.Contains(page, "approve") {
		t.Fatalf("vigil man: exit %d, %.200q", code, page)
	}
}

// manPage runs `vigil man`, which fang writes to the process's stdout
// (not the command's), so stdout is a pipe while it runs.
func manPage(t *testing.T) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = saved }()
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	app := NewApp()
	app.Out, app.Err = w, io.Discard
	code := execute(context.Background(), app, []string{"man"})
	w.Close()
	return string(<-done), code
}

// readmeCommands is every `vigil NAME …` in the first column of the table
// under "## Commands".
func readmeCommands(t *testing.T, readme string) []string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Commands\n")
	if !ok {
		t.Fatal(`README has no "## Commands" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`vigil ([a-z][a-z-]*)")
	var names []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `vigil") {
			continue
		}
		first := strings.Split(strings.ReplaceAll(line, `\|`, "/"), "|")[1]
		for _, m := range code.FindAllStringSubmatch(first, -1) {
			if !slices.Contains(names, m[1]) {
				names = append(names, m[1])
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %q in the README's command table", names)
	}
	return names
}

// helpCommands is the COMMANDS list of `vigil --help` as fang prints it.
func helpCommands(t *testing.T) []string {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &errb
	if code := execute(context.Background(), app, []string{"--help"}); code != 0 {
		t.Fatalf("vigil --help: exit %d %s", code, errb.String())
	}
	var names []string
	in := false
	for _, line := range strings.Split(ansi.Strip(out.String()), "\n") {
		switch f := strings.Fields(line); {
		case len(f) == 0:
		case len(f) == 1 && f[0] == "COMMANDS":
			in = true
		case len(f) == 1 && f[0] == "FLAGS":
			in = false
		case in && !strings.HasPrefix(line, "     "): // deeper: a wrapped description
			names = append(names, f[0])
		}
	}
	if len(names) < 10 {
		t.Fatalf("found only %q in vigil --help:\n%s", names, out.String())
	}
	return names
}
