package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/grants"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// How long `vigil serve` waits for the shared queue at start to claim its
// devices there (a device another executor serves stops it at once); a
// server not reachable by then is waited for in the background.
var queueClaimWait = 5 * time.Second

// startQueueExecutor connects `vigil serve` to the shared queue as the
// executor of its devices and runs it until ctx ends; the returned func
// waits for it to stop, and the link answers /healthz for the queue. The
// connection retries for ever: tasks wait in JetStream while the server is
// away, and the local queue keeps expiring them on time. A server Vigil
// cannot work with (older than 2.10, no JetStream) is no such wait: found
// at start it is the error returned; found later (the first connection
// came late, or a reconnection reached another server) it is passed to
// fatal, which stops serve with it.
func startQueueExecutor(ctx context.Context, app *App, eng *Engine, fatal func(error)) (func(), *queueLink, error) {
	if len(app.Cfg.Devices) == 0 {
		// an operator's or agent's host running serve would take the
		// submissions from the real executor and reject them all
		return nil, nil, Failf(ExitBadInput, "%s: queue.url: `vigil serve` on the shared queue is its executor, and this home "+
			"lists no [[devices]]; run it on the host with the devices (operators and agents need no serve)", app.Paths.Config)
	}
	q, err := queueConfig(app)
	if err != nil {
		return nil, nil, err
	}
	host, _ := os.Hostname()
	link := &queueLink{url: q.URL, log: app.Log, fatal: fatal}
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: q, Getenv: app.Getenv, Name: "vigil serve@" + host,
		Wait: true, Role: natsqueue.RoleExecutor,
		Connected: link.connected, Disconnected: link.disconnected, Reconnected: link.reconnected})
	if err != nil {
		return nil, nil, Fail(ExitBadInput, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, Fail(ExitExecution, err)
	}
	link.nc, link.js = nc, js
	var first *natsqueue.Executor
	if connectedWithin(nc, queueClaimWait) {
		if err := natsqueue.CheckServer(nc); err != nil && !errors.Is(err, natsqueue.ErrNotConnected) {
			nc.Close()
			return nil, nil, Fail(ExitBadInput, err)
		}
		first, err = newQueueExecutor(ctx, app, eng, js, host)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = first.Claim(cctx)
			cancel()
		}
		var ce *natsqueue.ClaimError
		if errors.As(err, &ce) {
			nc.Close()
			return nil, nil, Fail(ExitBadInput, err)
		}
		if err != nil {
			app.Log.Warn("vigil serve: shared queue", "err", err)
			link.setRunErr(err)
			first = nil // tried again below
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer nc.Close()
		link.serve(ctx, first, func() (*natsqueue.Executor, error) { return newQueueExecutor(ctx, app, eng, js, host) })
	}()
	app.Log.Info("vigil serve: shared queue", "url", q.URL)
	return func() { cancel(); <-done }, link, nil
}

