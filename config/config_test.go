package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultsWithoutFile(t *testing.T) {
	cfg, err := Load(filepath.Join(t.TempDir(), "missing.toml"), "/work/here")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Tools.Search
	if !s.Enabled || s.Binary != "ugrep" || s.FallbackBinary != "rg" || s.DefaultTimeoutMS != 20000 ||
		s.DefaultMaxResults != 200 || s.MaxMatchesPerFile != 50 || s.MaxFiles != 10000 || s.MaxFileSizeBytes != 2000000 ||
		s.MaxLineBytes != 4096 {
		t.Fatalf("seed 001 §5 defaults wrong: %+v", s)
	}
	if cfg.Sandbox.Root != "/work/here" {
		t.Fatalf("sandbox root default = %q, want the working directory", cfg.Sandbox.Root)
	}
	if cfg.Leases.Issuer != "abos-policy-authority" || cfg.Leases.Audience != "abos-executor" || cfg.Leases.Leeway.Duration != 30*time.Second {
		t.Fatalf("lease defaults wrong: %+v", cfg.Leases)
	}
	if cfg.Approvals.Timeout.Duration != 10*time.Minute {
		t.Fatalf("approval timeout default = %v", cfg.Approvals.Timeout)
	}
}

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStrictErrors(t *testing.T) {
	cases := []struct {
		name, body string
		line       int
		key, rule  string
	}{
		{"unknown key", "[tools.search]\nbinary = \"ugrep\"\nfrobnicate = 1\n", 3, "tools.search.frobnicate", "unknown key"},
		{"unknown section", "theme = \"dark\"\n\n[nope]\nx = 1\n", 3, "nope", "unknown key"},
		{"wrong type", "[tools.search]\nmax_files = \"many\"\n", 2, "tools.search.max_files", ""},
		{"zero cap", "[tools.search]\n\nmax_files = 0\n", 3, "tools.search.max_files", "must be a positive integer, got 0"},
		{"zero line cap", "[tools.search]\nbinary = \"rg\"\nmax_line_bytes = 0\n", 3, "tools.search.max_line_bytes", "must be at least 64"},
		{"tiny line cap", "[tools.search]\nmax_line_bytes = 63\n", 2, "tools.search.max_line_bytes", "must be at least 64"},
		{"negative timeout", "[tools.search]\ndefault_timeout_ms = -5\n", 2, "tools.search.default_timeout_ms", "must be a positive integer, got -5"},
		{"huge default max_results", "[tools.search]\ndefault_max_results = 9223372036854775807\n", 2, "tools.search.default_max_results", "must be <= 10000000"},
		{"bad duration", "[approvals]\ntimeout = \"soon\"\n", 2, "approvals.timeout", ""},
		{"duration without unit", "theme = \"dark\"\n[approvals]\ntimeout = 5\n", 3, "approvals.timeout", "must be a duration string"},
		{"bad driver", "[[devices]]\nid = \"x\"\ndriver = \"vlc\"\n", 3, "devices[0].driver", "must be sim, mpv or hass"},
		{"bad theme", "theme = \"neon\"\n", 1, "theme", "must be auto, dark, light or high-contrast"},
		{"dataset without key", "[[scopes]]\nname = \"c\"\nkind = \"dataset\"\npath = \"c.csv\"\n", 0, "scopes[0].primary_key", "is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := write(t, c.body)
			_, err := Load(p, "/")
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *config.Error, got %v", err)
			}
			if ce.File != p || ce.Key != c.key || (c.line != 0 && ce.Line != c.line) || !strings.Contains(ce.Rule, c.rule) {
				t.Fatalf("got %+v (%v), want line %d key %q rule ~%q", *ce, err, c.line, c.key, c.rule)
			}
			if !strings.HasPrefix(err.Error(), p+":") {
				t.Fatalf("message does not start with the file: %v", err)
			}
		})
	}
}

func TestRelativePathsResolveAgainstConfigFolder(t *testing.T) {
	p := write(t, "[sandbox]\nroot = \"files\"\n[[leases.keys]]\nkid = \"k\"\nalg = \"EdDSA\"\npublic_key = \"keys/k.pub.pem\"\n[[scopes]]\nname = \"mail\"\nkind = \"emails\"\npath = \"/abs/mbox\"\n")
	cfg, err := Load(p, "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p)
	if cfg.Sandbox.Root != filepath.Join(dir, "files") || cfg.Leases.Keys[0].PublicKey != filepath.Join(dir, "keys/k.pub.pem") ||
		cfg.Scopes[0].Path != "/abs/mbox" || cfg.Leases.Revoked != filepath.Join(dir, "revoked.txt") {
		t.Fatalf("paths not resolved: %+v", cfg)
	}
}

func TestPaths(t *testing.T) {
	env := map[string]string{"HOME": "/home/ada", "XDG_STATE_HOME": "/xdg/state"}
	get := func(k string) string { return env[k] }
	p := ResolvePaths("", get)
	if p.Config != "/home/ada/.config/vigil/config.toml" || p.Memory != "/home/ada/.local/share/vigil/memory.db" ||
		p.Audit != "/xdg/state/vigil/audit.log" {
		t.Fatalf("XDG layout wrong: %+v", p)
	}
	env["VIGIL_HOME"] = "/v"
	p = ResolvePaths("", get)
	if p.Config != "/v/config.toml" || p.Memory != "/v/memory.db" || p.Audit != "/v/audit.log" || p.Inbox != "/v/inbox" {
		t.Fatalf("VIGIL_HOME layout wrong: %+v", p)
	}
	if p := ResolvePaths("/flag", get); p.Audit != "/flag/audit.log" {
		t.Fatalf("--home must win over VIGIL_HOME: %+v", p)
	}
}
