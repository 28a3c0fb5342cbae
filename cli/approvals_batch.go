package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	"github.com/vigil-dev/vigil/safetext"
)

// batchItem is one task of `vigil approve ID ID…`: what its summary row
// showed (the preview hash its approval binds to, its warnings) and, once
// decided, its outcome. It is also the task's entry in the JSON array the
// command prints.
type batchItem struct {
	TaskID   string `json:"task_id"`
	Approved bool   `json:"approved"` // this command's approval was recorded
	State    string `json:"state,omitempty"`
	// PreviewHash is the preview_hash the summary showed and the approval
	// named; "" when the task could not be previewed.
	PreviewHash string   `json:"preview_hash,omitempty"`
	MediaHost   string   `json:"media_host,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	// Why says why the task was not approved, or why it failed once
	// approved; "" when it ran successfully.
	Why    string       `json:"why,omitempty"`
	Result *task.Result `json:"result,omitempty"` // the signed result, when there is one

	rec      approval.Record
	excluded string // why the summary leaves it out, "" when it is approved
}

// ok reports whether the task was approved and ran successfully.
func (b batchItem) ok() bool {
	return b.Approved && b.Why == "" && (b.Result == nil || b.Result.Status == task.StatusSuccess)
}

// approveMany is `vigil approve ID ID…`: every task's preview is read (its
// hash is what its approval names), a summary table is shown on a terminal
// with one confirmation, then each task without a warning is approved in
// turn. A task with any preview warning is never approved with others
// (approve it alone, after reading its preview); one that changed or was
// decided meanwhile is reported and the others proceed. The JSON array of
// per-task outcomes goes to stdout; exit 1 names each task not approved.
func approveMany(cmd *cobra.Command, app *App, ids []string, yes bool, expect string) error {
	if strings.TrimSpace(expect) != "" {
		return Failf(ExitBadInput, "approve: --expect-preview names the preview of one task; with several task ids, "+
			"each is bound to the preview the summary shows (or, with --yes, the one read when the command starts)")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if err := task.ValidateTaskID(id); err != nil {
			return Fail(ExitBadInput, err)
		}
		if seen[id] {
			return Failf(ExitBadInput, "approve: task %s is named twice", safetext.Line(id))
		}
		seen[id] = true
	}
	if app.Cfg.Queue.Enabled() {
		return Failf(ExitBadInput, "approve: several task ids at once work on this home's queue only; with [queue] url, approve them one at a time")
	}
	eng, err := app.Engine(cmd.Context())
	if err != nil {
		return err
	}
	d := app.decision(true, approval.ViaCLI)
	if why := decisionsRefused(app, eng, d); why != "" {
		return Failf(ExitCheck, "approve: %s", why) // before the summary: answering it could only fail
	}
	if !yes {
		f, ok := app.In.(*os.File)
		if !ok || !term.IsTerminal(f.Fd()) {
			return Failf(ExitBadInput, "approve: stdin is not a terminal; pass --yes to approve %d tasks", len(ids))
		}
	}
	items := readBatch(cmd.Context(), eng.Queue, ids)
	if !yes && !confirmBatch(app, items) {
		fmt.Fprintln(app.Err, "not approved")
		return Quiet(ExitCheck)
	}
	for i := range items {
		if items[i].excluded != "" {
			items[i].Why = items[i].excluded
			continue
		}
		d.PreviewHash = items[i].PreviewHash
		items[i].decide(eng.Queue.Decide(cmd.Context(), items[i].TaskID, d))
	}
	if err := app.PrintJSON(items); err != nil {
		return err
	}
	failed := false
	for _, it := range items {
		switch {
		case it.ok():
		case it.Approved:
			failed = true
			fmt.Fprintf(app.Err, "vigil: %s was approved and failed: %s\n", safetext.Line(it.TaskID), safetext.Line(it.Why))
		default:
			failed = true
			fmt.Fprintf(app.Err, "vigil: %s not approved: %s\n", safetext.Line(it.TaskID), safetext.Line(it.Why))
		}
	}
	if failed {
		return Quiet(ExitCheck)
	}
	return nil
}

// readBatch reads each task's preview: the hash its approval will name,
// its media host and warnings, and whether it is left out.
func readBatch(ctx context.Context, q approval.Decider, ids []string) []batchItem {
	items := make([]batchItem, 0, len(ids))
	for _, id := range ids {
		v, err := q.Preview(ctx, id)
		it := batchItem{TaskID: id, rec: v.Record, State: string(v.Record.State)}
		switch {
		case err != nil:
			it.excluded = "cannot be previewed: " + safetext.Line(err.Error())
		default:
			it.PreviewHash, it.MediaHost, it.Warnings = v.BindingHash, approvalspane.MediaHost(v), approvalspane.BatchWarnings(v)
			switch {
			case v.Record.State != approval.Pending:
				it.excluded = "not pending (" + safetext.Line(string(v.Record.State)) + ")"
			case len(it.Warnings) > 0:
				it.excluded = "its preview has a warning: approve it alone, after reading it (vigil preview " + safetext.Line(id) + ")"
			}
		}
		items = append(items, it)
	}
	return items
}

// decide takes a Decide's answer: a task that changed or was decided
// meanwhile says so and the batch goes on.
func (b *batchItem) decide(rec approval.Record, res *task.Result, err error) {
	if rec.State != "" {
		b.State = string(rec.State)
	}
	b.Result = res
	var de *approval.DecidedError
	var lost *approval.LostError
	switch {
	case err == nil:
		b.Approved = true
		if res != nil && res.Status != task.StatusSuccess && res.Error != nil {
			b.Why = string(res.Error.Code) + ": " + res.Error.Message
		}
	case errors.As(err, &de):
		b.State, b.Why = string(de.State), "decided meanwhile: "+de.Error()
	case errors.As(err, &lost):
		b.State, b.Why = string(lost.State), "decided meanwhile: "+lost.Error()
	case errors.Is(err, approval.ErrPreviewChanged):
		b.Why = "the request changed since the summary: " + err.Error()
	case errors.Is(err, approval.ErrTampered):
		b.State, b.Why = string(approval.Tampered), "the stored request changed since the summary: "+err.Error()
	default:
		b.Why = err.Error()
	}
}

// confirmBatch shows the summary on stderr and asks once; true on y. With
// nothing to approve it says so and asks nothing.
func confirmBatch(app *App, items []batchItem) bool {
	n := writeBatchSummary(app.Err, items)
	if n == 0 {
		fmt.Fprintln(app.Err, "\nnothing to approve: every task is excluded")
		return false
	}
	fmt.Fprintf(app.Err, "\nApprove these %d of %d tasks, each bound to the preview shown for it? [y/N] ", n, len(items))
	line, _ := bufio.NewReader(app.In).ReadString('\n')
	a := strings.TrimSpace(strings.ToLower(line))
	return a == "y" || a == "yes"
}

// writeBatchSummary prints one row per task — agent, capability, device,
// media host, the preview hash its approval names, its warnings — with an
// excluded task's warnings and why under its row; every field from outside
// through safetext, cut to its column. It returns how many are approvable.
func writeBatchSummary(w io.Writer, items []batchItem) int {
	fmt.Fprintf(w, "  %-24s %-20s %-12s %-14s %-24s %-12s %s\n", "TASK", "AGENT", "CAPABILITY", "DEVICE", "MEDIA HOST", "PREVIEW", "WARNINGS")
	n := 0
	for _, it := range items {
		mark, warn := "✓", "none"
		if it.excluded != "" {
			mark = "✗"
		} else {
			n++
		}
		if len(it.Warnings) > 0 {
			warn = fmt.Sprintf("⚠ %d", len(it.Warnings))
		}
		host, hash := it.MediaHost, it.PreviewHash
		if host == "" {
			host = "—"
		}
		if len(hash) > 12 {
			hash = hash[:12]
		}
		fmt.Fprintf(w, "%s %s %s %s %s %s %-12s %s\n", mark, safetext.Cell(it.TaskID, 24), safetext.Cell(it.rec.Agent, 20),
			safetext.Cell(it.rec.CapabilityID, 12), safetext.Cell(it.rec.Device, 14), safetext.Cell(host, 24), safetext.Line(hash), warn)
		for _, wmsg := range it.Warnings {
			fmt.Fprintf(w, "    ⚠ %s\n", safetext.Line(wmsg))
		}
		if it.excluded != "" {
			fmt.Fprintf(w, "    excluded: %s\n", it.excluded)
		}
	}
	return n
}
