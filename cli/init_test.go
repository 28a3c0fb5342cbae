package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
)

// runInitCLI runs the CLI in-process as the binary does (exit code
// included) with env as its whole environment and in as its stdin.
func runInitCLI(t *testing.T, env map[string]string, in io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err, app.In = &out, &errb, in
	app.Getenv = func(k string) string { return env[k] }
	app.Cwd = t.TempDir()
	code = execute(context.Background(), app, args)
	return out.String(), errb.String(), code
}

// pathWith sets PATH to a folder holding only an mpv stand-in (when
// mpv is true): vigil init looks for mpv on PATH.
func pathWith(t *testing.T, mpv bool) {
	t.Helper()
	bin := t.TempDir()
	if mpv {
		if err := os.WriteFile(filepath.Join(bin, "mpv"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
}

type initJSON struct {
	Home      string   `json:"home"`
	Config    string   `json:"config"`
	TokenFile string   `json:"token_file"`
	Agent     string   `json:"agent"`
	Device    string   `json:"device"`
	Driver    string   `json:"driver"`
	Socket    string   `json:"socket"`
	Made      []string `json:"made"`
	Kept      []string `json:"kept"`
}

func decodeInit(t *testing.T, out string) initJSON {
	t.Helper()
	var j initJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return j
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// vigil init into an empty folder: every file, private; the config loads
// with the agent, its grants for the device and the issuer key trusted;
// doctor passes; the token is long and random; the next steps name the
// token file and the home.
func TestInitMakesAWorkingHome(t *testing.T) {
	pathWith(t, false)
	dir := filepath.Join(t.TempDir(), "home")
	out, errs, code := runInitCLI(t, nil, strings.NewReader(""), "init", "--dir", dir, "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	tokenFile := filepath.Join(dir, "agents", "my-agent.token")
	files := map[string]os.FileMode{
		filepath.Join(dir, "config.toml"): 0o600, tokenFile: 0o600,
		filepath.Join(dir, "keys", lease.OperatorKeyFile): 0o600, filepath.Join(dir, "keys", lease.IssuerKeyFile): 0o600,
		filepath.Join(dir, "keys", lease.OperatorPubFile): 0o644, filepath.Join(dir, "keys", lease.IssuerPubFile): 0o644,
		dir: 0o700, filepath.Join(dir, "agents"): 0o700, filepath.Join(dir, "keys"): 0o700,
	}
	for p, want := range files {
		if got := mode(t, p); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
		if p != dir && !strings.Contains(out, "made  "+p+"\n") && filepath.Ext(p) != "" {
			t.Errorf("the output does not say %s was made:\n%s", p, out)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "config.toml"), dir)
	if err != nil {
		t.Fatalf("the config does not load: %v", err)
	}
	if len(cfg.Devices) != 1 || cfg.Devices[0].Driver != "sim" || len(cfg.Agents) != 1 {
		t.Fatalf("devices %+v agents %+v", cfg.Devices, cfg.Agents)
	}
	a := cfg.Agents[0]
	if a.Name != "my-agent" || a.TokenFile != tokenFile || len(a.Grants) != 2 {
		t.Fatalf("agent %+v", a)
	}
	covers := func(c string) bool {
		return slices.ContainsFunc(a.Grants, func(g config.GrantConfig) bool {
			return g.Covers(c, cfg.Devices[0].ID, func(globs []string) bool { return slices.Contains(globs, "127.0.0.1") })
		})
	}
	for _, c := range config.GrantCapabilities {
		if !covers(c) {
			t.Errorf("no grant covers %s on %s", c, cfg.Devices[0].ID)
		}
	}
	if len(cfg.Leases.Keys) != 1 || cfg.Leases.Keys[0].PublicKey != filepath.Join(dir, "keys", lease.IssuerPubFile) {
		t.Fatalf("the issuer key is not trusted: %+v", cfg.Leases.Keys)
	}
	tok := readToken(t, tokenFile)
	if len(tok) < 2*config.MinAgentTokenBytes {
		t.Fatalf("token %d characters", len(tok))
	}
	if _, err := hex.DecodeString(tok); err != nil {
		t.Fatalf("token is not hex: %q", tok)
	}
	// another home gets another token
	other := filepath.Join(t.TempDir(), "other")
	if _, errs, code := runInitCLI(t, nil, strings.NewReader(""), "init", "--dir", other, "--yes"); code != 0 {
		t.Fatal(errs)
	}
	if readToken(t, filepath.Join(other, "agents", "my-agent.token")) == tok {
		t.Fatal("two homes got the same token")
	}
	for _, want := range []string{
		"VIGIL_HOME=" + dir + " vigil serve --mcp 127.0.0.1:8765",
		`claude mcp add --transport http vigil http://127.0.0.1:8765/mcp --header "Authorization: Bearer $(cat ` + tokenFile + `)"`,
		"codex mcp add vigil --url http://127.0.0.1:8765/mcp --bearer-token-env-var VIGIL_AGENT_TOKEN",
		`"headers": {"Authorization": "Bearer $(cat ` + tokenFile + `)"}}}`, "VIGIL_HOME=" + dir + " vigil\n", `Device "player": the simulator`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the next steps lack %q:\n%s", want, out)
		}
	}
	// doctor, on the home as made: every check passes here (the search
	// backends, who owns the folders above and the account running it
	// depend on the machine: those are only read when they fail)
	dout, derrs, dcode := runInitCLI(t, map[string]string{"VIGIL_HOME": dir}, strings.NewReader(""), "doctor", "--json")
	var report struct{ Checks []doctorCheck }
	if err := json.Unmarshal([]byte(dout), &report); err != nil {
		t.Fatalf("doctor: %v %s%s", err, dout, derrs)
	}
	for _, c := range report.Checks {
		deployment := c.Name == "search" || c.Name == "account" // the machine's, not the home's
		if !c.OK && !deployment {
			t.Errorf("doctor %s: %s", c.Name, c.Detail)
		}
		if c.Name == "agents" && !strings.Contains(c.Detail, "my-agent") {
			t.Errorf("doctor agents: %s", c.Detail)
		}
	}
	if dcode != 0 && !slices.ContainsFunc(report.Checks, func(c doctorCheck) bool { return !c.OK && (c.Name == "search" || c.Name == "account") }) {
		t.Fatalf("doctor exit %d", dcode)
	}
}

func readToken(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// A second vigil init keeps every file byte for byte and says so; a file
// removed since is made again, the others kept.
func TestInitKeepsWhatIsThere(t *testing.T) {
	pathWith(t, false)
	dir := t.TempDir()
	first := decodeInit(t, mustInit(t, "init", "--dir", dir, "--yes", "--json"))
	if len(first.Made) != 6 || len(first.Kept) != 0 {
		t.Fatalf("first init: made %v kept %v", first.Made, first.Kept)
	}
	before := map[string][]byte{}
	for _, f := range first.Made {
		before[f], _ = os.ReadFile(f)
	}
	out := mustInit(t, "init", "--dir", dir) // nothing to make: no question, no --yes needed
	for _, f := range first.Made {
		if !strings.Contains(out, "kept  "+f+" (it was there: not changed)") {
			t.Errorf("second init does not say %s was kept:\n%s", f, out)
		}
		if b, _ := os.ReadFile(f); !bytes.Equal(b, before[f]) {
			t.Errorf("%s changed", f)
		}
	}
	if strings.Contains(out, "made  ") {
		t.Fatalf("second init made something:\n%s", out)
	}
	os.Remove(first.TokenFile)
	third := decodeInit(t, mustInit(t, "init", "--dir", dir, "--yes", "--json"))
	if !slices.Equal(third.Made, []string{first.TokenFile}) || len(third.Kept) != 5 {
		t.Fatalf("third init: made %v kept %v", third.Made, third.Kept)
	}
	if tok := readToken(t, first.TokenFile); tok == strings.TrimSpace(string(before[first.TokenFile])) || len(tok) < 32 {
		t.Fatalf("the token made again: %q", tok)
	}
	// a key removed is not made alone (it would not match the others): said
	os.Remove(filepath.Join(dir, "keys", lease.IssuerPubFile))
	if out := mustInit(t, "init", "--dir", dir, "--yes"); !strings.Contains(out, "warning: 1 of the 4 key files are missing") ||
		strings.Contains(out, "made  ") {
		t.Fatalf("a missing key:\n%s", out)
	}
	// a kept config that does not load is said, with exit 2
	os.WriteFile(first.Config, []byte("[[devices]]\nid = 3\n"), 0o600)
	_, errs, code := runInitCLI(t, nil, strings.NewReader(""), "init", "--dir", dir, "--yes")
	if code != ExitBadInput || !strings.Contains(errs, "was kept and does not load") {
		t.Fatalf("broken kept config: exit %d %s", code, errs)
	}
}

func mustInit(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := runInitCLI(t, nil, strings.NewReader(""), args...)
	if code != 0 {
		t.Fatalf("vigil %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// mpv on PATH: an mpv device on a socket in the home, and the line that
// starts mpv on it; without: the simulator.
func TestInitChoosesMpvWhenFound(t *testing.T) {
	pathWith(t, true)
	dir := t.TempDir()
	out := mustInit(t, "init", "--dir", dir, "--yes")
	sock := filepath.Join(dir, "mpv.sock")
	if !strings.Contains(out, "mpv --idle --input-ipc-server="+sock+"\n") || !strings.Contains(out, `Device "player": mpv`) {
		t.Fatalf("no mpv step:\n%s", out)
	}
	cfg, err := config.Load(filepath.Join(dir, "config.toml"), dir)
	if err != nil || cfg.Devices[0].Driver != "mpv" || cfg.Devices[0].Socket != sock {
		t.Fatalf("%v %+v", err, cfg.Devices)
	}

	// a home too deep for a Unix socket's path is said
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 40))
	if out := mustInit(t, "init", "--dir", deep, "--yes"); !strings.Contains(out, "longer than a Unix socket's 103") {
		t.Fatalf("no warning for a long socket path:\n%s", out)
	}

	pathWith(t, false)
	dir = t.TempDir()
	j := decodeInit(t, mustInit(t, "init", "--dir", dir, "--yes", "--json"))
	if j.Driver != "sim" || j.Socket != "" {
		t.Fatalf("without mpv: %+v", j)
	}
}

// Without a terminal and without --yes, init refuses (exit 2) naming
// --yes, and makes nothing.
func TestInitRefusesWithoutTerminalOrYes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	out, errs, code := runInitCLI(t, nil, strings.NewReader("y\n"), "init", "--dir", dir)
	if code != ExitBadInput || !strings.Contains(errs, "pass --yes") {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the refusal made %s: %v", dir, err)
	}
}

// Without --dir, init makes the home every command uses: VIGIL_HOME, else
// the XDG folders (config, agents and keys where each command reads them).
func TestInitUsesTheUsualHome(t *testing.T) {
	pathWith(t, false)
	home := t.TempDir()
	env := map[string]string{"VIGIL_HOME": home}
	if out, errs, code := runInitCLI(t, env, strings.NewReader(""), "init", "--yes"); code != 0 || !strings.Contains(out, "VIGIL_HOME="+home+" vigil\n") {
		t.Fatalf("exit %d %s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(home, "config.toml")); err != nil {
		t.Fatal(err)
	}
	// --config names another config file: made there, and named in the steps
	other := filepath.Join(t.TempDir(), "other.toml")
	out, errs, code := runInitCLI(t, env, strings.NewReader(""), "--config", other, "init", "--yes")
	if code != 0 || !strings.Contains(out, "VIGIL_HOME="+home+" vigil --config "+other+" serve --mcp") ||
		!strings.Contains(out, "made  "+other) {
		t.Fatalf("--config: exit %d %s%s", code, out, errs)
	}
	user := t.TempDir()
	env = map[string]string{"HOME": user}
	out, errs, code = runInitCLI(t, env, strings.NewReader(""), "init", "--yes", "--json")
	if code != 0 {
		t.Fatalf("exit %d %s%s", code, out, errs)
	}
	j := decodeInit(t, out)
	if j.Home != "" || j.Config != filepath.Join(user, ".config", "vigil", "config.toml") ||
		j.TokenFile != filepath.Join(user, ".config", "vigil", "agents", "my-agent.token") {
		t.Fatalf("XDG: %+v", j)
	}
	issuer := filepath.Join(user, ".local", "state", "vigil", "keys", lease.IssuerPubFile)
	cfg, err := config.Load(j.Config, user)
	if err != nil || cfg.Leases.Keys[0].PublicKey != issuer {
		t.Fatalf("XDG config: %v %+v", err, cfg.Leases.Keys)
	}
	if _, err := os.Stat(issuer); err != nil {
		t.Fatal(err)
	}
}
