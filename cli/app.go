// Package cli holds Vigil's headless commands (cobra + fang): each parses its
// flags, calls the engine and prints JSON or text. One file per subcommand.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/safetext"
)

// Exit codes of CLI.md.
const (
	ExitOK        = 0
	ExitCheck     = 1 // a check failed or a task ended in failure
	ExitBadInput  = 2 // bad arguments or bad input (config errors too)
	ExitExecution = 3 // execution failed: backend missing, I/O
)

// ExitError carries the process exit code. Quiet means the command already
// printed what the caller needs (e.g. a JSON error object), so nothing more is
// written to stderr.
type ExitError struct {
	Code  int
	Err   error
	Quiet bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Fail wraps err with an exit code.
func Fail(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Failf formats an error with an exit code.
func Failf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Err: fmt.Errorf(format, args...)}
}

// Quiet is an exit code whose message has already been printed.
func Quiet(code int) error { return &ExitError{Code: code, Quiet: true} }

// App is what every command shares: flags, resolved paths, the loaded config,
// the streams and the clock. Tests build one with their own streams and clock.
type App struct {
	HomeFlag   string
	ConfigFlag string
	ThemeFlag  string

	Paths config.Paths
	Cfg   config.Config

	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Now    func() time.Time
	Getenv func(string) string
	Cwd    string
	Log    *slog.Logger

	// Identity, when set, is who decides through this App: an operator
	// signed in over SSH (vigil serve --ssh runs the commands for them).
	// Nil: the account running Vigil, through the command line.
	Identity *Identity

	loaded bool
	engine *Engine
}

// NewApp returns an App wired to the process's real streams, clock and environment.
func NewApp() *App {
	cwd, _ := os.Getwd()
	return &App{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Now:    func() time.Time { return time.Now().UTC() },
		Getenv: os.Getenv,
		Cwd:    cwd,
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// Load resolves paths and reads the config; commands call it before touching
// state (the root's PersistentPreRunE does it once).
func (a *App) Load() error {
	if a.loaded {
		return nil
	}
	a.Paths = config.ResolvePaths(a.HomeFlag, a.Getenv)
	if a.ConfigFlag != "" {
		a.Paths.Config = a.ConfigFlag
	}
	cfg, err := config.Load(a.Paths.Config, a.Cwd)
	if err != nil {
		return Fail(ExitBadInput, err)
	}
	if a.ThemeFlag != "" {
		cfg.Theme = a.ThemeFlag
		if err := cfg.Validate(); err != nil {
			return Fail(ExitBadInput, fmt.Errorf("--theme: %w", err))
		}
	}
	a.Cfg = cfg
	a.loaded = true
	return nil
}

// EnsureState creates the home's folders; commands that write call it.
func (a *App) EnsureState() error {
	if err := a.Paths.Ensure(); err != nil {
		return Fail(ExitExecution, err)
	}
	return nil
}

// PrintJSON writes v as indented JSON and a newline to stdout.
//
// The JSON stays exact — it decodes to the same values — but is safe to land
// on a terminal: encoding/json escapes only C0 controls (and U+2028/U+2029),
// so DEL, C1 controls, bidi and other format characters and invisible
// spaces from the data are written as \uXXXX escapes too (issue 18).
func (a *App) PrintJSON(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return Fail(ExitExecution, err)
	}
	if _, err := a.Out.Write(terminalSafeJSON(buf.Bytes())); err != nil {
		return Fail(ExitExecution, err)
	}
	return nil
}

// terminalSafeJSON rewrites every character safetext would not show as
// itself as a JSON \u escape (a surrogate pair above U+FFFF). Outside strings
// JSON is plain ASCII, so such characters can only be inside strings, where
// the escape means the same character.
func terminalSafeJSON(b []byte) []byte {
	clean := true
	for _, c := range b {
		if c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...) // not UTF-8, so not JSON text: what a decoder makes of it
		} else if _, esc := safetext.Escape(r); esc && r >= 0x7f {
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
			} else {
				out = fmt.Appendf(out, `\u%04x`, r)
			}
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// Identity is an operator known by the key they signed in with.
type Identity struct {
	Name string // the [[operators]] name
	Via  string // approval.ViaSSH
	Key  string // the key's SHA256 fingerprint
}

// decision is a Decision made by this App's decider through via (the
// command line's own surface unless an Identity says otherwise).
func (a *App) decision(approve bool, via string) approval.Decision {
	d := approval.Decision{Approve: approve, By: a.Operator(), Via: via}
	if a.Identity != nil {
		d.Via, d.Key = a.Identity.Via, a.Identity.Key
	}
	return d
}

// Operator is who decides: "operator:<name>", an SSH operator's [[operators]]
// name or else this account's user name.
func (a *App) Operator() string {
	if a.Identity != nil {
		return "operator:" + a.Identity.Name
	}
	name := a.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	return "operator:" + name
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitBadInput // cobra's own errors are usage errors
}
