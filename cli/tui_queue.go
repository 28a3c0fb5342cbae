package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// tuiQueueOpenWait bounds one attempt to open the shared queue (the
// server, then the bucket's current tasks); a failed attempt is tried
// again (tuiQueue.connect).
var tuiQueueOpenWait = 20 * time.Second

// mirrorRetry is how long the audit mirror waits before it starts again
// after the stream could not be read (the server down, a gap).
var mirrorRetry = 5 * time.Second

// uncheckedResults is said next to a result's signature when this home
// holds no copy of the executor's operator key to check it with.
const uncheckedResults = "this home has no copy of the executor's keys/operator.pub.pem"

// tuiQueue is the TUI's side of the shared queue ([queue] url): the
// Approvals pane's source (the bucket's tasks, decisions by compare-and-set)
// and a copy of the executor's audit log that the Audit pane follows. It is
// made at once, whether or not the server can be reached: the connection,
// the tasks and the mirror come in the background (connect), so a laptop
// opened before its VPN, or a server restarting, needs no restart of the
// TUI.
type tuiQueue struct {
	q      config.QueueConfig
	src    *sharedTasks
	mirror *natsqueue.AuditMirror
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	r       *remote            // nil until connected
	stopRun context.CancelFunc // ends the mirror's current run (it starts again at once)
}

// queueAuditPath is where an operator's home keeps its copy of the
// executor's audit log.
func queueAuditPath(app *App) string {
	return filepath.Join(app.Paths.State, "queue-audit", "audit.log")
}

// openTUIQueue checks the [queue] section and its files and starts
// connecting in the background. Its errors are those that trying again
// cannot fix (the config, the credentials and TLS files, the copy's
// folder); a server that cannot be reached is the pane's to say while the
// connection keeps trying.
func openTUIQueue(ctx context.Context, app *App) (*tuiQueue, error) {
	q, err := queueConfig(app)
	if err != nil {
		return nil, err
	}
	// the Audit pane watches the copy's folder from its start
	if err := os.MkdirAll(filepath.Dir(queueAuditPath(app)), 0o700); err != nil {
		return nil, Fail(ExitExecution, err)
	}
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	t := &tuiQueue{q: q, src: newSharedTasks(strings.TrimSpace(q.URL)), stop: stop,
		mirror: &natsqueue.AuditMirror{Path: queueAuditPath(app)}}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.connect(cctx, app)
	}()
	return t, nil
}

// connect tries to open the shared queue until it is open (or ctx ends,
// or an attempt fails in a way trying again cannot fix), telling the
// pane's source each time why not; once open it hands the tasks over and
// starts the audit mirror. After that the connection reconnects by itself
// (natsqueue.Connect: no limit on reconnects).
func (t *tuiQueue) connect(ctx context.Context, app *App) {
	for n := 0; ; n++ {
		r, tasks, err := t.openOnce(ctx, app)
		if err == nil {
			t.mu.Lock()
			ok := ctx.Err() == nil && t.src.ready(tasks, r.nc)
			if ok {
				t.r = r
				t.mirror.JS = r.js
				t.wg.Add(1) // counted while connect's own count holds: never after Close's Wait
			}
			t.mu.Unlock()
			if !ok {
				tasks.Close()
				r.Close()
				return
			}
			r.nc.SetReconnectHandler(func(*nats.Conn) { t.reconnected() })
			app.Log.Info("queue: connected", "url", t.src.url, "attempts", n+1)
			go func() {
				defer t.wg.Done()
				t.runMirror(ctx, app)
			}()
			return
		}
		if ctx.Err() != nil {
			return
		}
		final := willNotHeal(err)
		t.src.failed(err, final)
		if final {
			app.Log.Warn("queue: cannot connect; not retried", "url", t.src.url, "err", err)
			return
		}
		if n == 0 {
			app.Log.Warn("queue: cannot connect yet; retrying", "url", t.src.url, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryWait(n)):
		}
	}
}

