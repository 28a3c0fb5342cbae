package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/mcpserver"
)

// newMcpCmd is `vigil mcp`: Vigil's tools for agents over stdio or
// Streamable HTTP.
func newMcpCmd(app *App) *cobra.Command {
	var httpAddr string
	var allowRemote bool
	var origins []string
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDR [--allow-remote] [--allow-origin ORIGIN]...]",
		Short: "Serve Vigil's tools to MCP clients over stdio or Streamable HTTP",
		Long: "Speaks MCP on stdin/stdout (newline-delimited JSON-RPC) until stdin closes, or with --http\n" +
			"serves Streamable HTTP at ADDR (loopback unless --allow-remote). Every HTTP request must carry\n" +
			"Authorization: Bearer <token> (at least 16 characters): an [[agents]] token, and the call acts\n" +
			"as that agent (a lease naming another agent is INVALID_LEASE; a media call without a lease gets\n" +
			"one minted when its [[agents.grants]] cover it, else INVALID_LEASE), or the shared token from\n" +
			"VIGIL_MCP_TOKEN or [mcp] token_file. A request must name the listening address in Host, and one from a web\n" +
			"page (an Origin header) is refused with 403 unless --allow-origin names that origin.\n" +
			"Logs go to stderr as JSON lines; queries appear there cut to their first 50 characters.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// stdout belongs to the protocol: every log line goes to stderr,
			// often a person's terminal, and holds what clients sent (query
			// previews): the lines stay exact JSON with nothing raw a terminal
			// acts on or a person cannot see.
			log := slog.New(slog.NewJSONHandler(safeJSONWriter{app.Err}, &slog.HandlerOptions{Level: slog.LevelInfo}))
			var callers *mcpserver.Callers
			var grants *mcpserver.Grants
			if httpAddr != "" {
				// Refuse a bad address, a missing token or grants that
				// cannot mint before opening anything.
				if err := checkListenAddr(httpAddr, allowRemote); err != nil {
					return Fail(ExitBadInput, err)
				}
				var err error
				if callers, err = mcpCallers(app); err != nil {
					return Fail(ExitBadInput, err)
				}
				if grants, err = mcpGrants(app); err != nil {
					return Fail(ExitBadInput, err)
				}
			}
			deps, closeDeps, err := mcpDeps(cmd.Context(), app, log)
			if err != nil {
				return err
			}
			defer closeDeps()
			if httpAddr != "" {
				deps.Grants = grants
				return serveMCPHTTP(cmd.Context(), deps, httpAddr, callers, origins, log)
			}
			srv := mcpserver.New(deps)
			t := &mcpserver.StdioTransport{Reader: app.In, Writer: app.Out}
			if err := srv.Run(cmd.Context(), t); err != nil && !errors.Is(err, io.EOF) &&
				cmd.Context().Err() == nil {
				return Fail(ExitExecution, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve Streamable HTTP at ADDR (host:port) instead of stdio")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow --http on an address other than loopback")
	cmd.Flags().StringArrayVar(&origins, "allow-origin", nil, "let web pages of `ORIGIN` (scheme://host[:port], exactly) call --http; none by default")
	return cmd
}

