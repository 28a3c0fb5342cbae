package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/safetext"
	"github.com/vigil-dev/vigil/panes/approvals"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	"github.com/vigil-dev/vigil/themes"
)

// tuiQueueOpenWait bounds how long the TUI waits for the shared queue at
// start (the server, then the bucket's current tasks): past it the
// Approvals pane says why it has no queue.
var tuiQueueOpenWait = 20 * time.Second

// mirrorRetry is how long the audit mirror waits before it starts again
// after the stream could not be read (the server down, a gap).
var mirrorRetry = 5 * time.Second

// uncheckedResults is said next to a result's signature when this home
// holds no copy of the executor's operator key to check it with.
const uncheckedResults = "this home has no copy of the executor's keys/operator.pub.pem"

// tuiQueue is the TUI's side of the shared queue ([queue] url): the
// Approvals pane's source (the bucket's tasks, decisions by compare-and-set)
// and a copy of the executor's audit log that the Audit pane follows.
type tuiQueue struct {
	r      *remote
	tasks  *natsqueue.OperatorTasks
	mirror *natsqueue.AuditMirror
	stop   context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	stopRun context.CancelFunc // ends the mirror's current run (it starts again at once)
}

// queueAuditPath is where an operator's home keeps its copy of the
// executor's audit log.
func queueAuditPath(app *App) string {
	return filepath.Join(app.Paths.State, "queue-audit", "audit.log")
}

// openTUIQueue connects to the shared queue, reads its tasks and starts the
// audit mirror.
func openTUIQueue(ctx context.Context, app *App) (*tuiQueue, error) {
	octx, cancel := context.WithTimeout(ctx, tuiQueueOpenWait)
	defer cancel()
	r, err := openRemote(octx, app, "operator")
	if err != nil {
		return nil, err
	}
	tasks, err := natsqueue.NewOperatorTasks(octx, r.c, app.Now)
	if err != nil {
		r.Close()
		return nil, Fail(ExitExecution, err)
	}
	// the Audit pane watches the copy's folder from its start
	if err := os.MkdirAll(filepath.Dir(queueAuditPath(app)), 0o700); err != nil {
		tasks.Close()
		r.Close()
		return nil, Fail(ExitExecution, err)
	}
	mctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	q := &tuiQueue{r: r, tasks: tasks, stop: stop,
		mirror: &natsqueue.AuditMirror{JS: r.js, Path: queueAuditPath(app)}}
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		q.runMirror(mctx, app)
	}()
	r.nc.SetReconnectHandler(func(*nats.Conn) { q.reconnected() })
	return q, nil
}

// reconnected starts the bucket's watch and the mirror's consumer over
// when the connection is back: after a server restart their consumers are
// gone, which they would otherwise find only by missing heartbeats, many
// seconds later (measured: about 18 s). Both resume where they were.
func (q *tuiQueue) reconnected() {
	q.tasks.Restart()
	q.mu.Lock()
	stop := q.stopRun
	q.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// runMirror keeps the copy of the executor's log following the stream,
// starting again after an error (logged once while it repeats).
func (q *tuiQueue) runMirror(ctx context.Context, app *App) {
	last := ""
	for {
		rctx, cancel := context.WithCancel(ctx)
		q.mu.Lock()
		q.stopRun = cancel
		q.mu.Unlock()
		subject, others, err := chooseAuditSubject(rctx, q.r.js, q.mirror.Path)
		if err == nil {
			if len(others) > 0 {
				app.Log.Warn("queue: several executors publish their audit logs; the Audit pane follows one "+
					"(`vigil queue audit-pull --executor ID` pulls another)", "followed", subject, "others", others)
			}
			q.mirror.Subject = subject
			err = q.mirror.Run(rctx)
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
			app.Log.Warn("queue: audit mirror", "path", q.mirror.Path, "err", err)
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
func (q *tuiQueue) approvalsOptions(app *App, o *approvals.Options) error {
	o.Source, o.Queue = q.tasks, nil
	o.TasksDir, o.InboxDir, o.AuditPath = "", "", ""
	o.Operator = q.r.operatorName(app)
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

// Close stops the mirror and the bucket's watch, and disconnects.
func (q *tuiQueue) Close() {
	q.stop()
	q.wg.Wait()
	q.tasks.Close()
	q.r.Close()
}

// executorAudit is the Audit pane over the copy of the executor's log: its
// tab says whose log it shows.
type executorAudit struct{ *auditpane.Pane }

func newExecutorAudit(app *App, styles *themes.Styles) executorAudit {
	return executorAudit{auditpane.New(queueAuditPath(app), styles)}
}

func (executorAudit) Title() string { return "Audit (executor)" }
