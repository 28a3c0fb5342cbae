package cli

import (
	"os/exec"
	"path/filepath"

	"github.com/vigil-dev/vigil/exec/search"
)

// searchOptions maps the config onto the search engine's options.
func searchOptions(app *App) search.Options {
	o := search.DefaultOptions(app.Cfg.Sandbox.Root)
	o.Deny = app.Cfg.Sandbox.Deny
	o.Search = app.Cfg.Tools.Search
	if app.Paths.State != "" {
		o.ProbeCache = filepath.Join(app.Paths.State, "backends.json")
	}
	return o
}

// detectBackends lists the search backends found, with their versions.
func detectBackends(app *App) []search.BackendInfo { return search.DetectBackends(searchOptions(app)) }

var lookPath = exec.LookPath
