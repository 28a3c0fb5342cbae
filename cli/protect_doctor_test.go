package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// doctorReport runs `vigil doctor --json` on home and returns its checks
// and exit code.
func doctorReport(t *testing.T, home string) ([]doctorCheck, int) {
	t.Helper()
	out, errs, code := runReal(t, home, "doctor", "--json")
	var rep struct {
		Checks []doctorCheck `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: exit %d: %v\n%s%s", code, err, out, errs)
	}
	return rep.Checks, code
}

// wantCheck fails t unless check name is there with ok and a detail
// holding each of want.
func wantCheck(t *testing.T, cs []doctorCheck, name string, ok bool, want ...string) {
	t.Helper()
	c := findCheck(cs, name)
	if c == nil {
		t.Fatalf("no %q check in %+v", name, cs)
	}
	if c.OK != ok {
		t.Fatalf("%s: ok %v, want %v: %s", name, c.OK, ok, c.Detail)
	}
	for _, w := range want {
		if !strings.Contains(c.Detail, w) {
			t.Fatalf("%s: %q does not say %q", name, c.Detail, w)
		}
	}
}

// tightHome is a 0700 home under a 0755 folder, with config (0600).
func tightHome(t *testing.T, config string) (root, home string) {
	t.Helper()
	root = t.TempDir()
	home = filepath.Join(root, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "config.toml"), config, 0o600)
	return root, home
}

func writeFile(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestDoctorHomeNamesWhoCanWriteIt(t *testing.T) {
	root, home := tightHome(t, "")
	cs, code := doctorReport(t, home)
	wantCheck(t, cs, "home", true, home+" (drwx------): only ")
	if code != 0 {
		t.Fatalf("a tight home: exit %d: %+v", code, cs)
	}
	if err := os.Chmod(home, 0o775); err != nil {
		t.Fatal(err)
	}
	cs, code = doctorReport(t, home)
	wantCheck(t, cs, "home", false, home+" (drwxrwxr-x) owned by ", "its group may write it", "chmod go-w "+home)
	if code != ExitCheck {
		t.Fatalf("a group-writable home: exit %d, want %d", code, ExitCheck)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	cs, code = doctorReport(t, home)
	wantCheck(t, cs, "home", false, root+" (drwxrwxrwx)", "a folder above the home", "chmod go-w "+root)
	if code != ExitCheck {
		t.Fatalf("a loose parent: exit %d, want %d", code, ExitCheck)
	}
}

// operatorLine is an authorized_keys line for a new Ed25519 key, or for a
// FIDO one (sk-ssh-ed25519@openssh.com, which needs no device to write).
func operatorLine(t *testing.T, fido bool) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !fido {
		pk, err := ssh.NewPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk)))
	}
	wire := ssh.Marshal(struct {
		Name, Key, App string
	}{ssh.KeyAlgoSKED25519, string(pub), "ssh:"})
	return ssh.KeyAlgoSKED25519 + " " + base64.StdEncoding.EncodeToString(wire) + " phone"
}

func TestDoctorDecisionsAndOperators(t *testing.T) {
	_, home := tightHome(t, "")
	cs, _ := doctorReport(t, home)
	wantCheck(t, cs, "decision", true, "not required", "whoever can write the home may decide")
	wantCheck(t, cs, "operator", true, "no [[operators]]")

	_, home = tightHome(t, "[decisions]\nrequire_operator_key = true\n")
	cs, code := doctorReport(t, home)
	wantCheck(t, cs, "decision", false, "nobody can decide")
	if code != ExitCheck {
		t.Fatalf("require_operator_key without operators: exit %d", code)
	}

	_, home = tightHome(t, "")
	keys := filepath.Join(home, "ada.keys")
	writeFile(t, keys, "# ada's phone\n"+operatorLine(t, true)+"\n", 0o600)
	writeFile(t, filepath.Join(home, "config.toml"), "[decisions]\nrequire_operator_key = true\n\n[[operators]]\n"+
		"name = \"ada\"\nkeys = [\""+operatorLine(t, false)+"\"]\nkeys_file = \"ada.keys\"\n", 0o600)
	cs, _ = doctorReport(t, home)
	wantCheck(t, cs, "decision", true, "decisions need an operator's key: 1 operator over SSH")
	wantCheck(t, cs, "operator", true, "ada: 2 keys, 1 on a security key")

	writeFile(t, keys, "ssh-ed25519 not-base64\n", 0o600)
	cs, code = doctorReport(t, home)
	wantCheck(t, cs, "operator", false, `operator "ada": key 2`)
	if code != ExitCheck {
		t.Fatalf("an operator key that does not parse: exit %d", code)
	}
}

func TestDoctorHostKey(t *testing.T) {
	_, home := tightHome(t, "")
	p := filepath.Join(home, "keys", "ssh_host_ed25519")
	cs, _ := doctorReport(t, home)
	wantCheck(t, cs, "ssh-host", true, p, "made on first start")

	if err := os.Mkdir(filepath.Join(home, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, "not a key\n", 0o600)
	cs, code := doctorReport(t, home)
	wantCheck(t, cs, "ssh-host", false, "not a private key")
	if code != ExitCheck {
		t.Fatalf("a host key that does not parse: exit %d", code)
	}

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := ssh.NewSignerFromKey(priv)
	writeFile(t, p, string(pem.EncodeToMemory(block)), 0o600)
	cs, _ = doctorReport(t, home)
	wantCheck(t, cs, "ssh-host", true, "ssh-ed25519 "+ssh.FingerprintSHA256(signer.PublicKey()))

	writeFile(t, p, string(pem.EncodeToMemory(block)), 0o644)
	cs, _ = doctorReport(t, home)
	wantCheck(t, cs, "ssh-host", false, "others may read the gate's private key", "chmod 600 "+p)

	other := filepath.Join(home, "elsewhere_key")
	writeFile(t, filepath.Join(home, "config.toml"), "[ssh]\nhost_key = \"elsewhere_key\"\n", 0o600)
	cs, _ = doctorReport(t, home)
	wantCheck(t, cs, "ssh-host", true, other+": not there yet")
}

func TestDoctorAgentTokens(t *testing.T) {
	_, home := tightHome(t, "")
	cs, _ := doctorReport(t, home)
	wantCheck(t, cs, "agents", true, "no [[agents]]")

	writeFile(t, filepath.Join(home, "claude.token"), "0123456789abcdef0123\n", 0o600)
	writeFile(t, filepath.Join(home, "codex.token"), "0123456789abcdef-codex\n", 0o600)
	agents := func(extra string) string {
		return "[[agents]]\nname = \"claude\"\ntoken_file = \"claude.token\"\n\n[[agents]]\nname = \"codex\"\n" +
			"token_file = \"codex.token\"\n" + extra
	}
	writeFile(t, filepath.Join(home, "config.toml"), agents(""), 0o600)
	cs, code := doctorReport(t, home)
	wantCheck(t, cs, "agents", true, "2 agents with their own token: claude, codex")
	if code != 0 {
		t.Fatalf("good tokens: exit %d: %+v", code, cs)
	}

	for _, c := range []struct{ name, extra, token, want string }{
		{"short", "", "short-token\n", "codex: the token in " + filepath.Join(home, "codex.token") + " is 11 characters, shorter than 16"},
		{"shared", "", "0123456789abcdef0123\n", `is agent "claude"'s too`},
		{"missing env", "\n[[agents]]\nname = \"crush\"\ntoken_env = \"CRUSH_TOKEN\"\n", "0123456789abcdef-codex\n",
			"crush: $CRUSH_TOKEN is not set here"},
	} {
		writeFile(t, filepath.Join(home, "codex.token"), c.token, 0o600)
		writeFile(t, filepath.Join(home, "config.toml"), agents(c.extra), 0o600)
		cs, code := doctorReport(t, home)
		wantCheck(t, cs, "agents", false, c.want)
		if code != ExitCheck {
			t.Fatalf("%s token: exit %d", c.name, code)
		}
	}
	os.Remove(filepath.Join(home, "codex.token"))
	writeFile(t, filepath.Join(home, "config.toml"), agents(""), 0o600)
	cs, _ = doctorReport(t, home)
	wantCheck(t, cs, "agents", false, "codex: token_file:", "no such file")
}

