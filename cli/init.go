package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/safetext"
)

// `vigil init` makes a working home for a person's own agent: the keys,
// a config with one device and one agent whose grants let it ask for that
// device's actions, the agent's token, and the next steps. It never
// writes over a file: what is there is kept, and said.

// Names `vigil init` gives what it makes.
const (
	initAgent    = "my-agent"
	initDevice   = "player"
	initMCPAddr  = "127.0.0.1:8765"
	initTokenEnv = "VIGIL_AGENT_TOKEN"
	// initTokenBytes of randomness, written as hex: twice
	// config.MinAgentTokenBytes and more than any guess.
	initTokenBytes = 32
	// maxSocketPath is the longest Unix socket path Linux takes (sun_path
	// is 108 bytes with its NUL; macOS's 104 is shorter still).
	maxSocketPath = 103
)

// initHome is what `vigil init` works on: the resolved paths, the
// device it chose, and what it made and kept.
type initHome struct {
	Home      string   `json:"home,omitempty"` // the one folder, when the home is one (--dir, --home, VIGIL_HOME)
	Config    string   `json:"config"`
	TokenFile string   `json:"token_file"`
	Agent     string   `json:"agent"`
	Device    string   `json:"device"`
	Driver    string   `json:"driver"`
	Socket    string   `json:"socket,omitempty"` // mpv's IPC socket
	Made      []string `json:"made"`
	Kept      []string `json:"kept"`
	// Warnings are what init could not make right without overwriting.
	Warnings []string `json:"warnings,omitempty"`

	paths      config.Paths
	configFlag bool // --config named the config: the steps name it too
}

