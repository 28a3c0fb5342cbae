package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/audit"
)

// Every command's --help fits 100 columns and no line ends in a space
// (fang pads to 120 and does not wrap flag descriptions).
func TestHelpFitsAHundredColumns(t *testing.T) {
	var paths [][]string
	walk(NewRootCmd(NewApp()), func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		p := strings.Fields(commandPath(c))
		if !c.HasParent() {
			p = nil
		}
		paths = append(paths, p)
	})
	if len(paths) < 20 {
		t.Fatalf("walked %d commands", len(paths))
	}
	for _, p := range append(paths, []string{"help", "approve"}) {
		var out, errb bytes.Buffer
		app := NewApp()
		app.Out, app.Err = &out, &errb
		args := append(append([]string{}, p...), "--help")
		if len(p) > 1 && p[0] == "help" {
			args = p
		}
		if code := execute(context.Background(), app, args); code != 0 {
			t.Fatalf("vigil %s: exit %d %s", strings.Join(args, " "), code, errb.String())
		}
		if out.Len() < 50 {
			t.Fatalf("vigil %s printed %q", strings.Join(args, " "), out.String())
		}
		for i, line := range strings.Split(out.String(), "\n") {
			if w := ansi.StringWidth(line); w > HelpWidth {
				t.Errorf("vigil %s, line %d is %d columns: %q", strings.Join(args, " "), i+1, w, line)
			}
			if strings.TrimRight(line, " \t") != line {
				t.Errorf("vigil %s, line %d ends in a space: %q", strings.Join(args, " "), i+1, line)
			}
		}
	}
}

// A long row wraps under its description, colours kept and not counted;
// trailing spaces go, escape sequences or not.
func TestFitHelpLine(t *testing.T) {
	desc := strings.Repeat("word ", 30)
	got := fitHelpLine("    \x1b[92m--flag\x1b[m   \x1b[97m"+desc+"\x1b[m", 60)
	rows := strings.Split(got, "\n")
	if len(rows) < 3 {
		t.Fatalf("not wrapped: %q", got)
	}
	for i, r := range rows {
		plain := ansi.Strip(r)
		if ansi.StringWidth(plain) > 60 || strings.HasSuffix(plain, " ") {
			t.Errorf("row %d: %q", i, plain)
		}
		if i > 0 && !strings.HasPrefix(plain, strings.Repeat(" ", 13)+"word") {
			t.Errorf("row %d is not under the description: %q", i, plain)
		}
	}
	if got := fitHelpLine("  \x1b[97mtext   \x1b[m", 60); ansi.Strip(got) != "  text" {
		t.Fatalf("trailing spaces kept: %q", got)
	}
	if got := fitHelpLine("plain   ", 60); got != "plain" {
		t.Fatalf("trailing spaces kept: %q", got)
	}
}

// The man page spells flags as a person types them, with their value's
// name, and shows no backquote: a `literal` is bold.
func TestManPageFlagsAndLiterals(t *testing.T) {
	page, code := manPage(t)
	if code != 0 {
		t.Fatalf("vigil man: exit %d", code)
	}
	for _, want := range []string{`\fB-y, --yes\fP`, `\fB--expect-preview HASH\fP`, `\fB--home DIR\fP`,
		"refuse unless the stored request still previews to this HASH (preview_hash)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the man page has no %q", want)
		}
	}
	if strings.Contains(page, "`") || strings.Contains(page, "--y --yes") {
		t.Errorf("the man page shows backquotes or a flag as --y --yes")
	}
	if got := manPageOf(&cobra.Command{Use: "x", Short: "run `vigil demo` first"}); !strings.Contains(got, `run \fBvigil demo\fP first`) {
		t.Errorf("a literal is not bold: %q", got)
	}
}

// Counts in words agree with the number: "1 entry", "2 entries".
func TestPluralWords(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 entries"}, {1, "1 entry"}, {2, "2 entries"}} {
		if got := plural(c.n, "entry", "entries"); got != c.want {
			t.Errorf("plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := (audit.Report{OK: true, Entries: 1, Checkpoints: 1}).String(); got != "chain verified · 1 entry · extends 1 checkpoint" {
		t.Errorf("audit report: %q", got)
	}
}

// What a command prints passes the help writer unchanged: cobra's bash
// script keeps its long lines (wrapping one would break the script).
func TestHelpWriterLeavesCommandOutputAlone(t *testing.T) {
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &errb
	if code := execute(context.Background(), app, []string{"completion", "bash"}); code != 0 {
		t.Fatalf("completion bash: exit %d %s", code, errb.String())
	}
	var want bytes.Buffer
	root := NewRootCmd(NewApp())
	if err := root.GenBashCompletionV2(&want, true); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatal("completion bash differs from cobra's script")
	}
	long := false
	for _, l := range strings.Split(out.String(), "\n") {
		long = long || len(l) > HelpWidth
	}
	if !long {
		t.Fatal("the script has no line over 100 columns: this test checks nothing")
	}
}

// A flag's name is never cut at its hyphen when help wraps.
func TestHelpWrapKeepsFlagNames(t *testing.T) {
	got := fitHelpLine("    --x  refuse unless the stored request still previews, see --expect-preview", 60)
	if !strings.Contains(got, "--expect-preview") {
		t.Fatalf("a flag name was cut: %q", got)
	}
}
