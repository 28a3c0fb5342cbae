package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

// How long the CLI waits for the executor over the shared queue: a submit
// for its verdict, a decision for its outcome. The request itself is
// durable in JetStream; only the waiting stops (and a resend is
// deduplicated).
var (
	remoteSubmitWait = 2 * time.Minute
	remoteDecideWait = time.Minute
)

// queueConfig is the [queue] section, paths resolved and checked, its
// files read (a bad one is named before any network, for every command:
// `vigil serve` retries a server that is down, not a broken file).
func queueConfig(app *App) (config.QueueConfig, error) {
	q := app.Cfg.Queue.Resolved(filepath.Dir(app.Paths.Config))
	if err := q.Validate(); err != nil {
		var ce *config.Error
		if errors.As(err, &ce) {
			ce.File = app.Paths.Config
		}
		return q, Fail(ExitBadInput, err)
	}
	if _, err := natsqueue.Credentials(q, app.Getenv); err != nil {
		return q, Fail(ExitBadInput, fmt.Errorf("%s: %w", app.Paths.Config, err))
	}
	if err := checkQueueFiles(q); err != nil {
		return q, Fail(ExitBadInput, fmt.Errorf("%s: %w", app.Paths.Config, err))
	}
	return q, nil
}

// remote is a connection to the shared queue.
type remote struct {
	nc *nats.Conn
	js jetstream.JetStream
	c  *natsqueue.Client
	q  config.QueueConfig
}

func openRemote(ctx context.Context, app *App, role string) (*remote, error) {
	q, err := queueConfig(app)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: q, Getenv: app.Getenv, Name: "vigil " + role + "@" + host,
		Role: role})
	if err != nil {
		return nil, Fail(ExitExecution, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, Fail(ExitExecution, err)
	}
	c, err := natsqueue.Layout{Replicas: q.Replicas}.NewClient(ctx, js)
	if err != nil {
		nc.Close()
		return nil, Fail(ExitExecution, err)
	}
	c.Agent = q.Agent // an agent known to the executor by name publishes on its own subject
	return &remote{nc: nc, js: js, c: c, q: q}, nil
}

func (r *remote) Close() { r.nc.Close() }

// operatorName is who this host's decisions are recorded as.
func (r *remote) operatorName(app *App) string {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown"
	}
	return natsqueue.OperatorName(r.q, app.Getenv, strings.TrimPrefix(app.Operator(), "operator:"), host)
}

// remoteSubmit publishes a manifest to the executor and prints its verdict
// as a local submit prints its outcome.
func remoteSubmit(cmd *cobra.Command, app *App, args []string) error {
	raw, err := readInput(app, args[0])
	if err != nil {
		return err
	}
	r, err := openRemote(cmd.Context(), app, "agent")
	if err != nil {
		return err
	}
	defer r.Close()
	digest, err := r.c.Publish(cmd.Context(), raw)
	if err != nil {
		return Fail(ExitExecution, err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), remoteSubmitWait)
	defer cancel()
	v, err := r.c.Verdict(ctx, digest)
	if errors.Is(err, context.DeadlineExceeded) {
		return Failf(ExitExecution, "submitted to the shared queue, but no executor has taken it within %s: the "+
			"executor serving its target_device is not running, or no executor's [[devices]] lists that device "+
			"(it waits in the stream until one does); submitting the same file again waits again", remoteSubmitWait)
	}
	if err != nil {
		return Fail(ExitExecution, err)
	}
	switch {
	case v.State == "rejected":
		return app.printRejected(v.TaskID, v.Error)
	case v.Result != nil:
		if err := app.PrintJSON(v.Result); err != nil {
			return err
		}
		if v.Result.Status != task.StatusSuccess {
			return Quiet(ExitCheck)
		}
		return nil
	}
	out := map[string]any{"task_id": v.TaskID, "state": v.State}
	if v.PreviewHash != "" {
		out["preview_hash"], out["expires_at"], out["deadline_kind"] = v.PreviewHash, v.ExpiresAt, v.DeadlineKind
	}
	return app.PrintJSON(out)
}

func (app *App) printRejected(id string, te *task.Error) error {
	if err := app.PrintJSON(map[string]any{"task_id": id, "state": "rejected", "error": te}); err != nil {
		return err
	}
	return Quiet(ExitBadInput)
}