func newInitCmd(app *App) *cobra.Command {
	var dir string
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Make a working home: keys, a config with a device and an agent with a token and grants",
		Long: "vigil init makes a home for your own agent: the result and lease-issuer keys (as vigil keys init), " +
			"a config.toml with one device (mpv when it is on PATH, else the simulator), one agent (" + initAgent +
			") with a random token in agents/" + initAgent + ".token and grants to ask for that device's actions, " +
			"and prints the next steps: starting vigil serve --mcp, the line that adds Vigil to an MCP client, " +
			"opening the TUI. It never writes over a file: what is there is kept, and said. On a terminal it asks " +
			"first (y/N) unless --yes; without a terminal --yes is required.",
		Args: cobra.NoArgs,
		// The home's config may not exist yet, or be another home's (--dir):
		// init resolves its own paths and loads the config it leaves.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := resolveInitHome(app, dir)
			if err != nil {
				return err
			}
			if err := confirmInit(app, h, yes); err != nil {
				return err
			}
			if err := h.make(app); err != nil {
				return err
			}
			if asJSON {
				return app.PrintJSON(h)
			}
			h.print(app)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "make the home in `DIR` (default: --home, VIGIL_HOME, else the XDG folders)")
	_ = cmd.MarkFlagDirname("dir")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before making the files (required without a terminal)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"home","config","token_file","agent","device","driver","socket","made","kept","warnings"}`)
	return cmd
}

// resolveInitHome picks the home as every command does (--dir standing for
// --home), and the device: mpv when it is on PATH, else the simulator.
func resolveInitHome(app *App, dir string) (*initHome, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, Failf(ExitBadInput, "--dir: %w", err)
		}
		app.HomeFlag, app.ConfigFlag = abs, ""
	}
	p := config.ResolvePaths(app.HomeFlag, app.Getenv)
	if app.ConfigFlag != "" {
		p.Config = app.ConfigFlag
	}
	app.Paths, app.loaded = p, false
	h := &initHome{paths: p, configFlag: app.ConfigFlag != "", Config: p.Config, Agent: initAgent, Device: initDevice, Driver: "sim",
		TokenFile: filepath.Join(filepath.Dir(p.Config), "agents", initAgent+".token"), Made: []string{}, Kept: []string{}}
	if app.HomeFlag != "" || app.Getenv("VIGIL_HOME") != "" {
		h.Home = filepath.Clean(p.State)
	}
	if _, err := exec.LookPath("mpv"); err == nil {
		h.Driver, h.Socket = "mpv", filepath.Join(p.State, "mpv.sock")
	}
	return h, nil
}

// files are the files init makes, in the order it makes them.
func (h *initHome) files() []string {
	k := h.paths.Keys
	return []string{filepath.Join(k, lease.OperatorKeyFile), filepath.Join(k, lease.OperatorPubFile),
		filepath.Join(k, lease.IssuerKeyFile), filepath.Join(k, lease.IssuerPubFile), h.TokenFile, h.Config}
}

// missing are the files not there yet: those init would make.
func (h *initHome) missing() []string {
	var out []string
	for _, f := range h.files() {
		if _, err := os.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			out = append(out, f)
		}
	}
	return out
}

// confirmInit asks before making anything, on a terminal, unless --yes;
// without a terminal it refuses (exit 2): a script says --yes.
func confirmInit(app *App, h *initHome, yes bool) error {
	todo := h.missing()
	if yes || len(todo) == 0 {
		return nil
	}
	f, ok := app.In.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return Failf(ExitBadInput, "init: stdin is not a terminal; pass --yes to make the home in %s", filepath.Dir(h.Config))
	}
	fmt.Fprintf(app.Err, "vigil init will make (and keep what is already there):\n")
	for _, p := range todo {
		fmt.Fprintf(app.Err, "  %s\n", safetext.Line(p))
	}
	fmt.Fprintf(app.Err, "Make them? [y/N] ")
	var line string
	fmt.Fscanln(app.In, &line)
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		fmt.Fprintln(app.Err, "nothing made")
		return Quiet(ExitCheck)
	}
	return nil
}

// make makes the folders, the keys, the token and the config, keeping
// every file that is there, then loads the config it leaves: a kept one
// that does not load is said (exit 2), with what was made.
func (h *initHome) make(app *App) error {
	if err := h.paths.Ensure(); err != nil {
		return Fail(ExitExecution, err)
	}
	if err := os.MkdirAll(filepath.Dir(h.TokenFile), 0o700); err != nil {
		return Fail(ExitExecution, err)
	}
	steps := []func() error{h.makeKeys, h.makeToken, h.makeConfig}
	for _, step := range steps {
		if err := step(); err != nil {
			return Fail(ExitExecution, err)
		}
	}
	if err := app.Load(); err != nil {
		return Failf(ExitBadInput, "init: %s was kept and does not load: %w", h.Config, err)
	}
	h.fromConfig(app.Cfg)
	return nil
}

// fromConfig takes the agent and device the next steps name from the
// config as loaded: a kept config may name others than init's.
func (h *initHome) fromConfig(cfg config.Config) {
	agent := -1
	for i, a := range cfg.Agents {
		if a.TokenFile != "" && (agent < 0 || a.Name == initAgent) {
			agent = i
		}
	}
	h.Agent, h.TokenFile = "", ""
	if agent >= 0 {
		h.Agent, h.TokenFile = cfg.Agents[agent].Name, cfg.Agents[agent].TokenFile
	}
	if len(cfg.Devices) == 0 {
		h.Device, h.Driver, h.Socket = "", "", ""
		return
	}
	d := cfg.Devices[0]
	for _, x := range cfg.Devices {
		if x.ID == initDevice {
			d = x
		}
	}
	h.Device, h.Driver, h.Socket = d.ID, d.Driver, d.Socket
}

// makeKeys makes the four key files with `vigil keys init`'s function when
// none is there; when some are, it keeps them all and makes none (a lone
// new key would not match the kept ones).
func (h *initHome) makeKeys() error {
	keys := h.files()[:4]
	var there []string
	for _, k := range keys {
		if _, err := os.Lstat(k); err == nil {
			there = append(there, k)
		}
	}
	if len(there) > 0 {
		h.Kept = append(h.Kept, there...)
		if len(there) < len(keys) {
			h.Warnings = append(h.Warnings, fmt.Sprintf("%d of the 4 key files are missing from %s, and none was made "+
				"(a new key would not match the kept ones): vigil keys init --force makes a new set", len(keys)-len(there), h.paths.Keys))
		}
		return nil
	}
	if _, _, err := lease.InitKeys(h.paths.Keys, nil, false); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	h.Made = append(h.Made, keys...)
	return nil
}

// makeToken writes a fresh random token, 0600, unless the file is there.
func (h *initHome) makeToken() error {
	b := make([]byte, initTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	return h.writeNew(h.TokenFile, hex.EncodeToString(b)+"\n")
}

// makeConfig writes the config unless one is there.
func (h *initHome) makeConfig() error {
	return h.writeNew(h.Config, initConfig(h))
}

// writeNew creates path (0600) with text, or keeps it when it is there:
// O_EXCL, so a file made meanwhile is kept too.
func (h *initHome) writeNew(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		h.Kept = append(h.Kept, path)
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	h.Made = append(h.Made, path)
	return f.Close()
}

// rel writes path relative to the config's folder when it is under it
// (the config reads paths against its folder), else absolute.
func (h *initHome) rel(path string) string {
	if r, err := filepath.Rel(filepath.Dir(h.Config), path); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	return path
}

// initConfig is the config init writes: every setting it makes, with why.
func initConfig(h *initHome) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Vigil home made by vigil init. Paths are relative to this file's folder.
# Every setting: docs/reference.md; this file's walk-through: docs/start.md.

# Search's sandbox (the TUI's 1 Search and the Search tool) is the folder
# Vigil runs in unless you set it:
# [sandbox]
# root = "/home/me/projects"

# Leases signed by this home's issuer key (keys/issuer.key.pem, made by vigil
# init as by vigil keys init) are trusted: the leases Vigil mints for the
# agent's grants below are checked against this key like any other.
[[leases.keys]]
kid = %q
alg = %q
public_key = %q

`, lease.LocalIssuerKID, lease.AlgEdDSA, h.rel(filepath.Join(h.paths.Keys, lease.IssuerPubFile)))
	b.WriteString(initDeviceConfig(h))
	fmt.Fprintf(&b, `
# Your agent: it connects to vigil serve --mcp with the token in token_file
# (sent as "Authorization: Bearer TOKEN") and is known by its name in the
# Approvals pane and the audit log. Another agent gets its own entry and token.
[[agents]]
name = %q
token_file = %q
lease_ttl = "15m"

# What the agent may ask for without a lease of its own: Vigil mints one for
# exactly that task. A grant decides nothing: each task still waits for you
# in the Approvals pane (or a rule you write, docs/rules.md).
[[agents.grants]]
capabilities = ["MEDIA_PAUSE", "MEDIA_STOP", "MEDIA_SEEK"]
devices = [%q]

# Playing fetches media from a host, so a play grant names the hosts. This
# one covers media served from this machine (e.g. python3 -m http.server in
# your music folder, then http://127.0.0.1:8000/song.mp3). A local file path
# has no host and is covered by no grant: the agent needs a lease for it
# (vigil lease issue). Add a streaming site's host ("*.example.com") to allow it.
[[agents.grants]]
capabilities = ["MEDIA_PLAY"]
devices = [%q]
media_hosts = ["127.0.0.1", "localhost"]
`, h.Agent, h.rel(h.TokenFile), h.Device, h.Device)
	return b.String()
}

