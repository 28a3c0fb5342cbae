package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"charm.land/fang/v2"
	"github.com/spf13/cobra"
)

// Version and Commit are set at build time with -ldflags; debug.ReadBuildInfo fills gaps.
var (
	Version = "0.1.0-dev"
	Commit  = ""
)

// NewRootCmd builds the whole command tree around app.
func NewRootCmd(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "vigil",
		Short: "A person's console for what AI agents do on their behalf",
		Long: "Vigil searches files, memories and mailboxes, puts every mutating agent action " +
			"behind a masked preview and a decision, and keeps a tamper-evident audit trail.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return app.Load()
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTUI(cmd.Context(), app)
		},
	}
	root.SetIn(app.In)
	root.SetOut(app.Out)
	root.SetErr(app.Err)
	pf := root.PersistentFlags()
	pf.StringVar(&app.HomeFlag, "home", "", "put every file Vigil reads or writes under `DIR` (or set VIGIL_HOME)")
	pf.StringVar(&app.ConfigFlag, "config", "", "read settings from `FILE` instead of the home's config.toml")
	pf.StringVar(&app.ThemeFlag, "theme", "", "colour theme: auto, dark, light or high-contrast")

	for _, c := range commands(app) {
		root.AddCommand(c)
	}
	return root
}

// Execute runs Vigil's CLI and returns the process exit code.
func Execute(ctx context.Context, args []string) int {
	app := NewApp()
	root := NewRootCmd(app)
	root.SetArgs(args)
	err := fang.Execute(ctx, root,
		fang.WithVersion(Version), fang.WithCommit(commit()),
		fang.WithErrorHandler(func(w io.Writer, styles fang.Styles, err error) {
			var ee *ExitError
			if errors.As(err, &ee) && ee.Quiet {
				return
			}
			fmt.Fprintln(w, "vigil: "+err.Error())
		}),
		fang.WithNotifySignal(os.Interrupt),
	)
	return ExitCode(err)
}

func commit() string {
	if Commit != "" {
		return Commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
