package cli

import (
	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
)

func newConfigCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Inspect Vigil's settings"}
	var asJSON bool
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (defaults overlaid with the file)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON {
				return app.PrintJSON(map[string]any{"config_file": app.Paths.Config, "config": app.Cfg})
			}
			b, err := toml.Marshal(app.Cfg)
			if err != nil {
				return Fail(ExitExecution, err)
			}
			_, err = app.Out.Write(append([]byte("# effective configuration; file: "+app.Paths.Config+"\n"), b...))
			return err
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(show)
	return cmd
}