// initDeviceConfig is the [[devices]] entry: mpv with its socket, or the
// simulator.
func initDeviceConfig(h *initHome) string {
	if h.Driver == "mpv" {
		return fmt.Sprintf(`# mpv, driven through its IPC socket. Start it before approving a task:
#   mpv --idle --input-ipc-server=%s
[[devices]]
id = %q
driver = "mpv"
socket = %q
`, h.Socket, h.Device, h.Socket)
	}
	return fmt.Sprintf(`# The simulator: a player that only records what it was asked (mpv was not
# found on PATH when vigil init ran). For mpv, install it and write:
#   driver = "mpv"
#   socket = "/path/to/mpv.sock"   # mpv --idle --input-ipc-server=/path/to/mpv.sock
[[devices]]
id = %q
driver = "sim"
`, h.Device)
}

// shellQuote writes s for a POSIX shell: as is when it is plain, else in
// single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// print says what was made and kept, then the next steps. Paths come from
// the user's flags and environment: through safetext.
func (h *initHome) print(app *App) {
	w := app.Out
	where := filepath.Dir(h.Config)
	if h.Home != "" {
		where = h.Home
	}
	fmt.Fprintf(w, "Vigil home: %s\n", safetext.Line(where))
	for _, f := range h.Made {
		fmt.Fprintf(w, "  made  %s\n", safetext.Line(f))
	}
	for _, f := range h.Kept {
		fmt.Fprintf(w, "  kept  %s (it was there: not changed)\n", safetext.Line(f))
	}
	for _, warn := range h.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", safetext.Line(warn))
	}
	switch h.Driver {
	case "mpv":
		fmt.Fprintf(w, "Device %q: mpv, through the socket %s\n", h.Device, safetext.Line(h.Socket))
		if len(h.Socket) > maxSocketPath {
			fmt.Fprintf(w, "  warning: the socket's path is %d bytes, longer than a Unix socket's %d: set a shorter socket in %s\n",
				len(h.Socket), maxSocketPath, safetext.Line(h.Config))
		}
	case "sim":
		fmt.Fprintf(w, "Device %q: the simulator, which records what it is asked and plays nothing (for a real player "+
			"install mpv and change the entry: the config's comment says how)\n", h.Device)
	case "":
		fmt.Fprintln(w, "No [[devices]] in the config: the agent has nothing to act on (README: Devices)")
	default:
		fmt.Fprintf(w, "Device %q: %s\n", h.Device, safetext.Line(h.Driver))
	}
	h.printSteps(app)
}

