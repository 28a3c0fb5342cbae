package cli

import (
	"context"
	"log/slog"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// runTUI opens the screens on the current home.
func runTUI(ctx context.Context, app *App) error {
	if err := app.EnsureState(); err != nil {
		return err
	}
	logFile, err := os.OpenFile(app.Paths.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	defer logFile.Close()
	// stdout belongs to the screen; logs go to a file, masked
	app.Log = slog.New(slog.NewTextHandler(logFile, nil)) // TODO(lead): wrap in preview.MaskingHandler

	styles := themes.Resolve(app.Cfg.Theme, true)
	list, closeAll := buildPanes(app, styles)
	defer closeAll()
	m := ui.New(ui.Options{Panes: list, Theme: app.Cfg.Theme})
	p := tea.NewProgram(m, tea.WithContext(ctx))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return Fail(ExitExecution, err)
	}
	return nil
}

// buildPanes makes the screens in tab order and a function that releases them.
func buildPanes(app *App, styles *themes.Styles) ([]panes.Pane, func()) {
	ap := auditpane.New(app.Paths.Audit, styles)
	return []panes.Pane{ap}, func() { ap.Close() }
}
