package cli

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// backendInfo names a search backend found on this machine.
type backendInfo struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Version string `json:"version"`
}

// detectBackends is a stop-gap until exec/search exposes its own detection.
func detectBackends(app *App) []backendInfo {
	var out []backendInfo
	for _, name := range []string{app.Cfg.Tools.Search.Binary, app.Cfg.Tools.Search.FallbackBinary} {
		if name == "" {
			continue
		}
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		b, _ := exec.CommandContext(ctx, p, "--version").Output()
		cancel()
		v := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		ver := ""
		if len(v) > 1 {
			ver = v[1]
		}
		out = append(out, backendInfo{Name: name, Path: p, Version: ver})
	}
	return out
}