// remotePending lists the shared queue's pending tasks.
func remotePending(cmd *cobra.Command, app *App) error {
	asJSON, _ := cmd.Flags().GetBool("json")
	r, err := openRemote(cmd.Context(), app, "operator")
	if err != nil {
		return err
	}
	defer r.Close()
	views, err := r.c.List(cmd.Context())
	if err != nil {
		return Fail(ExitExecution, err)
	}
	var list []natsqueue.TaskView
	for _, v := range views {
		if v.Record.State == approval.Pending {
			list = append(list, v)
		}
	}
	if asJSON {
		out := make([]map[string]any, 0, len(list))
		for _, v := range list {
			m := pendingJSON(v.ShownRecord())
			m["preview_hash"], m["executor"] = v.PreviewHash, v.Executor
			if v.ExecutorID != "" {
				m["executor_id"] = v.ExecutorID // which executor (one per device set) owns it
			}
			if v.Decision != nil {
				m["decided_by"] = v.Decision.By // being applied by the executor
			}
			out = append(out, m)
		}
		return app.PrintJSON(out)
	}
	recs := make([]approval.Record, len(list))
	for i, v := range list {
		recs[i] = v.ShownRecord()
	}
	printPendingTable(app, recs)
	return nil
}

// remotePreview prints the masked preview the executor published.
func remotePreview(cmd *cobra.Command, app *App, args []string) error {
	asJSON, _ := cmd.Flags().GetBool("json")
	if err := task.ValidateTaskID(args[0]); err != nil {
		return Fail(ExitBadInput, err)
	}
	r, err := openRemote(cmd.Context(), app, "operator")
	if err != nil {
		return err
	}
	defer r.Close()
	v, _, err := r.c.Get(cmd.Context(), args[0])
	if err != nil {
		return remoteErr(err)
	}
	if asJSON {
		out := previewJSON(v.ApprovalView())
		out["executor"] = v.Executor
		if v.ExecutorID != "" {
			out["executor_id"] = v.ExecutorID
		}
		if v.Decision != nil {
			out["decided_by"] = v.Decision.By
		}
		if v.Result != nil {
			out["result"] = v.Result // signed by the executor's operator key
		}
		return app.PrintJSON(out)
	}
	writePreviewAt(app.Out, v.ApprovalView(), app.Now())
	return nil
}

func remoteErr(err error) error {
	if errors.Is(err, natsqueue.ErrNoTask) {
		return Fail(ExitBadInput, safeErr(err))
	}
	return Fail(ExitExecution, safeErr(err))
}

// remoteApprove approves over the shared queue: the preview_hash is the one
// --expect-preview names, else the one the prompt (or, with --yes, this
// host's read of the view) showed.
//
// [decisions] require_operator_key does not refuse it: on the shared queue
// the queue operator's credentials are the identity (the server lets only
// them publish a decision), and the executor records the decision via
// "queue", which its require_operator_key takes. Keeping those credentials
// out of an agent's account is the deployment's part (docs/protect.md).
func remoteApprove(cmd *cobra.Command, app *App, args []string) error {
	yes, _ := cmd.Flags().GetBool("yes")
	expect, _ := cmd.Flags().GetString("expect-preview")
	id := args[0]
	if err := task.ValidateTaskID(id); err != nil {
		return Fail(ExitBadInput, err)
	}
	if !yes {
		f, ok := app.In.(*os.File)
		if !ok || !term.IsTerminal(f.Fd()) {
			return Failf(ExitBadInput, "approve: stdin is not a terminal; pass --yes to approve %s", safetext.Line(id))
		}
	}
	r, err := openRemote(cmd.Context(), app, "operator")
	if err != nil {
		return err
	}
	defer r.Close()
	v, _, err := r.c.Get(cmd.Context(), id)
	if err != nil {
		return remoteErr(err)
	}
	hash := strings.TrimSpace(expect)
	if !yes {
		writePreviewAt(app.Err, v.ApprovalView(), app.Now())
		fmt.Fprintf(app.Err, "\nApprove %s? [y/N] ", safetext.Line(id))
		line, _ := bufio.NewReader(app.In).ReadString('\n')
		if a := strings.TrimSpace(strings.ToLower(line)); a != "y" && a != "yes" {
			fmt.Fprintln(app.Err, "not approved")
			return Quiet(ExitCheck)
		}
	}
	if hash == "" {
		hash = v.PreviewHash
	}
	return remoteDecide(cmd.Context(), app, r, id, natsqueue.Decision{Approve: true, PreviewHash: hash}, humanOut(cmd, app))
}

