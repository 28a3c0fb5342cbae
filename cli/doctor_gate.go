package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/internal/homeguard"
)

// The checks of `vigil doctor` about who may decide (issue 32): who can
// write the home, whether a decision needs an operator's key, whether the
// keys and tokens the gate relies on are usable, and what an agent running
// as this account could do today. Each says it in plain words.

// homeOwner is the account the home belongs to: its state folder's owner,
// or this account when the folder is not made yet (it will make it).
func homeOwner(app *App) (uid int, made bool) {
	o, err := homeguard.Stat(app.Paths.State)
	if err != nil {
		return homeguard.UID(), false
	}
	return o.UID, true
}

// doctorHome fails when an account other than the home's owner may change
// the home: its folders and files, or a folder above it (homeguard's
// rules, the ones vigil serve refuses to start on).
func doctorHome(app *App) doctorCheck {
	c := doctorCheck{Name: "home"}
	uid, made := homeOwner(app)
	if !made {
		c.OK, c.Detail = true, filepath.Clean(app.Paths.State)+": not made yet; vigil makes it private (0700) to the account that runs it"
		return c
	}
	ps, err := homeguard.Check(uid, homeFiles(app))
	if err != nil {
		c.Detail = fmt.Sprintf("cannot look at the home: %v", err)
		return c
	}
	if len(ps) > 0 {
		c.Detail = fmt.Sprintf("others than %s may change the home: %s", homeguard.Account(uid), homeguard.Join(ps))
		return c
	}
	mode := ""
	if o, err := homeguard.Stat(app.Paths.State); err == nil {
		mode = " (" + o.Mode.String() + ")"
	}
	c.OK = true
	c.Detail = fmt.Sprintf("%s%s: only %s can write it, its files and the folders above it",
		filepath.Clean(app.Paths.State), mode, homeguard.Account(uid))
	return c
}

// doctorDecisions says whether a decision needs an operator's key, and
// fails when it does but nobody holds one (no operator, no shared queue).
func doctorDecisions(app *App) doctorCheck {
	c := doctorCheck{Name: "decision", OK: true}
	if !app.Cfg.Decisions.RequireOperatorKey {
		c.Detail = "an operator's key is not required: whoever can write the home may decide with vigil approve " +
			"or the TUI ([decisions] require_operator_key = true changes that)"
		return c
	}
	var who []string
	if n := len(app.Cfg.Operators); n > 0 {
		who = append(who, plural(n, "operator", "operators")+" over SSH (vigil serve --ssh)")
	}
	if app.Cfg.Queue.Enabled() {
		who = append(who, "the shared queue's operators")
	}
	if len(who) == 0 {
		c.OK = false
		c.Detail = "[decisions] require_operator_key = true, but there is no [[operators]] entry and no [queue]: " +
			"nobody can decide; add [[operators]] with your SSH public key"
		return c
	}
	c.Detail = "decisions need an operator's key: " + strings.Join(who, " and ") +
		"; vigil approve, vigil deny and the TUI's keys on this machine are refused"
	return c
}

// doctorOperators fails when an operator's keys do not parse (keys or
// keys_file).
func doctorOperators(app *App) doctorCheck {
	c := doctorCheck{Name: "operator"}
	if len(app.Cfg.Operators) == 0 {
		c.OK, c.Detail = true, "no [[operators]]: nobody decides over SSH"
		return c
	}
	var ok, bad []string
	for _, op := range app.Cfg.Operators {
		keys, err := op.OperatorKeys()
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		fido := 0
		for _, k := range keys {
			if strings.HasPrefix(k.Type(), "sk-") {
				fido++
			}
		}
		s := op.Name + ": " + plural(len(keys), "key", "keys")
		if fido > 0 {
			s += fmt.Sprintf(", %d on a security key (a touch per decision)", fido)
		}
		ok = append(ok, s)
	}
	if len(bad) > 0 {
		c.Detail = strings.Join(bad, "; ")
		return c
	}
	c.OK, c.Detail = true, strings.Join(ok, "; ")
	return c
}

// doctorHostKey fails when the SSH gate's host key is there but does not
// parse, needs a passphrase, or others may read it. Absent is fine: vigil
// serve --ssh makes it on first start.
func doctorHostKey(app *App) doctorCheck {
	c := doctorCheck{Name: "ssh-host"}
	p := hostKeyPath(app)
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.OK, c.Detail = true, p+": not there yet, made on first start of vigil serve --ssh"
		return c
	case err != nil:
		c.Detail = err.Error() + notOwnerHint(app, err)
		return c
	}
	signer, err := ssh.ParsePrivateKey(b)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		c.Detail = p + ": needs a passphrase, which vigil serve cannot type; make one without (ssh-keygen -t ed25519 -N '')"
		return c
	case err != nil:
		c.Detail = fmt.Sprintf("%s: not a private key: %v", p, err)
		return c
	}
	if o, err := homeguard.Stat(p); err == nil && o.Mode&0o077 != 0 {
		c.Detail = fmt.Sprintf("%s (%s): others may read the gate's private key (chmod 600 %s)", p, o.Mode, p)
		return c
	}
	pk := signer.PublicKey()
	c.OK, c.Detail = true, fmt.Sprintf("%s: %s %s", p, pk.Type(), ssh.FingerprintSHA256(pk))
	return c
}

