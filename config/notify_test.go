package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNotifyDefaults(t *testing.T) {
	cfg, err := Load(filepath.Join(t.TempDir(), "missing.toml"), "/")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Notify.Terminal || len(cfg.Notify.Command) != 0 || cfg.Notify.Timeout.Duration != 5*time.Second {
		t.Fatalf("notify defaults: %+v", cfg.Notify)
	}
}

func TestNotifySection(t *testing.T) {
	p := write(t, `[notify]
terminal = false
command = ["notify-send", "Vigil", "{agent} asks to {action} on {device}"]
timeout = "2s"
`)
	cfg, err := Load(p, "/")
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Notify
	if n.Terminal || len(n.Command) != 3 || n.Command[2] != "{agent} asks to {action} on {device}" || n.Timeout.Duration != 2*time.Second {
		t.Fatalf("got %+v", n)
	}
}

func TestNotifyErrorsNameFileLineKey(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"[notify]\nterminal = \"yes\"\n", ":2: notify.terminal"},
		{"[notify]\nbell = true\n", ":2: notify.bell: unknown key"},
		{"[notify]\ncommand = \"notify-send\"\n", ":2: notify.command"},
		{"[notify]\n\ncommand = [\"\", \"x\"]\n", ":3: notify.command: the first element is the program to run and cannot be empty"},
		{"[notify]\ntimeout = \"0s\"\n", ":2: notify.timeout: must be positive and at most 1m0s, got 0s"},
		{"[notify]\ntimeout = \"2h\"\n", ":2: notify.timeout: must be positive"},
		{"[notify]\ntimeout = \"soon\"\n", ":2: notify.timeout: toml: time: invalid duration"},
	} {
		_, err := Load(write(t, c.body), "/")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		}
	}
}
