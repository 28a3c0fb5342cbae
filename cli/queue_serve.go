package cli

import (
	"context"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// startQueueExecutor connects `vigil serve` to the shared queue as its
// executor and runs it until ctx ends; the returned func waits for it to
// stop. The connection retries for ever: tasks wait in JetStream while the
// server is away, and the local queue keeps expiring them on time.
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
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: q, Getenv: app.Getenv, Name: "vigil serve@" + host, Wait: true})
	if err != nil {
		return nil, Fail(ExitBadInput, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, Fail(ExitExecution, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer nc.Close()
		for ctx.Err() == nil {
			err := runQueueExecutorOnce(ctx, app, eng, js, host)
			if ctx.Err() != nil {
				return
			}
			app.Log.Warn("vigil serve: shared queue", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	app.Log.Info("vigil serve: shared queue", "url", q.URL)
	return func() { cancel(); <-done }, nil
}

func runQueueExecutorOnce(ctx context.Context, app *App, eng *Engine, js jetstream.JetStream, host string) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ex, err := natsqueue.NewExecutor(sctx, natsqueue.ExecutorOptions{JS: js, Queue: eng.Queue, AuditPath: eng.Audit.Path(),
		Host: host, Log: app.Log})
	cancel()
	if err != nil {
		return err
	}
	return ex.Run(ctx)
}