// openOnce is one attempt: connect, then read the bucket's tasks.
func (t *tuiQueue) openOnce(ctx context.Context, app *App) (*remote, *natsqueue.OperatorTasks, error) {
	octx, cancel := context.WithTimeout(ctx, tuiQueueOpenWait)
	defer cancel()
	r, err := openRemote(octx, app, "operator")
	if err != nil {
		return nil, nil, err
	}
	tasks, err := natsqueue.NewOperatorTasks(octx, r.c, app.Now)
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return r, tasks, nil
}

// reconnected starts the bucket's watch and the mirror's consumer over
// when the connection is back: after a server restart their consumers are
// gone, which they would otherwise find only by missing heartbeats, many
// seconds later (measured: about 18 s). Both resume where they were.
func (t *tuiQueue) reconnected() {
	t.src.restart()
	t.mu.Lock()
	stop := t.stopRun
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// runMirror keeps the copy of the executor's log following the stream,
// starting again after an error (logged once while it repeats).
func (t *tuiQueue) runMirror(ctx context.Context, app *App) {
	last := ""
	for {
		rctx, cancel := context.WithCancel(ctx)
		t.mu.Lock()
		t.stopRun = cancel
		t.mu.Unlock()
		subject, others, err := chooseAuditSubject(rctx, t.mirror.JS, t.mirror.Path)
		if err == nil {
			if len(others) > 0 {
				app.Log.Warn("queue: several executors publish their audit logs; the Audit pane follows one "+
					"(`vigil queue audit-pull --executor ID` pulls another)", "followed", subject, "others", others)
			}
			t.mirror.Subject = subject
			err = t.mirror.Run(rctx)
		}
		restarted := rctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return
		}
		if restarted {
			continue // the connection is back: resume at once
		}
		if err != nil && err.Error() != last {
			last = err.Error()
			app.Log.Warn("queue: audit mirror", "path", t.mirror.Path, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(mirrorRetry):
		}
	}
}

// errNoExecutorLog is a queue whose executors have published no log yet.
var errNoExecutorLog = errors.New("no executor has published its audit log to the shared queue yet")

// chooseAuditSubject picks the executor whose log the copy at path
// follows: the one it already holds while that executor is on the stream,
// else the only one, else the first by id (the others are returned, to be
// named in the log).
func chooseAuditSubject(ctx context.Context, js jetstream.JetStream, path string) (string, []string, error) {
	ids, err := natsqueue.AuditExecutors(ctx, js)
	if err != nil {
		return "", nil, err
	}
	if len(ids) == 0 {
		return "", nil, errNoExecutorLog
	}
	chosen := ids[0]
	if prev := natsqueue.CopiedSubject(path); prev != "" {
		for _, id := range ids {
			if natsqueue.AuditSubjectFor(id) == prev {
				chosen = id
			}
		}
	}
	var others []string
	for _, id := range ids {
		if id != chosen {
			others = append(others, id)
		}
	}
	return natsqueue.AuditSubjectFor(chosen), others, nil
}

// approvalsOptions points the Approvals pane at the shared queue: its
// decisions are recorded as this operator (the NATS user, or
// operator:<user>@<host>), and results are shown signed only when they
// verify with this home's copy of the executor's key.
func (t *tuiQueue) approvalsOptions(app *App, o *approvalspane.Options) error {
	o.Queue = t.src
	o.Operator = (&remote{q: t.q}).operatorName(app)
	o.Shared = "shared queue · deciding as " + safetext.Line(o.Operator)
	key, err := agentOperatorKey(app)
	if err != nil {
		return err
	}
	o.ResultKey = key
	if key == nil {
		o.Unchecked = uncheckedResults
	}
	return nil
}

// Close stops connecting, the mirror and the bucket's watch, and
// disconnects.
func (t *tuiQueue) Close() {
	t.stop()
	t.wg.Wait()
	t.src.Close()
	t.mu.Lock()
	r := t.r
	t.mu.Unlock()
	if r != nil {
		r.Close()
	}
}

// executorAudit is the Audit pane over the copy of the executor's log: its
// tab says whose log it shows.
type executorAudit struct{ *auditpane.Pane }

func newExecutorAudit(app *App, styles *themes.Styles) executorAudit {
	return executorAudit{auditpane.New(queueAuditPath(app), styles)}
}

func (executorAudit) Title() string { return "Audit (executor)" }