// mcpDeps opens what the tools run on. A part that cannot open leaves its
// tools answering with the reason: memory tools work on a home without keys.
func mcpDeps(ctx context.Context, app *App, log *slog.Logger) (mcpserver.Deps, func(), error) {
	if err := app.Load(); err != nil {
		return mcpserver.Deps{}, nil, err
	}
	d := mcpserver.Deps{Version: Version, SearchOptions: searchOptions(app), Now: app.Now, Log: log}
	var closers []func()
	if s, err := openMemoryWith(app, log); err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return d, nil, err
		}
		log.Error("memory_open_failed", "error", err.Error())
		d.MemoryErr = err
	} else {
		d.Memory = s
		closers = append(closers, func() { _ = s.Close() })
	}
	if eng, err := app.Engine(ctx); err != nil {
		log.Warn("engine_unavailable", "error", err.Error())
		d.QueueErr = err
		if l, aerr := app.OpenAudit(); aerr == nil {
			d.Audit = l
		}
	} else {
		d.Queue, d.Audit = eng.Queue, eng.Audit
	}
	if app.Cfg.Queue.Enabled() {
		// [queue] url: the task tools go to the shared queue, never this
		// home's (cli/queue_mcp.go)
		d.Queue = nil
		if t, closeQueue, err := mcpQueueTasks(ctx, app); err != nil {
			log.Warn("queue_unavailable", "error", err.Error())
			d.QueueErr = err
		} else {
			d.Tasks, d.QueueErr, d.Poll = t, nil, queueMCPPoll
			closers = append(closers, closeQueue)
		}
	}
	if d.Audit == nil {
		// Memory writes are audited or refused: without a log, writes fail.
		d.Memory, d.MemoryErr = nil, errors.New("the audit log cannot be opened")
	}
	return d, func() {
		for _, c := range closers {
			c()
		}
	}, nil
}

// MinMCPTokenLen is the shortest bearer token `vigil mcp --http` takes: a
// short one is guessed by anything that can reach the port.
const MinMCPTokenLen = 16

// errNoMCPToken: neither VIGIL_MCP_TOKEN nor [mcp] token_file is set.
var errNoMCPToken = errors.New("the MCP HTTP endpoint needs a bearer token: set VIGIL_MCP_TOKEN or [mcp] token_file, " +
	"or give each agent its own in [[agents]] (token_file or token_env)")

// mcpToken reads the shared HTTP bearer token: VIGIL_MCP_TOKEN, else [mcp]
// token_file; at least MinMCPTokenLen characters.
func mcpToken(app *App) (string, error) {
	t, err := sharedMCPToken(app)
	return t.Value, err
}

// sharedMCPToken is mcpToken with where it came from.
func sharedMCPToken(app *App) (mcpserver.Token, error) {
	t, from, err := readMCPToken(app)
	if err != nil {
		return mcpserver.Token{}, err
	}
	if n := utf8.RuneCountInString(t); n < MinMCPTokenLen {
		return mcpserver.Token{}, fmt.Errorf("%s: the bearer token has %d characters, at least %d are needed "+
			"(VIGIL_MCP_TOKEN or [mcp] token_file; make one with: openssl rand -hex 32)", from, n, MinMCPTokenLen)
	}
	return mcpserver.Token{Value: t, From: from}, nil
}

// readMCPToken reads the token and says where it came from.
func readMCPToken(app *App) (token, from string, err error) {
	if err := app.Load(); err != nil {
		return "", "", err
	}
	if t := strings.TrimSpace(app.Getenv("VIGIL_MCP_TOKEN")); t != "" {
		return t, "VIGIL_MCP_TOKEN", nil
	}
	if f := app.Cfg.MCP.TokenFile; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", "", fmt.Errorf("[mcp] token_file: %v", err)
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, "[mcp] token_file " + f, nil
		}
		return "", "", fmt.Errorf("[mcp] token_file %s: empty", f)
	}
	return "", "", errNoMCPToken
}

// mcpCallers reads every token the HTTP endpoint takes: the shared one
// (optional when [[agents]] lists any: a call with it acts as no agent) and
// each agent's. Both kinds may be set at once; a token given twice, or one
// too short, refuses the start.
func mcpCallers(app *App) (*mcpserver.Callers, error) {
	if err := app.Load(); err != nil {
		return nil, err
	}
	var tokens []mcpserver.Token
	shared, err := sharedMCPToken(app)
	switch {
	case errors.Is(err, errNoMCPToken) && len(app.Cfg.Agents) > 0:
	case err != nil:
		return nil, err
	default:
		tokens = append(tokens, shared)
	}
	for _, a := range app.Cfg.Agents {
		t, err := agentToken(app, a)
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, t)
	}
	return mcpserver.NewCallers(tokens)
}

