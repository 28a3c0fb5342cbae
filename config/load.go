package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Error is a configuration problem, located so a person can fix it:
// "config.toml:12: tools.search.max_files: must be a positive integer, got 0".
type Error struct {
	File string
	Line int // 0 when the problem has no single line
	Key  string
	Rule string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key == "" {
		return loc + ": " + e.Rule
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Rule)
}

// Load reads the config file at path over the defaults. A missing file is
// not an error (the defaults apply); a file that exists must be valid.
// cwd is the directory Vigil runs in: the sandbox root's default.
func Load(path, cwd string) (Config, error) {
	cfg := Default()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		// defaults still resolve against the config's folder (revoked.txt lives in the home)
		resolvePaths(&cfg, filepath.Dir(path), cwd)
		return cfg, nil
	}
	if err != nil {
		return cfg, &Error{File: path, Rule: "cannot read: " + err.Error()}
	}
	if err := Parse(data, path, &cfg); err != nil {
		return cfg, err
	}
	resolvePaths(&cfg, filepath.Dir(path), cwd)
	return cfg, nil
}

// Parse decodes TOML strictly into cfg (which holds the defaults) and validates it.
func Parse(data []byte, file string, cfg *Config) error {
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().EnableUnmarshalerInterface()
	if err := dec.Decode(cfg); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			first := strict.Errors[0]
			row, _ := first.Position()
			return &Error{File: file, Line: row, Key: strings.Join(first.Key(), "."), Rule: "unknown key"}
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return &Error{File: file, Line: row, Key: strings.Join(de.Key(), "."), Rule: de.Error()}
		}
		if e := locateBadDuration(data); e != nil {
			e.File = file
			return e
		}
		return &Error{File: file, Rule: err.Error()}
	}
	if err := cfg.Validate(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = file
			ce.Line = lineOfKey(data, ce.Key)
		}
		return err
	}
	return nil
}

// MaxResultsLimit bounds a search's max_results, requested or configured
// (so that the look-ahead max_results + 1 stays far from overflowing).
const MaxResultsLimit = 10_000_000

// MinMaxLineBytes is the smallest [tools.search] max_line_bytes. There is
// no "no cap" value: a line is never longer than its file, so a cap of
// max_file_size_bytes or more shows every line whole.
const MinMaxLineBytes = 64

// Validate checks the rules that TOML types cannot express (seed 001 CFG-LS-02..05 and friends).
func (c *Config) Validate() error {
	s := c.Tools.Search
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"tools.search.default_timeout_ms", s.DefaultTimeoutMS},
		{"tools.search.default_max_results", s.DefaultMaxResults},
		{"tools.search.max_matches_per_file", s.MaxMatchesPerFile},
		{"tools.search.max_files", s.MaxFiles},
		{"tools.search.max_file_size_bytes", s.MaxFileSizeBytes},
	} {
		if f.v <= 0 {
			return &Error{Key: f.key, Rule: fmt.Sprintf("must be a positive integer, got %d", f.v)}
		}
	}
	if s.MaxLineBytes < MinMaxLineBytes {
		return &Error{Key: "tools.search.max_line_bytes", Rule: fmt.Sprintf("must be at least %d (a line's window must hold a match and the text around it), got %d", MinMaxLineBytes, s.MaxLineBytes)}
	}
	if s.DefaultMaxResults > MaxResultsLimit {
		return &Error{Key: "tools.search.default_max_results", Rule: fmt.Sprintf("must be <= %d (the bound on a request's max_results), got %d", MaxResultsLimit, s.DefaultMaxResults)}
	}
	if s.Binary == "" && s.FallbackBinary == "" {
		return &Error{Key: "tools.search.binary", Rule: "binary and fallback_binary cannot both be empty"}
	}
	if c.Leases.Leeway.Duration < 0 {
		return &Error{Key: "leases.leeway", Rule: "must not be negative"}
	}
	for i, k := range c.Leases.Keys {
		if k.KID == "" {
			return &Error{Key: fmt.Sprintf("leases.keys[%d].kid", i), Rule: "is required"}
		}
		if k.Alg != "RS256" && k.Alg != "EdDSA" {
			return &Error{Key: fmt.Sprintf("leases.keys[%d].alg", i), Rule: fmt.Sprintf("must be RS256 or EdDSA, got %q", k.Alg)}
		}
		if k.PublicKey == "" {
			return &Error{Key: fmt.Sprintf("leases.keys[%d].public_key", i), Rule: "is required"}
		}
	}
	if c.Approvals.Timeout.Duration <= 0 {
		return &Error{Key: "approvals.timeout", Rule: "must be positive"}
	}
	if c.Media.ActionTimeout.Duration <= 0 {
		return &Error{Key: "media.action_timeout", Rule: "must be positive"}
	}
	seen := map[string]bool{}
	for i, d := range c.Devices {
		key := fmt.Sprintf("devices[%d]", i)
		switch {
		case d.ID == "":
			return &Error{Key: key + ".id", Rule: "is required"}
		case seen[d.ID]:
			return &Error{Key: key + ".id", Rule: fmt.Sprintf("duplicate device id %q", d.ID)}
		}
		seen[d.ID] = true
		switch d.Driver {
		case "sim":
		case "mpv":
			if d.Socket == "" {
				return &Error{Key: key + ".socket", Rule: "is required for the mpv driver"}
			}
		case "hass":
			if d.BaseURL == "" || d.EntityID == "" {
				return &Error{Key: key + ".base_url", Rule: "base_url and entity_id are required for the hass driver"}
			}
			if d.TokenEnv == "" && d.TokenFile == "" {
				return &Error{Key: key + ".token_env", Rule: "token_env or token_file is required for the hass driver"}
			}
		default:
			return &Error{Key: key + ".driver", Rule: fmt.Sprintf("must be sim, mpv or hass, got %q", d.Driver)}
		}
	}
	names := map[string]bool{}
	for i, sc := range c.Scopes {
		key := fmt.Sprintf("scopes[%d]", i)
		switch {
		case sc.Name == "":
			return &Error{Key: key + ".name", Rule: "is required"}
		case names[sc.Name]:
			return &Error{Key: key + ".name", Rule: fmt.Sprintf("duplicate scope name %q", sc.Name)}
		case sc.Kind != "files" && sc.Kind != "emails" && sc.Kind != "dataset":
			return &Error{Key: key + ".kind", Rule: fmt.Sprintf("must be files, emails or dataset, got %q", sc.Kind)}
		case sc.Path == "":
			return &Error{Key: key + ".path", Rule: "is required"}
		case sc.Kind == "dataset" && sc.PrimaryKey == "":
			return &Error{Key: key + ".primary_key", Rule: "is required for a dataset scope"}
		}
		names[sc.Name] = true
	}
	switch c.Theme {
	case "", "auto", "dark", "light", "high-contrast":
	default:
		return &Error{Key: "theme", Rule: fmt.Sprintf("must be auto, dark, light or high-contrast, got %q", c.Theme)}
	}
	if c.UI.SearchDebounce.Duration < 0 {
		return &Error{Key: "ui.search_debounce", Rule: "must not be negative"}
	}
	if err := c.Notify.validate(); err != nil {
		return err
	}
	return c.Memory.validate()
}

