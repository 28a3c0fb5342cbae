// Package sshgate is `vigil serve --ssh`: the SSH server through which the
// operators listed in [[operators]] reach the gate with their keys. A key
// nobody listed is refused in the handshake, before any output; passwords
// and keyboard-interactive are not offered. A session with a command runs
// one of Vigil's decision commands (the caller's Exec); a session with a
// terminal and no command opens the Approvals screen on the serve process's
// queue. Failed sign-ins are counted per remote address, and a session
// nobody types in ends after the idle timeout.
package sshgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"
	"github.com/anmitsu/go-shlex"
	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/safetext"
)

// Defaults of the Options left zero.
const (
	DefaultHandshakeTimeout = 30 * time.Second
	DefaultFailBurst        = 10
	DefaultFailEvery        = 30 * time.Second
	DefaultMaxAuthTries     = 6
	DefaultMaxConnsPerAddr  = 64
	connGrace               = 30 * time.Second
)

// Options configures a Gate.
type Options struct {
	// Operators are who may sign in; at least one is required.
	Operators []Operator
	// HostKey is the server's key (HostKey reads or makes it).
	HostKey gossh.Signer
	// IdleTimeout ends a session nobody typed in for this long (required).
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the time from connection to signed in.
	HandshakeTimeout time.Duration
	// FailBurst failed sign-ins are taken from one remote address at once,
	// then one more each FailEvery; past that the address is refused.
	FailBurst int
	FailEvery time.Duration
	// MaxConnsPerAddr connections may be open from one address at once.
	MaxConnsPerAddr int
	// Exec runs a session's command and returns its exit status. It gets
	// the words as the client sent them, never through a shell.
	Exec func(ctx context.Context, s *Session) int
	// TUI is the Approvals screen's wiring; nil refuses interactive sessions.
	TUI *TUIOptions
	// Log gets sign-ins, refusals and sessions (a masking handler: it may
	// be a service's journal).
	Log *slog.Logger
	// Now is the failure count's clock (nil: time.Now).
	Now func() time.Time
}

// Session is one signed-in operator's session, as Exec sees it.
type Session struct {
	Operator string // the [[operators]] name
	Key      string // the key's "SHA256:…" fingerprint
	KeyType  string
	Remote   string // the client's address, for logs
	Args     []string
	PTY      bool // the client asked for a terminal (ssh -t)
	In       io.Reader
	Out, Err io.Writer
}

// Gate is a running SSH server.
type Gate struct {
	o     Options
	ops   roster
	fails *failures
	open  *conns
	srv   *ssh.Server
	// Shutdown closes the screens at once and gives commands until its
	// context ends; commands counts those still running, which Shutdown
	// waits for: a decision in flight is recorded before serve exits.
	closing, stopping          context.Context
	closeScreens, stopCommands context.CancelFunc
	commands                   sync.WaitGroup
	mu                         sync.Mutex
	shut                       bool // Shutdown waits for commands: none starts after
}

