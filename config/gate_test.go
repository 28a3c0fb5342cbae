package config

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

const adaKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE9Y2bhrjX8bF8eIXRzi1fXS7dAeBKFhU8qTFDWeb2cm ada@laptop"

// skKeyLine is a FIDO security key's public key line, built from its wire
// format (no hardware is needed to write one down).
func skKeyLine(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(strings.NewReader(strings.Repeat("fido", 16)))
	if err != nil {
		t.Fatal(err)
	}
	wire := ssh.Marshal(struct {
		Name, Key, App string
	}{ssh.KeyAlgoSKED25519, string(pub), "ssh:"})
	return ssh.KeyAlgoSKED25519 + " " + base64.StdEncoding.EncodeToString(wire) + " yubikey"
}

func TestGateSections(t *testing.T) {
	p := write(t, fmt.Sprintf(`[decisions]
require_operator_key = true

[ssh]
advertise = "vigil@gate.example:2222"
idle_timeout = "5m"

[[operators]]
name = "ada"
keys = [%q, %q]

[[agents]]
name = "claude"
token_file = "agents/claude.token"
`, adaKey, skKeyLine(t)))
	cfg, err := Load(p, "/")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Decisions.RequireOperatorKey || cfg.SSH.Advertise != "vigil@gate.example:2222" || cfg.SSH.IdleTimeout.Duration != 5*time.Minute {
		t.Fatalf("decisions/ssh: %+v %+v", cfg.Decisions, cfg.SSH)
	}
	if len(cfg.Operators) != 1 || cfg.Operators[0].Name != "ada" || len(cfg.Operators[0].Keys) != 2 {
		t.Fatalf("operators: %+v", cfg.Operators)
	}
	if a := cfg.Agents; len(a) != 1 || a[0].Name != "claude" || !strings.HasSuffix(a[0].TokenFile, "/agents/claude.token") || !strings.HasPrefix(a[0].TokenFile, "/") {
		t.Fatalf("agents (token_file resolved against the config's folder): %+v", a)
	}
}

func TestGateDefaults(t *testing.T) {
	cfg := Default()
	if cfg.Decisions.RequireOperatorKey || cfg.SSH.IdleTimeout.Duration != 15*time.Minute || len(cfg.Operators) != 0 {
		t.Fatalf("defaults: %+v %+v", cfg.Decisions, cfg.SSH)
	}
}

func TestGateErrorsNameTheKeyAndRule(t *testing.T) {
	rsa := "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDbYdWAyFe4Do1JLbH/YoTkcvk1LQZcexGzGc/qbCZi8pOMR23prDuPnLJS/mhjbVgenGiVtdyGsOH0vuNxl7m6322PQ2aE6GUXC0sIIlbHoRt1wXcllTrLxcKiFPYZ205fer/y4M2x9/8Tu2/ZdK6aFRX9iXvvXpj6u2Q5zMNzCzHVS2s9qlEtoRcGjKXE0j4Y7nkHT8Xy8hG7BKw7U5g8rM6DFlMARRFhCz0Ex3rYNw/+t1GC1+EJyv+MpjdcdyFTLiunQFtFpmL9OcLHqPK9a2LR8TnxupMHlZO6vo5PwZAUYsJ6+xXWgOHjnVf9ouCyhgBI6woMo5jphoESl09B r"
	for _, c := range []struct{ body, want string }{
		{"[[operators]]\nname = \"Ada Lovelace\"\nkeys = [\"" + adaKey + "\"]\n", ":2: operators[0].name: must be 1 to 63 lowercase"},
		{"[[operators]]\nname = \"ada\"\nkeys = []\n", ":3: operators[0].keys: at least one public key (keys or keys_file)"},
		{"[[operators]]\nname = \"ada\"\nkeys = [\"not a key\"]\n", "operators[0].keys[0]: is not a public key line"},
		{"[[operators]]\nname = \"ada\"\nkeys = [\"" + rsa + "\"]\n", "operators[0].keys[0]: must be one of ssh-ed25519, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com, got ssh-rsa"},
		{"[[operators]]\nname = \"ada\"\nkeys = [\"command=\\\"ls\\\" " + adaKey + "\"]\n", "operators[0].keys[0]: authorized_keys options (command=\"ls\") are not taken here"},
		{"[[operators]]\nname = \"ada\"\nkeys = [\"" + adaKey + "\"]\n[[operators]]\nname = \"bob\"\nkeys = [\"" + adaKey + "\"]\n", "operators[1].keys[0]: key SHA256:"},
		{"[[operators]]\nname = \"ada\"\nkeys = [\"" + adaKey + "\"]\n[[operators]]\nname = \"ada\"\nkeys = [\"" + adaKey + "\"]\n", ":5: operators[1].name: duplicate operator name \"ada\""},
		{"[[agents]]\nname = \"claude\"\n", "agents[0].token_file: exactly one of token_file and token_env"},
		{"[[agents]]\nname = \"claude\"\ntoken_file = \"a\"\ntoken_env = \"B\"\n", "agents[0].token_file: exactly one of"},
		{"[[agents]]\nname = \" claude\"\ntoken_env = \"B\"\n", "agents[0].name: must be a non-empty name"},
		{"[ssh]\nidle_timeout = \"0s\"\n", ":2: ssh.idle_timeout: must be positive"},
		{"[ssh]\nadvertise = \"gate.example\"\n", ":2: ssh.advertise: must be host:port or user@host:port"},
		{"[decisions]\nrequire_operator_key = \"yes\"\n", ":2: decisions.require_operator_key"},
	} {
		_, err := Load(write(t, c.body), "/")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant …%s…", c.body, err, c.want)
		}
	}
}

func TestOperatorKeysReadsKeysAndKeysFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ada.pub")
	if err := os.WriteFile(file, []byte("# ada's phone\n\n"+skKeyLine(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := OperatorConfig{Name: "ada", Keys: []string{adaKey}, KeysFile: file}.OperatorKeys()
	if err != nil || len(keys) != 2 || keys[0].Type() != ssh.KeyAlgoED25519 || keys[1].Type() != ssh.KeyAlgoSKED25519 {
		t.Fatalf("keys %v, err %v", keys, err)
	}
	if _, err := (OperatorConfig{Name: "ada", KeysFile: filepath.Join(dir, "missing")}).OperatorKeys(); err == nil || !strings.Contains(err.Error(), `operator "ada": keys_file`) {
		t.Fatalf("missing keys_file: %v", err)
	}
}
