package config

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// The sections that say who may decide and who is asking: the people
// ([[operators]], over SSH with their keys), the agents ([[agents]], known by
// the token they present), whether a decision needs an operator's key
// ([decisions]), and how the SSH gate is reached ([ssh]). docs/protect.md
// tells the deployment they belong to.

// OperatorConfig is one person who may decide over SSH.
type OperatorConfig struct {
	// Name is who the audit trail says decided: "operator:<name>".
	Name string `toml:"name" json:"name"`
	// Keys are the person's public keys, each one line as in
	// authorized_keys ("ssh-ed25519 AAAA… comment"); OperatorKeyTypes
	// lists the kinds taken.
	Keys []string `toml:"keys" json:"keys"`
	// KeysFile is a file of such lines (blank lines and # comments
	// skipped), read by OperatorKeys; keys and keys_file may both be given.
	KeysFile string `toml:"keys_file,omitempty" json:"keys_file,omitempty"`
}

// OperatorKeys reads an operator's keys: keys, then keys_file's lines.
func (op OperatorConfig) OperatorKeys() ([]ssh.PublicKey, error) {
	lines := append([]string(nil), op.Keys...)
	if op.KeysFile != "" {
		b, err := os.ReadFile(op.KeysFile)
		if err != nil {
			return nil, fmt.Errorf("operator %q: keys_file: %v", op.Name, err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
	}
	keys := make([]ssh.PublicKey, 0, len(lines))
	for i, l := range lines {
		pk, err := ParseOperatorKey(l)
		if err != nil {
			return nil, fmt.Errorf("operator %q: key %d: %v", op.Name, i+1, err)
		}
		keys = append(keys, pk)
	}
	return keys, nil
}

// OperatorKeyTypes are the public keys an operator may hold: Ed25519, and
// the FIDO security keys (sk-…), with which signing needs a touch.
var OperatorKeyTypes = []string{ssh.KeyAlgoED25519, ssh.KeyAlgoSKED25519, ssh.KeyAlgoSKECDSA256}

// AgentConfig is one agent, known by the bearer token it presents to the
// MCP endpoint; its lease's sub must name it. The name a client reports
// about itself is a label, never this identity.
type AgentConfig struct {
	Name string `toml:"name" json:"name"`
	// TokenFile holds the agent's token (its first line); TokenEnv names
	// an environment variable holding it instead. One of them is required.
	TokenFile string `toml:"token_file,omitempty" json:"token_file,omitempty"`
	TokenEnv  string `toml:"token_env,omitempty" json:"token_env,omitempty"`
	// LeaseTTL is how long a lease Vigil mints for this agent lasts
	// (DefaultLeaseTTL when 0, at most MaxLeaseTTL); Grants say what it
	// may be minted for (config/grants.go).
	LeaseTTL Duration      `toml:"lease_ttl" json:"lease_ttl"`
	Grants   []GrantConfig `toml:"grants,omitempty" json:"grants,omitempty"`
}

// MinAgentTokenBytes is the shortest agent token taken at start.
const MinAgentTokenBytes = 16

// DecisionsConfig says who may decide on this home.
type DecisionsConfig struct {
	// RequireOperatorKey: only an operator over SSH, or a shared queue's
	// operator, decides; this account's `vigil approve`/`deny` and the local
	// TUI's keys are refused.
	RequireOperatorKey bool `toml:"require_operator_key" json:"require_operator_key"`
}

// SSHConfig is the SSH gate of `vigil serve --ssh ADDR`.
type SSHConfig struct {
	// Advertise is how people reach the gate, "host:port" or
	// "user@host:port": the {ssh} notification placeholder is the command
	// that opens a task there. Empty: the --ssh address.
	Advertise string `toml:"advertise,omitempty" json:"advertise,omitempty"`
	// HostKey is the gate's private host key, made on first start when
	// absent (default keys/ssh_host_ed25519 in the home).
	HostKey string `toml:"host_key,omitempty" json:"host_key,omitempty"`
	// IdleTimeout closes a session nobody typed in for this long.
	IdleTimeout Duration `toml:"idle_timeout" json:"idle_timeout"`
}

// DefaultSSHIdleTimeout closes an idle SSH session unless set.
const DefaultSSHIdleTimeout = 15 * time.Minute

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// validateOperators checks [[operators]]: unique names, and keys that parse,
// are of a kind taken and belong to one operator only.
func validateOperators(ops []OperatorConfig) error {
	names, owners := map[string]bool{}, map[string]string{}
	for i, op := range ops {
		key := fmt.Sprintf("operators[%d]", i)
		switch {
		case !namePattern.MatchString(op.Name):
			return &Error{Key: key + ".name", Rule: fmt.Sprintf("must be 1 to 63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit, got %q", op.Name)}
		case names[op.Name]:
			return &Error{Key: key + ".name", Rule: fmt.Sprintf("duplicate operator name %q", op.Name)}
		case len(op.Keys) == 0 && op.KeysFile == "":
			return &Error{Key: key + ".keys", Rule: "at least one public key (keys or keys_file) is required"}
		}
		names[op.Name] = true
		for j, line := range op.Keys {
			pk, err := ParseOperatorKey(line)
			if err != nil {
				return &Error{Key: fmt.Sprintf("%s.keys[%d]", key, j), Rule: err.Error()}
			}
			fp := ssh.FingerprintSHA256(pk)
			if other, dup := owners[fp]; dup {
				return &Error{Key: fmt.Sprintf("%s.keys[%d]", key, j), Rule: fmt.Sprintf("key %s is also operator %q's: a key names one person", fp, other)}
			}
			owners[fp] = op.Name
		}
	}
	return nil
}

// ParseOperatorKey reads one authorized_keys line (options are refused: a
// key's rights are the operator's, written here) of a kind in
// OperatorKeyTypes.
func ParseOperatorKey(line string) (ssh.PublicKey, error) {
	pk, _, options, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return nil, fmt.Errorf("is not a public key line (\"ssh-ed25519 AAAA… comment\"): %v", err)
	}
	if len(options) > 0 {
		return nil, fmt.Errorf("authorized_keys options (%s) are not taken here", strings.Join(options, ","))
	}
	for _, t := range OperatorKeyTypes {
		if pk.Type() == t {
			return pk, nil
		}
	}
	return nil, fmt.Errorf("must be one of %s, got %s", strings.Join(OperatorKeyTypes, ", "), pk.Type())
}

// validateAgents checks [[agents]]: unique names, one token source each,
// and grants that name configured devices.
func validateAgents(agents []AgentConfig, devices []DeviceConfig) error {
	names := map[string]bool{}
	for i, a := range agents {
		key := fmt.Sprintf("agents[%d]", i)
		switch {
		case a.Name == "" || strings.TrimSpace(a.Name) != a.Name || strings.ContainsAny(a.Name, "\x00\n\r\t"):
			return &Error{Key: key + ".name", Rule: fmt.Sprintf("must be a non-empty name without spaces around it or control characters, got %q", a.Name)}
		case names[a.Name]:
			return &Error{Key: key + ".name", Rule: fmt.Sprintf("duplicate agent name %q", a.Name)}
		case (a.TokenFile == "") == (a.TokenEnv == ""):
			return &Error{Key: key + ".token_file", Rule: "exactly one of token_file and token_env is required"}
		}
		names[a.Name] = true
		if err := validateGrants(key, a, devices); err != nil {
			return err
		}
	}
	return nil
}

// validate checks [ssh].
func (s SSHConfig) validate() error {
	if s.IdleTimeout.Duration <= 0 {
		return &Error{Key: "ssh.idle_timeout", Rule: fmt.Sprintf("must be positive, got %s", s.IdleTimeout.Duration)}
	}
	if s.Advertise != "" {
		hostport := s.Advertise
		if at := strings.LastIndex(hostport, "@"); at >= 0 {
			hostport = hostport[at+1:]
		}
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			return &Error{Key: "ssh.advertise", Rule: fmt.Sprintf("must be host:port or user@host:port, got %q", s.Advertise)}
		}
	}
	return nil
}
