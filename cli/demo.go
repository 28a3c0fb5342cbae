package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/demotree"
)

// demoConfig is the demo home's config.toml. Paths are relative to the home.
const demoConfig = `# Vigil demo home — every path below is relative to this file's folder.
theme = "auto"

[sandbox]
root = "files"

[tools.search]
binary = "ugrep"
fallback_binary = "rg"

[approvals]
timeout = "10m"

[[devices]]
id = "living-room"
driver = "sim"
`

// demoStep adds one kind of content to a demo home.
type demoStep struct {
	name string
	run  func(ctx context.Context, app *App, dir string) error
}

// demoSteps is the order the demo home is built in; each issue adds its own.
func demoSteps() []demoStep {
	return []demoStep{
		{"config", func(_ context.Context, _ *App, dir string) error {
			return atomicfile.Write(filepath.Join(dir, "config.toml"), []byte(demoConfig), 0o600)
		}},
		{"files", func(_ context.Context, _ *App, dir string) error {
			_, err := demotree.Write(filepath.Join(dir, "files"))
			return err
		}},
		{"audit", demoAudit},
	}
}

func demoAudit(_ context.Context, app *App, _ string) error {
	log, err := audit.Open(app.Paths.Audit, app.Now)
	if err != nil {
		return err
	}
	_, err = log.Append(audit.Entry{Actor: app.Operator(), Event: audit.EventDemo, Success: true,
		Details: audit.Details(map[string]any{"note": "demo home created"})})
	return err
}

func newDemoCmd(app *App) *cobra.Command {
	var dir string
	var noOpen bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a ready demo home (files, memories, pending actions, audit) and open it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				d, err := os.MkdirTemp("", "vigil-demo-")
				if err != nil {
					return Fail(ExitExecution, err)
				}
				dir = d
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return Fail(ExitBadInput, err)
			}
			if err := os.MkdirAll(abs, 0o700); err != nil {
				return Fail(ExitExecution, err)
			}
			// the demo home is the home from here on, whatever --home said
			app.HomeFlag, app.ConfigFlag, app.loaded = abs, "", false
			for _, step := range demoSteps() {
				if step.name != "config" {
					if err := app.Load(); err != nil {
						return err
					}
					if err := app.EnsureState(); err != nil {
						return err
					}
				}
				if err := step.run(cmd.Context(), app, abs); err != nil {
					return Failf(ExitExecution, "demo: %s: %w", step.name, err)
				}
			}
			fmt.Fprintln(app.Out, abs)
			if noOpen {
				return nil
			}
			return runTUI(cmd.Context(), app)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "build the demo home in `DIR` (default: a fresh temp dir)")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "build the home and print its path without opening the TUI")
	return cmd
}
