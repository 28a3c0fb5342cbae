package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/metrics"
	"github.com/vigil-dev/vigil/exec/notify"
	"github.com/vigil-dev/vigil/exec/serve"
	"github.com/vigil-dev/vigil/internal/httpguard"
	"github.com/vigil-dev/vigil/preview"
)

func newServeCmd(app *App) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the executor until SIGINT/SIGTERM: expiry on time, pending executions, /metrics, notifications",
		Long: "vigil serve keeps the approval queue moving with nobody at a screen: tasks expire at their deadline, " +
			"an approval whose process died before running it is carried out once, manifests dropped in inbox/new " +
			"are submitted, and [notify] command runs when a task arrives or is a minute from expiring. " +
			"With --metrics it serves /metrics (the executor's request counts and durations) and /healthz. " +
			"With --mcp it serves agents their MCP tools as `vigil mcp --http` does, each agent known by its [[agents]] token. " +
			"With --ssh the operators listed in [[operators]] decide over SSH with their keys (docs/ssh.md). SIGINT or SIGTERM stops it " +
			"after the execution in flight is finished and recorded (exit 0).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), app, f)
		},
	}
	cmd.Flags().StringVar(&f.metrics, "metrics", "", "serve /metrics and /healthz on `ADDR` (host:port; a loopback host unless --allow-remote; \":9464\" means 127.0.0.1:9464)")
	cmd.Flags().StringVar(&f.mcp, "mcp", "", "serve MCP Streamable HTTP (as `vigil mcp --http`) on `ADDR` (host:port, loopback unless --allow-remote); tokens from [mcp] and [[agents]]")
	cmd.Flags().StringVar(&f.ssh, "ssh", "", "serve the operators in [[operators]] over SSH on `ADDR` (host:port; a loopback host unless --allow-remote)")
	cmd.Flags().BoolVar(&f.allowRemote, "allow-remote", false, "let --metrics, --mcp and --ssh listen on a non-loopback address")
	return cmd
}

// metricsAddr checks --metrics: an empty host is loopback, and any other
// host must be a loopback one unless remote access was asked for.
func metricsAddr(addr string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--metrics: must be host:port, got %q", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !allowRemote {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "", fmt.Errorf("--metrics: %s is not a loopback address; metrics say what agents are doing, "+
				"so serving them beyond this machine needs --allow-remote", host)
		}
	}
	return net.JoinHostPort(host, port), nil
}

// serveFlags are vigil serve's listeners: each empty when not asked for.
type serveFlags struct {
	metrics, mcp, ssh string
	allowRemote       bool
}

func runServe(ctx context.Context, app *App, f serveFlags) error {
	var listen string
	if f.metrics != "" {
		var err error
		if listen, err = metricsAddr(f.metrics, f.allowRemote); err != nil {
			return Fail(ExitBadInput, err)
		}
	}
	if err := protectHome(app); err != nil {
		return err
	}
	mcpEP, err := prepareServeMCP(app, f.mcp, f.allowRemote)
	if err != nil {
		return err
	}
	// a service's logs go to stderr (the journal under systemd), masked
	app.Log = slog.New(preview.NewMaskingHandler(slog.NewTextHandler(app.Err, nil)))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// what cannot be waited out (the shared queue's server refused) stops
	// serve as a signal would, and is its exit's reason
	ctx, stopFatal := context.WithCancelCause(ctx)
	defer stopFatal(nil)
	// Opening the queue finishes what a crash left, which may run an
	// approved task: a signal then waits for that execution to be recorded
	// (the queue gets a context no signal cancels; Run stops right after).
	eng, err := app.Engine(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	endRun, err := serveRules(ctx, app, eng)
	if err != nil {
		return err
	}
	defer endRun()
	m := metrics.New(metrics.Build{Version: Version, Commit: commit(), GoVersion: runtime.Version()})
	s, err := serve.New(serveOptions(app, eng, m, f.ssh))
	if err != nil {
		return Fail(ExitExecution, err)
	}
	if f.ssh != "" {
		stopSSH, err := startSSH(app, eng, f.ssh, f.allowRemote)
		if err != nil {
			return err
		}
		defer stopSSH() // after Run: sessions get a moment to finish
	}
	health := s.Health
	if app.Cfg.Queue.Enabled() {
		wait, link, err := startQueueExecutor(ctx, app, eng, func(err error) { stopFatal(&refusedError{err}) })
		if err != nil {
			return err
		}
		defer wait() // after Run: the decision in flight is recorded first
		health = func() error {
			if err := s.Health(); err != nil {
				return err
			}
			return link.Health()
		}
	}
	stopMetrics, err := startMetrics(app, listen, m.Handler(health))
	if err != nil {
		return err
	}
	if err := mcpEP.start(ctx); err != nil {
		return err
	}
	app.Log.Info("vigil serve: running", "home", app.Paths.State)
	runErr := s.Run(ctx)
	mcpEP.stop()
	if err := stopMetrics(); err != nil {
		return err
	}
	if runErr != nil {
		return Fail(ExitExecution, runErr)
	}
	var refused *refusedError
	if errors.As(context.Cause(ctx), &refused) {
		return Fail(ExitBadInput, refused.error)
	}
	app.Log.Info("vigil serve: stopped")
	return nil
}

// serveOptions wire serve's loop to the engine: metrics, notifications and
// the address {ssh} names ([ssh] advertise, else --ssh's).
func serveOptions(app *App, eng *Engine, m *metrics.Metrics, sshListen string) serve.Options {
	o := serve.Options{Queue: eng.Queue, TasksDir: filepath.Join(app.Paths.State, "tasks"), Audit: eng.Audit,
		Metrics: m, Now: app.Now, Log: app.Log, SSHAddress: app.Cfg.SSH.Advertise} // {ssh}
	if o.SSHAddress == "" {
		o.SSHAddress = sshListen // an unspecified host (":2222") gives no {ssh}: no phone can dial it
	}
	if argv := app.Cfg.Notify.Command; len(argv) > 0 {
		c := notify.Command{Argv: argv, Timeout: app.Cfg.Notify.Timeout.Duration, Log: app.Log}
		o.Notify = func(ctx context.Context, ev notify.Event) { _ = c.Run(ctx, ev) } // logged by Run; changes nothing else
	}
	return o
}

// startMetrics serves /metrics and /healthz on listen (nothing when it is
// empty) and returns how to stop it, which says whether it failed.
func startMetrics(app *App, listen string, h http.Handler) (stop func() error, err error) {
	if listen == "" {
		return func() error { return nil }, nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, Failf(ExitExecution, "--metrics: %v", err)
	}
	// only requests naming this address (no DNS rebinding from a web
	// page), and no idle connection held open
	srv := httpguard.Server(httpguard.Host(h, listen, ln.Addr().String()))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	fmt.Fprintf(app.Out, "vigil serve: metrics on http://%s/metrics\n", ln.Addr())
	return func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			app.Log.Warn("vigil serve: metrics server shutdown", "err", err)
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return Fail(ExitExecution, fmt.Errorf("metrics server: %w", err))
		}
		return nil
	}, nil
}

// refusedError is what stopped serve when nothing else did: a shared
// queue's server it cannot work with.
type refusedError struct{ error }