// remoteDeny denies over the shared queue.
func remoteDeny(cmd *cobra.Command, app *App, args []string) error {
	reason, _ := cmd.Flags().GetString("reason")
	if strings.TrimSpace(reason) == "" {
		return Failf(ExitBadInput, "--reason: must not be empty")
	}
	if err := task.CheckText(reason, approval.MaxReasonBytes); err != nil {
		return Failf(ExitBadInput, "--reason: %v", err)
	}
	if err := task.ValidateTaskID(args[0]); err != nil {
		return Fail(ExitBadInput, err)
	}
	r, err := openRemote(cmd.Context(), app, "operator")
	if err != nil {
		return err
	}
	defer r.Close()
	// masked here, as the local queue masks it: the bucket never holds
	// what the executor would not log
	return remoteDecide(cmd.Context(), app, r, args[0], natsqueue.Decision{Reason: preview.MaskString(reason)}, humanOut(cmd, app))
}

// remoteDecide makes the decision (compare-and-set), waits for the
// executor to apply it, and prints what a local decision prints (a
// sentence when human, cli/decided_human.go).
func remoteDecide(ctx context.Context, app *App, r *remote, id string, d natsqueue.Decision, human bool) error {
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	d.ID, d.By, d.At = hex.EncodeToString(nonce[:]), r.operatorName(app), app.Now().UTC()
	_, err := r.c.Decide(ctx, id, d)
	var lost *natsqueue.LostError
	switch {
	case errors.As(err, &lost):
		fmt.Fprintln(app.Err, "vigil: "+safetext.Line(lost.Error()))
		return Quiet(ExitCheck)
	case errors.Is(err, approval.ErrPreviewChanged):
		return app.printPreviewChanged(id, approval.Pending, err.Error())
	case err != nil:
		return remoteErr(err)
	}
	wctx, cancel := context.WithTimeout(ctx, remoteDecideWait)
	defer cancel()
	v, err := r.c.Outcome(wctx, id, d.ID)
	if errors.Is(err, context.DeadlineExceeded) {
		return Failf(ExitExecution, "the decision on %s is in the shared queue, but the executor has not applied it "+
			"within %s (is `vigil serve` running?); it will when it is back — `vigil preview %s` shows the outcome",
			safetext.Line(id), remoteDecideWait, safetext.Line(id))
	}
	if err != nil {
		return Fail(ExitExecution, err)
	}
	if v.Refused != nil && v.Refused.DecisionID == d.ID && v.Record.State == approval.Pending {
		if v.Refused.Code == "preview_changed" {
			return app.printPreviewChanged(id, v.Record.State, v.Refused.Shown())
		}
		fmt.Fprintln(app.Err, "vigil: the executor refused the decision: "+v.Refused.Shown())
		return Quiet(ExitCheck)
	}
	if v.Record.DecidedBy != d.By || (v.Record.State == approval.Denied) == d.Approve {
		lost := &natsqueue.LostError{TaskID: id, State: v.Record.State, By: v.Winner()}
		fmt.Fprintln(app.Err, "vigil: "+safetext.Line(lost.Error()))
		return Quiet(ExitCheck)
	}
	if human {
		fmt.Fprintln(app.Out, decidedLine(v.Record, v.Result))
		if v.Result != nil && v.Result.Status != task.StatusSuccess && d.Approve {
			return Quiet(ExitCheck)
		}
		return nil
	}
	if v.Result != nil {
		if err := app.PrintJSON(v.Result); err != nil {
			return err
		}
		if v.Result.Status != task.StatusSuccess && d.Approve {
			return Quiet(ExitCheck)
		}
		return nil
	}
	return app.PrintJSON(map[string]any{"task_id": id, "state": v.Record.State})
}

func (app *App) printPreviewChanged(id string, st approval.State, msg string) error {
	if err := app.PrintJSON(map[string]any{"task_id": id, "state": st,
		"error": task.Error{Code: task.ExecutionFailed, Message: msg}}); err != nil {
		return err
	}
	fmt.Fprintln(app.Err, "vigil: "+safetext.Line(msg))
	return Quiet(ExitCheck)
}