// notOwnerHint says how to look when err is this account being kept out
// of the home's files: as the home's owner.
func notOwnerHint(app *App, err error) string {
	if !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	owner, _ := homeOwner(app)
	return fmt.Sprintf(" (this account may not read it: run vigil doctor as %s, e.g. sudo -u %s env VIGIL_HOME=%s vigil doctor)",
		homeguard.Account(owner), homeguard.Account(owner), app.Paths.State)
}

// doctorAgents fails when an agent's token cannot be read, is shorter than
// config.MinAgentTokenBytes, or is another agent's too (vigil serve refuses
// such tokens at start; this only reports).
func doctorAgents(app *App) doctorCheck {
	c := doctorCheck{Name: "agents"}
	if len(app.Cfg.Agents) == 0 {
		c.OK, c.Detail = true, "no [[agents]]: MCP clients are not told apart by their token"
		return c
	}
	var bad, names []string
	owner := map[string]string{}
	for _, a := range app.Cfg.Agents {
		tok, src, err := doctorAgentToken(app, a)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: %v", a.Name, err))
		case len(tok) < config.MinAgentTokenBytes:
			bad = append(bad, fmt.Sprintf("%s: the token in %s is %d characters, shorter than %d (make one with "+
				"openssl rand -hex 32)", a.Name, src, len(tok), config.MinAgentTokenBytes))
		case owner[tok] != "":
			bad = append(bad, fmt.Sprintf("%s: the token in %s is agent %q's too: each agent needs its own", a.Name, src, owner[tok]))
		default:
			owner[tok] = a.Name
			names = append(names, a.Name)
		}
	}
	if len(bad) > 0 {
		c.Detail = strings.Join(bad, "; ")
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%s with their own token: %s", plural(len(names), "agent", "agents"), strings.Join(names, ", "))
	return c
}

// doctorAgentToken reads an agent's token for doctor: agentTokenText, with
// where it came from as a person would look for it.
func doctorAgentToken(app *App, a config.AgentConfig) (tok, src string, err error) {
	tok, _, err = agentTokenText(app, a)
	if a.TokenEnv != "" {
		src = "$" + a.TokenEnv
		if tok == "" {
			return "", src, fmt.Errorf("%s is not set here (vigil serve must have it in its environment)", src)
		}
		return tok, src, nil
	}
	if err != nil {
		return "", a.TokenFile, fmt.Errorf("token_file: %v%s", err, notOwnerHint(app, err))
	}
	return tok, a.TokenFile, nil
}

// accountFacts is what doctorAccount judges: who runs doctor and who
// owns the home.
type accountFacts struct {
	UID, Owner int
	Name       string // this account's name
	OwnerName  string // the home's owner's name
	Made       bool   // the home's folder is there
	CanWrite   bool   // this account may write the home's folder
	Service    bool   // this account has no login shell
	Require    bool   // [decisions] require_operator_key
}

func doctorAccount(app *App) doctorCheck {
	me := homeguard.UID()
	owner, made := homeOwner(app)
	return judgeAccount(accountFacts{UID: me, Owner: owner, Name: homeguard.Account(me),
		OwnerName: homeguard.Account(owner), Made: made, CanWrite: !made || homeguard.CanWrite(app.Paths.State),
		Service: homeguard.ServiceAccount(me), Require: app.Cfg.Decisions.RequireOperatorKey})
}

// judgeAccount says what an agent running as this account could do
// today. It fails only when the home claims decisions need an operator's
// key but a person's account (one with a login shell, as agents run) can
// write the home: the claim then holds only against agents that play fair.
func judgeAccount(f accountFacts) doctorCheck {
	c := doctorCheck{Name: "account", OK: true}
	if !f.CanWrite {
		c.Detail = fmt.Sprintf("this account (%s) cannot write the home, %s's: an agent running as it cannot run "+
			"vigil approve here or edit the home's files; it reaches Vigil only through vigil serve --mcp with its token",
			f.Name, f.OwnerName)
		if f.Require {
			c.Detail += "; decisions need an operator's SSH key"
		}
		return c
	}
	switch {
	case f.UID == 0:
		c.Detail = "this account is root, which can do anything on this machine, the home included: run vigil " +
			"serve as its own account (docs/protect.md) and agents as others"
	case f.Service:
		c.Detail = fmt.Sprintf("this account (%s) can write the home and has no login shell, as the executor's own "+
			"account should: any process of it can decide, so run no agent as it", f.Name)
	default:
		c.Detail = fmt.Sprintf("this account (%s) can write the home: any process of it (an agent's shell too) can run "+
			"vigil approve and edit the home's files", f.Name)
		if f.Require {
			c.OK = false
			c.Detail += ", so require_operator_key = true holds only against agents that play fair; run vigil serve " +
				"as its own account with a home only it can write (docs/protect.md)"
		} else {
			c.Detail += "; to keep decisions out of an agent's reach see docs/protect.md"
		}
	}
	return c
}