// serve runs an executor until ctx ends, making a new one (first, if not
// nil, to begin with) after each failure.
func (l *queueLink) serve(ctx context.Context, first *natsqueue.Executor, newExecutor func() (*natsqueue.Executor, error)) {
	for ctx.Err() == nil {
		ex := first
		first = nil
		err := error(nil)
		if ex == nil {
			ex, err = newExecutor()
		}
		if err == nil {
			l.setRunErr(nil)
			l.running.Store(ex)
			err = ex.Run(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		l.setRunErr(err)
		pause := time.Second
		var ce *natsqueue.ClaimError
		if errors.As(err, &ce) {
			// found only after a reconnect: said loudly, tried seldom
			l.log.Error("vigil serve: shared queue: not serving these devices", "err", err)
			pause = 30 * time.Second
		} else {
			l.log.Warn("vigil serve: shared queue", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
}

// queueLink is `vigil serve`'s connection to the shared queue as the logs
// and /healthz see it.
type queueLink struct {
	url     string
	log     *slog.Logger
	fatal   func(error)
	nc      *nats.Conn
	js      jetstream.JetStream
	running atomic.Pointer[natsqueue.Executor]

	mu      sync.Mutex
	lost    error // why the connection was last lost (nil: never, or back since)
	runErr  error // the executor's last failure, nil while it runs
	refused error // the server was refused (too old, no JetStream)
}

// connected logs the first connection and checks the server.
func (l *queueLink) connected(nc *nats.Conn) {
	info, ok := l.check(nc)
	if !ok {
		return
	}
	l.log.Info("vigil serve: shared queue: connected", "server", info.URL, "version", info.Version, "name", info.Name)
}

// disconnected logs a connection lost (not one closed: serve stopping).
func (l *queueLink) disconnected(nc *nats.Conn, err error) {
	if nc.IsClosed() {
		return
	}
	if err == nil {
		err = errors.New("connection closed")
	}
	l.mu.Lock()
	l.lost = err
	l.mu.Unlock()
	l.log.Warn("vigil serve: shared queue: lost the server; reconnecting", "url", l.url, "err", err)
}

// reconnected logs the server back, checks it (a reconnection may reach
// another server of the list) and restarts the executor's watches.
func (l *queueLink) reconnected(nc *nats.Conn) {
	info, ok := l.check(nc)
	if !ok {
		return
	}
	l.mu.Lock()
	l.lost = nil
	l.mu.Unlock()
	l.log.Info("vigil serve: shared queue: reconnected", "server", info.URL, "version", info.Version, "name", info.Name)
	if ex := l.running.Load(); ex != nil {
		ex.Reconnected()
	}
}

// check refuses a server Vigil cannot work with: logged, and serve stopped
// with it. False when refused, or when the connection is down (or closed)
// again by the time this runs: the next reconnection is checked.
func (l *queueLink) check(nc *nats.Conn) (natsqueue.ServerInfo, bool) {
	info, err := natsqueue.Server(nc)
	if err != nil {
		return info, false
	}
	if err = info.Check(); err == nil {
		return info, true
	}
	l.mu.Lock()
	l.refused = err
	l.mu.Unlock()
	l.log.Error("vigil serve: shared queue: refusing the server; stopping", "err", err)
	if l.fatal != nil {
		l.fatal(err)
	}
	return info, false
}

func (l *queueLink) setRunErr(err error) {
	l.mu.Lock()
	l.runErr = err
	l.mu.Unlock()
}

// healthWait bounds /healthz's look at the streams.
const healthWait = 2 * time.Second

// Health is the shared queue's part of /healthz: nil while it is usable —
// connected to a server Vigil works with, its streams and bucket there, and
// the executor running.
func (l *queueLink) Health() error {
	l.mu.Lock()
	refused, lost, runErr := l.refused, l.lost, l.runErr
	l.mu.Unlock()
	if refused != nil {
		return fmt.Errorf("shared queue: %w", refused)
	}
	if !l.nc.IsConnected() {
		if lost != nil {
			return fmt.Errorf("shared queue: not connected to %s (reconnecting; lost: %v)", l.url, lost)
		}
		return fmt.Errorf("shared queue: not connected to %s (connecting)", l.url)
	}
	if err := natsqueue.CheckServer(l.nc); err != nil {
		return fmt.Errorf("shared queue: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), healthWait)
	defer cancel()
	if err := natsqueue.CheckStreams(ctx, l.js); err != nil {
		return fmt.Errorf("shared queue: %w", err)
	}
	if runErr != nil {
		return fmt.Errorf("shared queue: the executor is not running: %w", runErr)
	}
	return nil
}

// connectedWithin waits up to d for the first connection.
func connectedWithin(nc *nats.Conn, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !nc.IsConnected() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func newQueueExecutor(ctx context.Context, app *App, eng *Engine, js jetstream.JetStream, host string) (*natsqueue.Executor, error) {
	ids := make([]string, len(app.Cfg.Devices))
	for i, d := range app.Cfg.Devices {
		ids[i] = d.ID
	}
	// the executor mints for the agents its [[agents.grants]] name, when
	// they submit on their own subjects (docs/queue.md)
	g, err := grants.Load(app.Cfg, filepath.Join(app.Paths.Keys, lease.IssuerKeyFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", app.Paths.Config, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return natsqueue.NewExecutor(sctx, natsqueue.ExecutorOptions{JS: js, Queue: eng.Queue, AuditPath: eng.Audit.Path(),
		Host: host, Devices: ids, ID: eng.Signer.KeyID(), Log: app.Log,
		Layout: natsqueue.Layout{Replicas: app.Cfg.Queue.Replicas}, Grants: g, Audit: eng.Audit, Now: app.Now})
}
