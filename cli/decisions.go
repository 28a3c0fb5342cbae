package cli

import "github.com/vigil-dev/vigil/exec/approval"

// decisionsRefused is why d may not be made on this home's queue — a home
// whose [decisions] require_operator_key is set, and d is this account's,
// not an SSH operator's with their key — in the words the TUI's Approvals
// pane and `vigil approve`/`deny` both say (config.DecisionsRefusal); ""
// when it may. Asked before any prompt, so nobody answers one that fails.
func decisionsRefused(app *App, eng *Engine, d approval.Decision) string {
	err := eng.Queue.MayDecide(d)
	if err == nil {
		return ""
	}
	if why := app.Cfg.DecisionsRefusal(); why != "" {
		return why
	}
	return err.Error()
}