// TestDoctorAccountSaysWhatAnAgentCouldDo: the summary, for each kind of
// account that may run doctor; only a person's account that can write a
// home claiming decisions need a key fails.
func TestDoctorAccountSaysWhatAnAgentCouldDo(t *testing.T) {
	for _, c := range []struct {
		name string
		f    accountFacts
		ok   bool
		want string
	}{
		{"person, plain home", accountFacts{UID: 1000, Name: "ada", CanWrite: true}, true,
			"this account (ada) can write the home: any process of it (an agent's shell too) can run vigil approve"},
		{"person, home claiming a key", accountFacts{UID: 1000, Name: "ada", CanWrite: true, Require: true}, false,
			"holds only against agents that play fair"},
		{"service account", accountFacts{UID: 998, Name: "vigil", CanWrite: true, Service: true, Require: true}, true,
			"no login shell, as the executor's own account should"},
		{"root", accountFacts{UID: 0, Name: "root", CanWrite: true}, true, "this account is root"},
		{"agent account", accountFacts{UID: 1001, Name: "agent", Owner: 998, OwnerName: "vigil", Made: true, Require: true},
			true, "this account (agent) cannot write the home, vigil's: an agent running as it cannot run vigil approve"},
	} {
		got := judgeAccount(c.f)
		if got.Name != "account" || got.OK != c.ok || !strings.Contains(got.Detail, c.want) {
			t.Errorf("%s: %+v, want ok %v saying %q", c.name, got, c.ok, c.want)
		}
	}
	_, home := tightHome(t, "")
	cs, _ := doctorReport(t, home)
	if findCheck(cs, "account") == nil {
		t.Fatalf("no account check: %+v", cs)
	}
}

func TestDoctorHomeNotMadeYet(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new")
	cs, _ := doctorReport(t, home)
	wantCheck(t, cs, "home", true, home+": not made yet")
	if _, err := os.Stat(home); err == nil {
		t.Fatal("doctor made the home; it changes nothing")
	}
}
