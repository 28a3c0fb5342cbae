package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/sshgate"
)

// HostKeyFile is the SSH gate's host key under keys/ when [ssh] host_key
// does not say.
const HostKeyFile = "ssh_host_ed25519"

// sshCommands are what an operator may run over SSH: the decision commands
// and the runtime rules (on a home that requires an operator's key, only
// an operator may add or revoke one), nothing that reads or writes
// anything else on the home (`rules test FILE` would read the serve
// account's files).
var sshCommands = []string{"pending", "preview", "approve", "deny", "result", "rules add", "rules revoke", "rules list"}

// errSSHCommand is said for anything else.
var errSSHCommand = Failf(ExitBadInput, "over SSH only these commands run: pending, preview ID, "+
	"approve ID --expect-preview HASH, deny ID --reason R, result ID, rules add|revoke|list (each takes --json)")

// sshAddr checks --ssh as metricsAddr does --metrics: a loopback host
// unless --allow-remote.
func sshAddr(addr string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--ssh: must be host:port, got %q", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !allowRemote {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "", fmt.Errorf("--ssh: %s is not a loopback address; operators decide there, "+
				"so serving it beyond this machine needs --allow-remote", host)
		}
	}
	return net.JoinHostPort(host, port), nil
}

// sshOperators reads [[operators]] with their keys; --ssh needs one at least.
func sshOperators(app *App) ([]sshgate.Operator, error) {
	var ops []sshgate.Operator
	for _, oc := range app.Cfg.Operators {
		keys, err := oc.OperatorKeys()
		if err != nil {
			return nil, Fail(ExitBadInput, fmt.Errorf("%s: %w", app.Paths.Config, err))
		}
		ops = append(ops, sshgate.Operator{Name: oc.Name, Keys: keys})
	}
	if len(ops) == 0 {
		return nil, Failf(ExitBadInput, "--ssh: %s lists no operator: add an [[operators]] entry with the person's "+
			"public key (name = \"ada\", keys = [\"ssh-ed25519 AAAA… ada@phone\"]); nobody could sign in", app.Paths.Config)
	}
	return ops, nil
}

// hostKeyPath is [ssh] host_key, or keys/ssh_host_ed25519 in the home.
func hostKeyPath(app *App) string {
	if p := app.Cfg.SSH.HostKey; p != "" {
		return p
	}
	return filepath.Join(app.Paths.Keys, HostKeyFile)
}

// startSSH starts the SSH gate over eng on addr and returns how to stop it.
// It prints where it listens (and the host key's fingerprint, which an
// operator compares on first sign-in).
func startSSH(app *App, eng *Engine, addr string, allowRemote bool) (stop func(), err error) {
	listen, err := sshAddr(addr, allowRemote)
	if err != nil {
		return nil, Fail(ExitBadInput, err)
	}
	if app.Cfg.Queue.Enabled() {
		return nil, Failf(ExitBadInput, "--ssh: this home decides on the shared queue ([queue] url); "+
			"operators decide there with the queue's operator credentials, not over this SSH gate")
	}
	ops, err := sshOperators(app)
	if err != nil {
		return nil, err
	}
	keyPath := hostKeyPath(app)
	hostKey, made, err := sshgate.HostKey(keyPath)
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	fp := gossh.FingerprintSHA256(hostKey.PublicKey())
	if made {
		app.Log.Info("vigil serve: made the SSH host key", "path", keyPath, "fingerprint", fp)
	}
	o := sshgate.Options{Operators: ops, HostKey: hostKey, IdleTimeout: app.Cfg.SSH.IdleTimeout.Duration,
		Exec: func(ctx context.Context, s *sshgate.Session) int { return runSSHCommand(ctx, app, s) },
		TUI: &sshgate.TUIOptions{Queue: eng.Queue, Rules: newTUIRules(app, eng), Theme: app.Cfg.Theme, Bell: app.Cfg.Approvals.Bell,
			Notify: app.Cfg.Notify.Terminal, MouseOff: !app.Cfg.UI.Mouse, Now: app.Now},
		Log: app.Log}
	if eng.Signer != nil {
		o.TUI.ResultKey = eng.Signer.Public()
	}
	gate, err := sshgate.New(o)
	if err != nil {
		return nil, Fail(ExitBadInput, fmt.Errorf("--ssh: %w", err))
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, Failf(ExitExecution, "--ssh: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- gate.Serve(ln) }()
	fmt.Fprintf(app.Out, "vigil serve: ssh on %s (host key %s)\n", ln.Addr(), fp)
	return func() {
		// sessions get a moment to finish what they run; screens are told to close
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := gate.Shutdown(ctx); err != nil {
			app.Log.Warn("vigil serve: ssh shutdown", "err", err)
		}
		if err := <-done; err != nil {
			app.Log.Warn("vigil serve: ssh server", "err", err)
		}
	}, nil
}

// runSSHCommand runs one operator's command in this process, on the serve
// process's engine, as the command line would for them: the same cobra
// command, output and exit status, with the session's streams and the
// operator as the one who decides.
func runSSHCommand(ctx context.Context, app *App, s *sshgate.Session) int {
	sa := *app // the engine, config and paths are shared; the streams and identity are the session's
	sa.In, sa.Out, sa.Err = s.In, s.Out, s.Err
	sa.Identity = &Identity{Name: s.Operator, Via: approval.ViaSSH, Key: s.Key}
	args, err := sshArgs(&sa, s.Args)
	if err == nil {
		if args[0] == "approve" || args[0] == "deny" {
			// a decision once sent is carried out and recorded even when
			// the connection drops (a phone losing signal) or serve stops:
			// [media] action_timeout bounds the execution
			ctx = context.WithoutCancel(ctx)
		}
		root := NewRootCmd(&sa)
		root.SetArgs(args)
		err = root.ExecuteContext(ctx)
	}
	PrintError(s.Err, err)
	return ExitCode(err)
}

// sshArgs reads args with cobra's own parser, on a tree of its own, and
// returns what to run, the command's name first: one of sshCommands, no global flag (the home and
// settings are the serve process's), and an approval that names the
// preview hash it approves; that hash is the confirmation (CLI.md), so it
// runs with --yes as on any input that is not a terminal.
func sshArgs(app *App, args []string) ([]string, error) {
	root := NewRootCmd(app)
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		return nil, errSSHCommand
	}
	words := strings.Fields(strings.TrimPrefix(cmd.CommandPath(), root.Name()))
	if !slices.Contains(sshCommands, strings.Join(words, " ")) {
		return nil, errSSHCommand
	}
	if err := cmd.ParseFlags(rest); errors.Is(err, pflag.ErrHelp) {
		return append(words, rest...), nil // the command's help, as on the command line
	} else if err != nil {
		return nil, Fail(ExitBadInput, err)
	}
	for _, f := range []string{"home", "config", "theme"} {
		if cmd.Flags().Changed(f) {
			return nil, Failf(ExitBadInput, "--%s: over SSH the commands run on the serve process's home and settings", f)
		}
	}
	if cmd.Name() != "approve" {
		return append(words, rest...), nil
	}
	if h, _ := cmd.Flags().GetString("expect-preview"); strings.TrimSpace(h) == "" {
		return nil, Failf(ExitBadInput, "approve over SSH needs --expect-preview HASH: the preview_hash "+
			"`preview ID` prints, so that what runs is what you saw")
	}
	return append([]string{cmd.Name(), "--yes"}, rest...), nil
}