// mcpGrants is the lease minter of the agents' [[agents.grants]] (nil when
// no agent has any): the issuer key keys/issuer.key.pem, which the
// config's [[leases.keys]] must trust. Only agents' tokens reach it, so
// only the HTTP endpoint has one.
func mcpGrants(app *App) (*mcpserver.Grants, error) {
	if err := app.Load(); err != nil {
		return nil, err
	}
	g, err := mcpserver.LoadGrants(app.Cfg, filepath.Join(app.Paths.Keys, lease.IssuerKeyFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", app.Paths.Config, err)
	}
	return g, nil
}

// agentTokenText reads an [[agents]] token as written: token_file's first
// line or token_env's value, trimmed (empty when the variable is unset);
// from says where, in the config's words.
func agentTokenText(app *App, a config.AgentConfig) (tok, from string, err error) {
	if a.TokenFile == "" {
		return strings.TrimSpace(app.Getenv(a.TokenEnv)), "token_env " + a.TokenEnv, nil
	}
	b, err := os.ReadFile(a.TokenFile)
	if err != nil {
		return "", "token_file " + a.TokenFile, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), "token_file " + a.TokenFile, nil
}

// agentToken reads an [[agents]] token (agentTokenText), which must have at
// least config.MinAgentTokenBytes.
func agentToken(app *App, a config.AgentConfig) (mcpserver.Token, error) {
	tok, from, err := agentTokenText(app, a)
	if err != nil {
		return mcpserver.Token{}, fmt.Errorf("[[agents]] %q: token_file: %v", a.Name, err)
	}
	if n := len(tok); n < config.MinAgentTokenBytes {
		what := fmt.Sprintf("the token has %d bytes", n)
		if n == 0 {
			what = "no token (an empty first line or an unset variable)"
		}
		return mcpserver.Token{}, fmt.Errorf("[[agents]] %q: %s: %s, at least %d are needed "+
			"(make one with: openssl rand -hex 32)", a.Name, from, what, config.MinAgentTokenBytes)
	}
	return mcpserver.Token{Value: tok, Agent: a.Name, From: fmt.Sprintf("[[agents]] %q %s", a.Name, from)}, nil
}

// checkListenAddr allows loopback addresses for --http, and others only
// when asked.
func checkListenAddr(addr string, allowRemote bool) error {
	return checkListenFlag("--http", addr, allowRemote)
}

// checkListenFlag is checkListenAddr for the flag named.
func checkListenFlag(flag, addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %v", flag, addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s %q: not a loopback address; add --allow-remote to listen there", flag, addr)
}

// serveMCPHTTP is `vigil mcp --http`: the endpoint until a signal, then a
// graceful stop.
func serveMCPHTTP(ctx context.Context, d mcpserver.Deps, addr string, callers *mcpserver.Callers, origins []string, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	m, err := startMCPHTTP(d, addr, callers, origins, log)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	log.Info("mcp_http_listening", "addr", m.Addr().String())
	select {
	case err := <-m.served:
		return Fail(ExitExecution, err)
	case <-ctx.Done():
		return m.Stop(mcpStopTimeout)
	}
}

// mcpSSERetry is how long a client whose SSE stream dropped waits before
// resuming it (the retry field of each stream's first event).
const mcpSSERetry = 2 * time.Second

// mcpEventStoreBytes bounds the SSE events kept for resumption, over all
// sessions.
const mcpEventStoreBytes = 8 << 20

func mcpEventStore() *mcp.MemoryEventStore {
	es := mcp.NewMemoryEventStore(nil)
	es.SetMaxBytes(mcpEventStoreBytes)
	return es
}

// safeJSONWriter passes JSON text through terminalSafeJSON: slog's JSON
// handler escapes C0 controls but not DEL, C1 or format characters.
type safeJSONWriter struct{ w io.Writer }

func (s safeJSONWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(terminalSafeJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