// lineOfKey finds the line where the last segment of a dotted key is set, so
// validation errors can point at it. Best effort: 0 when not found.
func lineOfKey(data []byte, key string) int {
	if key == "" {
		return 0
	}
	leaf := key
	if i := strings.LastIndex(key, "."); i >= 0 {
		leaf = key[i+1:]
	}
	for n, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, leaf) {
			rest := strings.TrimSpace(t[len(leaf):])
			if strings.HasPrefix(rest, "=") {
				return n + 1
			}
		}
	}
	return 0
}

// resolvePaths makes the config's relative paths absolute against the config's folder.
func resolvePaths(c *Config, dir, cwd string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if c.Sandbox.Root == "" {
		c.Sandbox.Root = cwd
	} else {
		c.Sandbox.Root = abs(c.Sandbox.Root)
	}
	c.Leases.Revoked = abs(c.Leases.Revoked)
	c.MCP.TokenFile = abs(c.MCP.TokenFile)
	for i := range c.Leases.Keys {
		c.Leases.Keys[i].PublicKey = abs(c.Leases.Keys[i].PublicKey)
	}
	for i := range c.Devices {
		c.Devices[i].Socket = abs(c.Devices[i].Socket)
		c.Devices[i].TokenFile = abs(c.Devices[i].TokenFile)
	}
	for i := range c.Scopes {
		c.Scopes[i].Path = abs(c.Scopes[i].Path)
	}
}

// durationKeys are the settings written as Go durations.
var durationKeys = map[string]bool{"leases.leeway": true, "approvals.timeout": true,
	"media.action_timeout": true, "ui.search_debounce": true, "notify.timeout": true,
	"memory.embedder.timeout": true}

// locateBadDuration finds the first duration setting that does not parse, so
// its error can name the line and key (the TOML decoder reports neither for
// errors raised while converting a value).
func locateBadDuration(data []byte) *Error {
	section := ""
	for n, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			section = strings.Trim(t, "[] ")
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		key := strings.TrimSpace(k)
		if section != "" {
			key = section + "." + key
		}
		if !durationKeys[key] {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.Index(v, "#"); i >= 0 && !strings.HasPrefix(v, "\"") {
			v = strings.TrimSpace(v[:i])
		}
		raw := strings.Trim(v, "\"'")
		if _, err := time.ParseDuration(raw); err != nil || !strings.HasPrefix(v, "\"") {
			return &Error{Line: n + 1, Key: key, Rule: fmt.Sprintf("must be a duration string such as \"30s\" or \"10m\", got %s", v)}
		}
	}
	return nil
}
