package cli

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// How long `vigil serve` waits for the shared queue at start to claim its
// devices there (a device another executor serves stops it at once); a
// server not reachable by then is waited for in the background.
var queueClaimWait = 5 * time.Second

// startQueueExecutor connects `vigil serve` to the shared queue as the
// executor of its devices and runs it until ctx ends; the returned func
// waits for it to stop. The connection retries for ever: tasks wait in
// JetStream while the server is away, and the local queue keeps expiring
// them on time.
func startQueueExecutor(ctx context.Context, app *App, eng *Engine) (func(), error) {
	if len(app.Cfg.Devices) == 0 {
		// an operator's or agent's host running serve would take the
		// submissions from the real executor and reject them all
		return nil, Failf(ExitBadInput, "%s: queue.url: `vigil serve` on the shared queue is its executor, and this home "+
			"lists no [[devices]]; run it on the host with the devices (operators and agents need no serve)", app.Paths.Config)
	}
	q, err := queueConfig(app)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: q, Getenv: app.Getenv, Name: "vigil serve@" + host,
		Wait: true, Role: natsqueue.RoleExecutor})
	if err != nil {
		return nil, Fail(ExitBadInput, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, Fail(ExitExecution, err)
	}
	var first *natsqueue.Executor
	if connectedWithin(nc, queueClaimWait) {
		first, err = newQueueExecutor(ctx, app, eng, js, host)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = first.Claim(cctx)
			cancel()
		}
		var ce *natsqueue.ClaimError
		if errors.As(err, &ce) {
			nc.Close()
			return nil, Fail(ExitBadInput, err)
		}
		if err != nil {
			app.Log.Warn("vigil serve: shared queue", "err", err)
			first = nil // tried again below
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var running atomic.Pointer[natsqueue.Executor]
	nc.SetReconnectHandler(func(*nats.Conn) {
		if ex := running.Load(); ex != nil {
			ex.Reconnected()
		}
	})
	go func() {
		defer close(done)
		defer nc.Close()
		for ctx.Err() == nil {
			ex := first
			first = nil
			err := error(nil)
			if ex == nil {
				ex, err = newQueueExecutor(ctx, app, eng, js, host)
			}
			if err == nil {
				running.Store(ex)
				err = ex.Run(ctx)
			}
			if ctx.Err() != nil {
				return
			}
			pause := time.Second
			var ce *natsqueue.ClaimError
			if errors.As(err, &ce) {
				// found only after a reconnect: said loudly, tried seldom
				app.Log.Error("vigil serve: shared queue: not serving these devices", "err", err)
				pause = 30 * time.Second
			} else {
				app.Log.Warn("vigil serve: shared queue", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
		}
	}()
	app.Log.Info("vigil serve: shared queue", "url", q.URL)
	return func() { cancel(); <-done }, nil
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
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return natsqueue.NewExecutor(sctx, natsqueue.ExecutorOptions{JS: js, Queue: eng.Queue, AuditPath: eng.Audit.Path(),
		Host: host, Devices: ids, ID: eng.Signer.KeyID(), Log: app.Log})
}
