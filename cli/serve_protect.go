package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/vigil-dev/vigil/internal/homeguard"
)

// homeFiles are the home's files and folders that decide what Vigil does:
// who may write any of them can approve a task (a decision is a write to
// tasks/ and the audit log), trust a key or change a rule.
func homeFiles(app *App) []string {
	return []string{app.Paths.State, filepath.Dir(app.Paths.Config), app.Paths.Config, app.Paths.Keys,
		filepath.Join(app.Paths.State, "tasks"), app.Paths.Audit, app.Paths.Results, app.Paths.Inbox}
}

// protectHome refuses to serve a home other accounts may write (exit 2,
// each path with its owner, mode and the command that tightens it): the
// executor is the home's only writer, or an agent with a shell as another
// account could decide for the person (docs/protect.md). It makes the
// home's folders first (0700), so a new home passes.
func protectHome(app *App) error {
	if err := app.EnsureState(); err != nil {
		return err
	}
	uid := homeguard.UID()
	ps, err := homeguard.Check(uid, homeFiles(app))
	if err != nil {
		return Failf(ExitExecution, "checking who may write the home: %v", err)
	}
	if len(ps) == 0 {
		return nil
	}
	errs := []error{fmt.Errorf("serve: refusing to start: other accounts than %s can change the home %s, and "+
		"whoever can write it can approve tasks (see docs/protect.md)", homeguard.Account(uid), app.Paths.State)}
	for _, p := range ps {
		errs = append(errs, errors.New("  "+p.String()))
	}
	return Fail(ExitBadInput, errors.Join(errs...))
}