// New checks o and builds the server; Serve starts it.
func New(o Options) (*Gate, error) {
	switch {
	case len(o.Operators) == 0:
		return nil, errors.New("no operator is listed: add an [[operators]] entry with the person's public key")
	case o.HostKey == nil:
		return nil, errors.New("no host key")
	case o.IdleTimeout <= 0:
		return nil, errors.New("idle timeout must be positive")
	case o.Exec == nil:
		return nil, errors.New("no command runner")
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.FailBurst <= 0 {
		o.FailBurst = DefaultFailBurst
	}
	if o.FailEvery <= 0 {
		o.FailEvery = DefaultFailEvery
	}
	if o.MaxConnsPerAddr <= 0 {
		o.MaxConnsPerAddr = DefaultMaxConnsPerAddr
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	g := &Gate{o: o, ops: newRoster(o.Operators), fails: newFailures(o.FailBurst, o.FailEvery, o.Now),
		open: &conns{limit: o.MaxConnsPerAddr, by: map[string]int{}}}
	g.closing, g.closeScreens = context.WithCancel(context.Background())
	g.stopping, g.stopCommands = context.WithCancel(context.Background())
	srv, err := wish.NewServer(
		func(s *ssh.Server) error { s.AddHostKey(o.HostKey); return nil }, // before wish would make one
		// public keys only: with no password or keyboard-interactive
		// handler the server does not offer them
		wish.WithPublicKeyAuth(g.publicKey),
		// no traffic at all: a connection that opens no session. Later than
		// a session's own timeout, which then closes it first and says why.
		wish.WithIdleTimeout(o.IdleTimeout+connGrace),
		func(s *ssh.Server) error {
			s.HandshakeTimeout = o.HandshakeTimeout
			s.ConnCallback = g.admit
			s.ServerConfigCallback = g.serverConfig
			s.ConnectionFailedCallback = g.handshakeFailed
			return nil
		},
		wish.WithMiddleware(g.session),
	)
	if err != nil {
		return nil, err
	}
	g.srv = srv
	return g, nil
}

// Serve answers connections on ln until Close or Shutdown.
func (g *Gate) Serve(ln net.Listener) error {
	if err := g.srv.Serve(ln); !errors.Is(err, ssh.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops taking connections, closes the screens and waits for the
// commands running to end until ctx does; then it cancels those left and
// closes every connection. It returns once no command runs: a decision in
// flight has been recorded (as done, or failed when it was cut short).
func (g *Gate) Shutdown(ctx context.Context) error {
	g.closeScreens()
	err := g.srv.Shutdown(ctx)
	if err != nil {
		g.stopCommands()
		_ = g.srv.Close()
	}
	g.mu.Lock()
	g.shut = true
	g.mu.Unlock()
	g.commands.Wait()
	g.stopCommands()
	return err
}

// begin counts a command starting, unless Shutdown is waiting for the last.
func (g *Gate) begin() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return false
	}
	g.commands.Add(1)
	return true
}

// admit refuses, before the handshake, an address that has used up its
// failed sign-ins: it gets no byte, not even the server's version.
// It also holds each address to MaxConnsPerAddr connections open at once,
// so one caller cannot tie up the server with handshakes it never ends.
func (g *Gate) admit(_ ssh.Context, c net.Conn) net.Conn {
	ip := hostOf(c.RemoteAddr())
	if g.fails.blocked(ip) {
		g.o.Log.Warn("ssh: connection refused: too many failed sign-ins", "remote", ip)
		return nil
	}
	release, ok := g.open.take(ip)
	if !ok {
		g.o.Log.Warn("ssh: connection refused: too many connections open", "remote", ip, "limit", g.open.limit)
		return nil
	}
	return &countedConn{Conn: c, release: release}
}

// serverConfig counts every failed sign-in (an unlisted key, a signature
// that does not verify, a password tried) against the remote address.
func (g *Gate) serverConfig(ssh.Context) *gossh.ServerConfig {
	return &gossh.ServerConfig{
		MaxAuthTries: DefaultMaxAuthTries,
		AuthLogCallback: func(c gossh.ConnMetadata, method string, err error) {
			if err == nil || method == "none" { // clients open with "none" to learn the methods
				return
			}
			ip := hostOf(c.RemoteAddr())
			g.fails.fail(ip)
			g.o.Log.Warn("ssh: sign-in failed", "remote", ip, "user", safetext.Line(c.User()), "method", safetext.Line(method), "err", safetext.Line(err.Error()))
		},
	}
}

// handshakeFailed counts a connection that ended before it signed in for
// another reason than the failed attempts already counted: above all a
// signature that does not verify (a FIDO key not touched), which ends the
// handshake at once; also a client that left mid-way or timed out.
func (g *Gate) handshakeFailed(c net.Conn, err error) {
	ip := hostOf(c.RemoteAddr())
	var counted *gossh.ServerAuthError
	if errors.As(err, &counted) {
		g.o.Log.Debug("ssh: connection ended before a session", "remote", ip, "err", safetext.Line(err.Error()))
		return
	}
	g.fails.fail(ip)
	g.o.Log.Warn("ssh: handshake failed", "remote", ip, "err", safetext.Line(err.Error()))
}

// publicKey takes a listed key only; the signature is checked afterwards by
// the library (and for a FIDO key, that it was touched).
func (g *Gate) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	ip := hostOf(ctx.RemoteAddr())
	if g.fails.blocked(ip) {
		return false
	}
	if _, ok := g.ops.who(key); !ok {
		g.o.Log.Warn("ssh: key not listed", "remote", ip, "user", safetext.Line(ctx.User()), "fingerprint", gossh.FingerprintSHA256(key), "type", key.Type())
		return false
	}
	return true
}

// session runs a command, or opens the screen on a terminal.
func (g *Gate) session(ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		key := sess.PublicKey()
		name, ok := g.ops.who(key)
		if !ok { // cannot be: the handshake took only listed keys
			_ = sess.Exit(1)
			return
		}
		ctx, cancel := context.WithCancel(sess.Context())
		defer cancel()
		w := newIdle(g.o.IdleTimeout, cancel)
		defer w.stop()
		in := typed{Session: sess, idle: w}
		_, _, pty := sess.Pty()
		// the words as sess.Command() splits them (the same library), but a
		// command that does not split cleanly is refused, not cut short
		args, splitErr := shlex.Split(sess.RawCommand(), true)
		s := &Session{Operator: name, Key: gossh.FingerprintSHA256(key), KeyType: key.Type(),
			Remote: hostOf(sess.RemoteAddr()), Args: args, PTY: pty, In: in, Out: sess, Err: sess.Stderr()}
		log := g.o.Log.With("operator", name, "fingerprint", s.Key, "remote", s.Remote)
		switch {
		case splitErr != nil:
			fmt.Fprintf(s.Err, "vigil: the command could not be read as words: %s\n", safetext.Line(splitErr.Error()))
			_ = sess.Exit(2)
			return
		case len(s.Args) == 0 && (!pty || g.o.TUI == nil):
			fmt.Fprintln(s.Err, "vigil: give a command (pending, preview ID, approve ID --expect-preview HASH, deny ID --reason R, result ID), "+
				"or ask for a terminal (ssh -t) to open the Approvals screen")
			_ = sess.Exit(2)
			return
		case len(s.Args) == 0:
			log.Info("ssh: screen opened")
			defer context.AfterFunc(g.closing, cancel)()
			code := g.screen(ctx, sess, s, in)
			if w.fired.Load() {
				// after the screen's last bytes on the same stream, so it
				// lands on the terminal the screen gave back (stderr is
				// another channel and could overtake them)
				fmt.Fprintf(s.Out, "vigil: session closed: no key pressed for %s\n", g.o.IdleTimeout)
				code = 1
			}
			log.Info("ssh: screen closed", "idle", w.fired.Load())
			_ = sess.Exit(code)
			return
		}
		log.Info("ssh: command", "args", safetext.Line(strings.Join(s.Args, " ")))
		if !g.begin() {
			fmt.Fprintln(s.Err, "vigil: the gate is shutting down")
			_ = sess.Exit(3)
			return
		}
		defer g.commands.Done()
		defer context.AfterFunc(g.stopping, cancel)()
		code := g.o.Exec(ctx, s)
		if w.fired.Load() {
			fmt.Fprintf(s.Err, "vigil: session closed: no input for %s\n", g.o.IdleTimeout)
		}
		log.Info("ssh: command done", "exit", code)
		_ = sess.Exit(code)
	}
}
