package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/safetext"
)

// remoteResult is `vigil result ID [--wait D]` over the shared queue: the
// signed result in the task's view, waiting on the task's key for it. With
// this home's copy of the operator public key (keys/operator.pub.pem) the
// result is checked as a local `vigil result` checks it; without one it is
// printed with a note saying it was not.
func remoteResult(cmd *cobra.Command, app *App, id string, wait time.Duration) error {
	key, err := agentOperatorKey(app)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	r, err := openRemote(cmd.Context(), app, "agent")
	if err != nil {
		return err
	}
	defer r.Close()
	t := natsqueue.AgentTasks{Client: r.c, OperatorKey: key}
	ctx := cmd.Context()
	changes, stop, err := t.TaskChanges(ctx, id)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	defer stop()
	deadline := time.Now().Add(wait)
	for {
		rec, res, err := t.Task(ctx, id)
		found := !errors.Is(err, approval.ErrNotFound)
		switch {
		case errors.Is(err, natsqueue.ErrUnverified):
			return Fail(ExitCheck, safeErr(err)) // a result that does not verify
		case errors.Is(err, task.ErrNotThisTask):
			return Fail(ExitCheck, safeErr(fmt.Errorf("%w; refusing it", err))) // another task's answer
		case err != nil && found:
			return Fail(ExitExecution, safeErr(err))
		}
		if res != nil {
			if err := approval.ResultAnswers(id, rec, res); err != nil {
				return Fail(ExitCheck, safeErr(fmt.Errorf("%w; refusing it", err)))
			}
			if humanOut(cmd, app) {
				for _, l := range resultLines(rec, found, res) {
					fmt.Fprintln(app.Out, l)
				}
			} else {
				if err := app.PrintJSON(res); err != nil {
					return err
				}
				fmt.Fprintln(app.Err, outcomeLine(rec))
			}
			if key == nil {
				fmt.Fprintln(app.Err, "vigil: not verified: this home has no copy of the executor's keys/operator.pub.pem "+
					"(`vigil result verify` checks it with one)")
			}
			if res.Status != task.StatusSuccess {
				return Quiet(ExitCheck)
			}
			return nil
		}
		if !time.Now().Before(deadline) {
			if !found {
				return Failf(ExitBadInput, "task %s: no such task in the shared queue", safetext.Line(id))
			}
			return Failf(ExitCheck, "task %s has no result yet (state %s)", safetext.Line(id), safetext.Line(string(rec.State)))
		}
		if err := waitChange(ctx, changes, time.Until(deadline)); err != nil {
			return Fail(ExitExecution, err)
		}
	}
}

// waitChange sleeps until the task's key changes, the backstop poll, or
// the end of the wait.
func waitChange(ctx context.Context, changes <-chan struct{}, left time.Duration) error {
	tm := time.NewTimer(min(queueMCPPoll, max(left, 0)))
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-changes:
	case <-tm.C:
	}
	return nil
}
