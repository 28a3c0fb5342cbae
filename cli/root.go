package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"charm.land/fang/v2"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/safetext"
)

// Version, Commit and Modified may be set at build time with -ldflags -X
// (scripts/release.sh does): the Go toolchain stamps the commit into the
// build info only when it builds in a git checkout whose .git is a folder,
// not in a git worktree or from a source archive.
var (
	Version  = "0.1.0-dev"
	Commit   = ""
	Modified = "" // "true" when the tree had uncommitted changes
)

// NewRootCmd builds the whole command tree around app.
func NewRootCmd(app *App) *cobra.Command {
	help := &helpWriter{w: app.Out, width: helpWidthOf(app.Out)}
	root := &cobra.Command{
		Use:   "vigil",
		Short: "A person's console for what AI agents do on their behalf",
		Long: "Vigil searches files, memories and mailboxes, puts every mutating agent action " +
			"behind a masked preview and a decision, and keeps a tamper-evident audit trail.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Name() != "help" {
				help.raw = true // a command's own output passes unchanged
			}
			return app.Load()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTUI(cmd.Context(), app)
		},
	}
	root.SetIn(app.In)
	root.SetOut(help) // help fits 100 columns (cli/help.go)
	root.SetErr(app.Err)
	pf := root.PersistentFlags()
	pf.StringVar(&app.HomeFlag, "home", "", "put every file Vigil reads or writes under `DIR` (or set VIGIL_HOME)")
	pf.StringVar(&app.ConfigFlag, "config", "", "read settings from `FILE` instead of the home's config.toml")
	pf.StringVar(&app.ThemeFlag, "theme", "", "colour theme: auto, dark, light or high-contrast")

	for _, c := range commands(app) {
		root.AddCommand(c)
	}
	root.AddCommand(newManCmd(app)) // fang's own is turned off (cli/man.go)
	acceptJSON(root)
	registerCompletions(app, root)
	wrapLongs(root, help.width)
	return root
}

// Execute runs Vigil's CLI and returns the process exit code.
func Execute(ctx context.Context, args []string) int { return execute(ctx, NewApp(), args) }

// execute runs the CLI as the vigil binary does (through fang, which adds
// `man` and styles help and errors), on app's streams.
func execute(ctx context.Context, app *App, args []string) int {
	root := NewRootCmd(app)
	root.SetArgs(args)
	err := fang.Execute(ctx, root,
		fang.WithVersion(Version), fang.WithCommit(commit()),
		fang.WithErrorHandler(func(w io.Writer, _ fang.Styles, err error) { PrintError(w, err) }),
		fang.WithNotifySignal(os.Interrupt), fang.WithoutManpage(),
	)
	if h, ok := root.OutOrStdout().(*helpWriter); ok {
		_ = h.flush() // help's last line, had it no line end
	}
	return ExitCode(err)
}

// PrintError writes a command's error for a person, unless it is Quiet.
// Errors embed file names, lease claims, paths and manifest fields, so the
// message goes through safetext.Line: nothing in it can steer the terminal,
// and its own line ends show as \n. The errors of an errors.Join, which
// Vigil itself separates with line ends, each get their own line.
func PrintError(w io.Writer, err error) {
	var ee *ExitError
	if err == nil || errors.As(err, &ee) && ee.Quiet {
		return
	}
	for _, line := range errorLines(err) {
		fmt.Fprintln(w, "vigil: "+safetext.Line(line))
	}
}

// errorLines splits a joined error (at any depth of ExitError wrapping) into
// its parts; any other error is one line.
func errorLines(err error) []string {
	for e := err; e != nil; {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			var out []string
			for _, part := range j.Unwrap() {
				if part != nil {
					out = append(out, errorLines(part)...)
				}
			}
			if len(out) > 0 {
				return out
			}
			break
		}
		if _, ok := e.(*ExitError); !ok {
			break // a wrapping message of its own: keep it whole
		}
		e = errors.Unwrap(e)
	}
	return []string{err.Error()}
}

// commit is the revision alone (or "unknown"), for labels such as vigil_build_info's.
func commit() string {
	if c := readStamp().Commit; c != "" {
		return c
	}
	return "unknown"
}
