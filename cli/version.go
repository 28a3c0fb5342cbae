package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print version, commit, Go version and the search backends found",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			backends := detectBackends(app)
			if asJSON {
				return app.PrintJSON(map[string]any{
					"version": Version, "commit": commit(), "go": runtime.Version(), "backends": backends,
				})
			}
			fmt.Fprintf(app.Out, "vigil %s (commit %s, %s)\n", Version, commit(), runtime.Version())
			if len(backends) == 0 {
				fmt.Fprintln(app.Out, "search backends: none found (install ugrep or ripgrep: apt-get install ugrep ripgrep)")
			}
			for _, b := range backends {
				fmt.Fprintf(app.Out, "search backend: %s %s (%s)\n", b.Name, b.Version, b.Path)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
