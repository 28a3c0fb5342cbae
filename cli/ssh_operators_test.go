package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// skKeyLine is an authorized_keys line of a FIDO Ed25519 key (made in
// software: ssh-keygen needs the token itself to make one).
func skKeyLine(t *testing.T, comment string) (string, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wire := gossh.Marshal(struct{ Name, Key, App string }{gossh.KeyAlgoSKED25519, string(pub), "ssh:"})
	pk, err := gossh.ParsePublicKey(wire)
	if err != nil {
		t.Fatal(err)
	}
	return gossh.KeyAlgoSKED25519 + " " + base64.StdEncoding.EncodeToString(wire) + " " + comment, gossh.FingerprintSHA256(pk)
}

// operators list reads the config alone (no server): each operator's keys
// with type, fingerprint and comment (shown display-safe), a FIDO key
// marked as needing a touch, keys_file's keys too, and the gate's host key
// once serve has made it.
func TestOperatorsList(t *testing.T) {
	h := newCLIHome(t)
	if out := h.must(0, "operators", "list"); !strings.Contains(out, "no operators") {
		t.Fatalf("none: %s", out)
	}
	ada := newSSHKey(t, "ada@laptop")
	sk, skFP := skKeyLine(t, "ada@key\x1b]0;pwned\x07")
	bob := newSSHKey(t, "bob@phone")
	os.WriteFile(filepath.Join(h.home, "bob.pub"), []byte("# bob's keys\n"+bob.line+"\n"), 0o600)
	f, _ := os.OpenFile(filepath.Join(h.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	b, _ := json.Marshal([]string{ada.line, sk}) // a TOML array of basic strings is this JSON
	f.WriteString("\n[[operators]]\nname = \"ada\"\nkeys = " + string(b) + "\n\n[[operators]]\nname = \"bob\"\nkeys_file = \"bob.pub\"\n")
	f.Close()

	out := h.must(0, "operators", "list")
	for _, want := range []string{ada.fingerprint, skFP, bob.fingerprint, "ada@laptop", "bob@phone", "sk-ssh-ed25519@openssh.com", "a touch for each sign-in"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "SSH host key") {
		t.Fatalf("human:\n%q", out)
	}
	var got struct {
		Operators []struct {
			Name string
			Keys []struct {
				Type, Fingerprint, Comment string
				SecurityKey                bool `json:"security_key"`
			}
		}
		HostKey *struct{ Fingerprint string } `json:"host_key"`
	}
	js := h.must(0, "operators", "list", "--json")
	if err := json.Unmarshal([]byte(js), &got); err != nil || len(got.Operators) != 2 || strings.ContainsAny(js, "\x1b\x07") {
		t.Fatalf("json: %v\n%s", err, js)
	}
	a, bo := got.Operators[0], got.Operators[1]
	if a.Name != "ada" || len(a.Keys) != 2 || a.Keys[0].Fingerprint != ada.fingerprint || a.Keys[0].SecurityKey ||
		!a.Keys[1].SecurityKey || a.Keys[1].Fingerprint != skFP || a.Keys[1].Comment != "ada@key\x1b]0;pwned\x07" {
		t.Fatalf("ada: %+v", a)
	}
	if bo.Name != "bob" || len(bo.Keys) != 1 || bo.Keys[0].Fingerprint != bob.fingerprint || got.HostKey != nil {
		t.Fatalf("bob: %+v host %+v", bo, got.HostKey)
	}

	// once serve --ssh has made the host key, the list shows its fingerprint
	s := h.serveSSH()
	if out := h.must(0, "operators", "list"); !strings.Contains(out, "SSH host key: ssh-ed25519 "+s.hostKey) {
		t.Fatalf("host key %s:\n%s", s.hostKey, out)
	}
}
