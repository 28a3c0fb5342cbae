// Package config loads Vigil's TOML settings strictly (unknown keys and wrong
// types are errors naming file, line and key) and resolves where state lives.
package config

import "time"

// Config is the effective configuration: defaults overlaid with the file.
// Relative paths in the file are resolved against the file's folder by Load.
type Config struct {
	Theme     string           `toml:"theme" json:"theme"`
	Sandbox   SandboxConfig    `toml:"sandbox" json:"sandbox"`
	Tools     ToolsConfig      `toml:"tools" json:"tools"`
	Leases    LeasesConfig     `toml:"leases" json:"leases"`
	Approvals ApprovalsConfig  `toml:"approvals" json:"approvals"`
	Media     MediaConfig      `toml:"media" json:"media"`
	Devices   []DeviceConfig   `toml:"devices" json:"devices"`
	Scopes    []ScopeConfig    `toml:"scopes" json:"scopes"`
	UI        UIConfig         `toml:"ui" json:"ui"`
	MCP       MCPConfig        `toml:"mcp" json:"mcp"`
	Notify    NotifyConfig     `toml:"notify" json:"notify"`
	Queue     QueueConfig      `toml:"queue" json:"queue"`
	Memory    MemoryConfig     `toml:"memory" json:"memory"`
	Operators []OperatorConfig `toml:"operators" json:"operators"`
	Agents    []AgentConfig    `toml:"agents" json:"agents"`
	Decisions DecisionsConfig  `toml:"decisions" json:"decisions"`
	SSH       SSHConfig        `toml:"ssh" json:"ssh"`
	Rules     []RuleConfig     `toml:"rules" json:"rules"`
}

// MCPConfig is `vigil mcp`'s section. TokenFile holds the bearer token that
// every Streamable HTTP request must carry (VIGIL_MCP_TOKEN wins over it).
type MCPConfig struct {
	TokenFile string `toml:"token_file,omitempty" json:"token_file,omitempty"`
}

// SandboxConfig bounds what local search may read.
type SandboxConfig struct {
	Root string   `toml:"root" json:"root"` // default: the directory Vigil runs in
	Deny []string `toml:"deny" json:"deny"`
}

// ToolsConfig groups the tool sections.
type ToolsConfig struct {
	Search SearchConfig `toml:"search" json:"search"`
}

// SearchConfig is seed 001 §5's [tools.search].
type SearchConfig struct {
	Enabled           bool   `toml:"enabled" json:"enabled"`
	Binary            string `toml:"binary" json:"binary"`
	FallbackBinary    string `toml:"fallback_binary" json:"fallback_binary"`
	DefaultTimeoutMS  int64  `toml:"default_timeout_ms" json:"default_timeout_ms"`
	DefaultMaxResults int64  `toml:"default_max_results" json:"default_max_results"`
	MaxMatchesPerFile int64  `toml:"max_matches_per_file" json:"max_matches_per_file"`
	MaxFiles          int64  `toml:"max_files" json:"max_files"`
	MaxFileSizeBytes  int64  `toml:"max_file_size_bytes" json:"max_file_size_bytes"`
	// MaxLineBytes caps what one line contributes to a result: a longer
	// line's text is cut to a window of this many bytes around its first
	// match (an extension; see docs/search.md).
	MaxLineBytes int64 `toml:"max_line_bytes" json:"max_line_bytes"`
}

// LeasesConfig says which lease tokens Vigil trusts.
type LeasesConfig struct {
	Issuer   string     `toml:"issuer" json:"issuer"`
	Audience string     `toml:"audience" json:"audience"`
	Leeway   Duration   `toml:"leeway" json:"leeway"`
	Revoked  string     `toml:"revoked" json:"revoked"` // one jti a line
	Keys     []LeaseKey `toml:"keys" json:"keys"`
}

// LeaseKey is one trusted public key, chosen by kid.
type LeaseKey struct {
	KID       string `toml:"kid" json:"kid"`
	Alg       string `toml:"alg" json:"alg"` // RS256 or EdDSA
	PublicKey string `toml:"public_key" json:"public_key"`
}

// ApprovalsConfig governs the pending queue.
type ApprovalsConfig struct {
	Timeout Duration `toml:"timeout" json:"timeout"`
	Bell    bool     `toml:"bell" json:"bell"`
}

// MediaConfig bounds each media action.
type MediaConfig struct {
	ActionTimeout Duration `toml:"action_timeout" json:"action_timeout"`
}

// DeviceConfig is one allowlisted device.
type DeviceConfig struct {
	ID        string `toml:"id" json:"id"`
	Driver    string `toml:"driver" json:"driver"` // sim | mpv | hass
	Socket    string `toml:"socket,omitempty" json:"socket,omitempty"`
	BaseURL   string `toml:"base_url,omitempty" json:"base_url,omitempty"`
	EntityID  string `toml:"entity_id,omitempty" json:"entity_id,omitempty"`
	TokenEnv  string `toml:"token_env,omitempty" json:"token_env,omitempty"`
	TokenFile string `toml:"token_file,omitempty" json:"token_file,omitempty"`
}

// ScopeConfig is one allowlisted scope for seed 000's scoped search.
type ScopeConfig struct {
	Name       string `toml:"name" json:"name"`
	Kind       string `toml:"kind" json:"kind"` // files | emails | dataset
	Path       string `toml:"path" json:"path"`
	PrimaryKey string `toml:"primary_key,omitempty" json:"primary_key,omitempty"`
}

// UIConfig holds screen preferences.
type UIConfig struct {
	SearchDebounce Duration `toml:"search_debounce" json:"search_debounce"`
	// Mouse starts the screen with mouse tracking on (clicks and the wheel
	// act; the terminal's own text selection needs shift) or off (the
	// terminal selects text). alt+m switches it while Vigil runs.
	Mouse bool `toml:"mouse" json:"mouse"`
}

// Duration is a time.Duration written as "30s" or "10m" in TOML and JSON.
type Duration struct{ time.Duration }

// UnmarshalText parses Go duration syntax.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText writes Go duration syntax.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// DefaultDeny is the sandbox's deny list when the config gives none.
var DefaultDeny = []string{".git/", "**/.env", "**/*.pem", "**/id_*", "**/.ssh/"}

// Default returns the configuration used when no file sets a key.
func Default() Config {
	return Config{
		Sandbox: SandboxConfig{Deny: append([]string(nil), DefaultDeny...)},
		Tools: ToolsConfig{Search: SearchConfig{
			Enabled: true, Binary: "ugrep", FallbackBinary: "rg",
			DefaultTimeoutMS: 20000, DefaultMaxResults: 200, MaxMatchesPerFile: 50,
			MaxFiles: 10000, MaxFileSizeBytes: 2000000, MaxLineBytes: 4096,
		}},
		Leases: LeasesConfig{
			Issuer: "abos-policy-authority", Audience: "abos-executor",
			Leeway: Duration{30 * time.Second}, Revoked: "revoked.txt",
		},
		Approvals: ApprovalsConfig{Timeout: Duration{10 * time.Minute}},
		Media:     MediaConfig{ActionTimeout: Duration{10 * time.Second}},
		UI:        UIConfig{SearchDebounce: Duration{120 * time.Millisecond}, Mouse: true},
		Notify:    NotifyConfig{Terminal: true, Timeout: Duration{DefaultNotifyTimeout}},
		SSH:       SSHConfig{IdleTimeout: Duration{DefaultSSHIdleTimeout}},
	}
}