// printSteps prints the next steps: mpv, serve, the MCP client, the TUI.
func (h *initHome) printSteps(app *App) {
	w := app.Out
	env := ""
	if h.Home != "" {
		env = "VIGIL_HOME=" + shellQuote(h.Home) + " "
	}
	vigil := "vigil"
	if h.configFlag {
		vigil += " --config " + shellQuote(h.Config)
	}
	url := "http://" + initMCPAddr + "/mcp"
	fmt.Fprintln(w, "\nNext steps:")
	n := 1
	step := func(format string, args ...any) {
		fmt.Fprintf(w, "%d. "+format+"\n", append([]any{n}, args...)...)
		n++
	}
	if h.Driver == "mpv" {
		step("Start mpv (leave it running):\n     mpv --idle --input-ipc-server=%s", safetext.Line(shellQuote(h.Socket)))
	}
	step("Start Vigil's MCP endpoint (leave it running):\n     %s%s serve --mcp %s", safetext.Line(env), safetext.Line(vigil), initMCPAddr)
	if h.TokenFile == "" {
		step("Give your agent a token: add an [[agents]] entry with token_file (docs/start.md)")
	} else {
		tok := safetext.Line(shellQuote(h.TokenFile))
		step("Add Vigil to your agent as %q (its token is in %s):\n"+
			"     Claude Code: claude mcp add --transport http vigil %s --header \"Authorization: Bearer $(cat %s)\"\n"+
			"     Codex:       codex mcp add vigil --url %s --bearer-token-env-var %s\n"+
			"                  (then start codex with %s=$(cat %s) in its environment)\n"+
			"     crush:       in crush.json (crush runs the $(cat …) itself):\n"+
			"                  \"mcp\": {\"vigil\": {\"type\": \"http\", \"url\": \"%s\", \"headers\": {\"Authorization\": \"Bearer $(cat %s)\"}}}",
			h.Agent, tok, url, tok, url, initTokenEnv, initTokenEnv, tok, url, tok)
	}
	step("Open the TUI, where what the agent asks waits for you (3 Approvals):\n     %s%s", safetext.Line(env), safetext.Line(vigil))
	step("Check the home:\n     %s%s doctor", safetext.Line(env), safetext.Line(vigil))
}
