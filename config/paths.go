package config

import (
	"os"
	"path/filepath"
)

// Paths says where each of Vigil's files lives. With a home (VIGIL_HOME or
// --home) everything is under it; otherwise the XDG base directories.
type Paths struct {
	Config  string // config.toml
	Data    string // folder for memory.db
	State   string // folder for inbox/, results/, audit.log, keys/, history
	Memory  string // memory.db
	Audit   string // audit.log
	Inbox   string // inbox/
	Results string // results/
	Keys    string // keys/
	Devices string // devices/ (the simulated devices' state)
	History string // search history file
	Log     string // vigil.log (slog output; stdout belongs to the TUI)
}

// ResolvePaths picks the layout: home wins, then XDG with its fallbacks.
// getenv is injected so tests don't depend on the caller's environment.
func ResolvePaths(home string, getenv func(string) string) Paths {
	if home == "" {
		home = getenv("VIGIL_HOME")
	}
	if home != "" {
		if abs, err := filepath.Abs(home); err == nil {
			home = abs
		}
		return layout(filepath.Join(home, "config.toml"), home, home)
	}
	userHome := getenv("HOME")
	xdg := func(key, fallback string) string {
		if v := getenv(key); v != "" && filepath.IsAbs(v) {
			return filepath.Join(v, "vigil")
		}
		return filepath.Join(userHome, fallback, "vigil")
	}
	return layout(filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "config.toml"),
		xdg("XDG_DATA_HOME", ".local/share"), xdg("XDG_STATE_HOME", ".local/state"))
}

func layout(configFile, data, state string) Paths {
	return Paths{
		Config:  configFile,
		Data:    data,
		State:   state,
		Memory:  filepath.Join(data, "memory.db"),
		Audit:   filepath.Join(state, "audit.log"),
		Inbox:   filepath.Join(state, "inbox"),
		Results: filepath.Join(state, "results"),
		Keys:    filepath.Join(state, "keys"),
		Devices: filepath.Join(state, "devices"),
		History: filepath.Join(state, "search_history"),
		Log:     filepath.Join(state, "vigil.log"),
	}
}

// Ensure creates the folders Vigil writes into, private to the user.
func (p Paths) Ensure() error {
	for _, d := range []string{filepath.Dir(p.Config), p.Data, p.State, p.Inbox, filepath.Join(p.Inbox, "new"), p.Results, p.Keys, p.Devices} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}
