package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
	"github.com/vigil-dev/vigil/safetext"
)

func readInput(app *App, arg string) ([]byte, error) {
	var r io.Reader
	if arg == "-" {
		r = app.In
	} else {
		f, err := os.Open(arg)
		if err != nil {
			return nil, Fail(ExitBadInput, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, task.MaxManifestBytes+1))
	if err != nil {
		return nil, Fail(ExitBadInput, err)
	}
	return b, nil
}

func newSubmitCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "submit FILE|-",
		Short: "Submit a task manifest: media tasks wait for approval, searches run at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if app.Cfg.Queue.Enabled() {
				return remoteSubmit(cmd, app, args) // [queue] url: the shared queue (cli/queue_remote.go)
			}
			raw, err := readInput(app, args[0])
			if err != nil {
				return err
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			out, err := eng.Queue.Submit(cmd.Context(), raw, "cli")
			if err != nil {
				return Fail(ExitExecution, err)
			}
			switch {
			case out.State == "rejected":
				if err := app.PrintJSON(map[string]any{"task_id": out.TaskID, "state": out.State, "error": out.Error}); err != nil {
					return err
				}
				return Quiet(ExitBadInput)
			case out.Result != nil:
				if err := app.PrintJSON(out.Result); err != nil {
					return err
				}
				if out.Result.Status != task.StatusSuccess {
					return Quiet(ExitCheck)
				}
				return nil
			}
			return app.PrintJSON(map[string]any{"task_id": out.TaskID, "state": out.State})
		},
	}
}

func newPendingCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pending",
		Short: "List tasks waiting for a decision, and damaged ones (picks up manifests dropped in the inbox first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if app.Cfg.Queue.Enabled() {
				return remotePending(cmd, app) // [queue] url: the shared queue (cli/queue_remote.go)
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			if _, err := eng.Queue.SweepInbox(cmd.Context()); err != nil {
				return Fail(ExitExecution, err)
			}
			list, err := eng.Queue.Pending()
			if err != nil {
				return Fail(ExitExecution, err)
			}
			if asJSON {
				out := make([]map[string]any, 0, len(list))
				for _, r := range list {
					out = append(out, pendingJSON(r))
				}
				return app.PrintJSON(out)
			}
			printPendingTable(app, list)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// printPendingTable is `pending`'s human output, local or shared queue alike:
// one row per task, every field shown display-safe.
func printPendingTable(app *App, list []approval.Record) {
	if len(list) == 0 {
		fmt.Fprintln(app.Out, "no pending tasks")
		return
	}
	now := app.Now()
	fmt.Fprintf(app.Out, "%-24s %-20s %-12s %-14s %-8s %s\n", "TASK", "AGENT", "CAPABILITY", "DEVICE", "AGE", "EXPIRES IN")
	for _, r := range list {
		if r.State == approval.Damaged {
			fmt.Fprintf(app.Out, "%-24s DAMAGED: %s\n", safetext.Line(r.TaskID), safetext.Line(r.Damage))
			continue
		}
		at, kind := r.Deadline()
		// the free-text columns are cut to their width: a value never carries
		// text into the next column (a sub holding spaces could paint a row
		// of its own); the task id stays whole, the handle `approve` takes,
		// and holds no space to forge one with (task.ValidateTaskID)
		// a secret-shaped id an agent chose (a token as its sub) is masked
		// like any text; an ordinary id comes back unchanged
		fmt.Fprintf(app.Out, "%-24s %s %s %s %-8s %s\n", safetext.Line(preview.MaskIdentifier(r.TaskID)),
			safetext.Cell(preview.MaskIdentifier(r.Agent), 20),
			safetext.Cell(r.CapabilityID, 12), safetext.Cell(r.Device, 14), shortDur(now.Sub(r.SubmittedAt)),
			kind+" expires in "+clockDur(at.Sub(now)))
	}
}

// pendingJSON is one task of `pending --json`: the record's fields, with
// expires_at the real deadline (the earlier of the approval timeout and the
// lease's exp), deadline_kind saying which, and approval_expires_at the
// approval timeout alone.
func pendingJSON(r approval.Record) map[string]any {
	out := map[string]any{}
	b, _ := json.Marshal(r)
	_ = json.Unmarshal(b, &out)
	if r.State != approval.Damaged {
		at, kind := r.Deadline()
		out["expires_at"] = at
		out["deadline_kind"] = kind
		out["approval_expires_at"] = r.ExpiresAt
	}
	return out
}

// clockDur is a countdown as m:ss (h:mm:ss past an hour); 0:00 once passed.
func clockDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	t := int(d.Round(time.Second).Seconds())
	if t >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
	}
	return fmt.Sprintf("%d:%02d", t/60, t%60)
}

func shortDur(d time.Duration) string {
	if d < 0 {
		return "0s"
	}
	d = d.Round(time.Second)
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// previewJSON is the preview command's JSON: seed 003's fields at the top
// level, plus what the approval binds to and the task it belongs to.
func previewJSON(v approval.View) map[string]any {
	out := map[string]any{}
	b, _ := json.Marshal(v.Preview)
	_ = json.Unmarshal(b, &out)
	out["preview_hash"] = v.BindingHash
	out["task"] = v.Record
	out["lease_valid"] = v.LeaseValid
	if v.LeaseError != "" {
		out["lease_error"] = v.LeaseError
	}
	at, kind := v.Record.Deadline()
	out["expires_at"], out["deadline_kind"] = at, kind
	if v.Problem != "" {
		out["problem"] = v.Problem
	}
	if len(v.Warnings) > 0 {
		out["warnings"] = v.Warnings
	}
	return out
}

// writePreview prints the preview as an HTTP request a person can read.
// Every field from outside goes through safetext: controls and invisible
// characters show as marked escapes, and their count is said.
func writePreview(w io.Writer, v approval.View) { writePreviewAt(w, v, time.Now()) }

// writePreviewAt is writePreview with the countdown measured from now.
func writePreviewAt(w io.Writer, v approval.View, now time.Time) {
	p := v.Preview
	hidden := safetext.Hidden(p.Method) + safetext.Hidden(p.URL) + safetext.Hidden(p.EstimatedEffect)
	fmt.Fprintf(w, "%s %s\n", safetext.Line(p.Method), safetext.Line(p.URL))
	keys := make([]string, 0, len(p.Headers))
	for k := range p.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		hidden += safetext.Hidden(k) + safetext.Hidden(p.Headers[k])
		fmt.Fprintf(w, "%s: %s\n", safetext.Line(k), safetext.Line(p.Headers[k]))
	}
	if p.Raw != "" {
		fmt.Fprintln(w)
		for _, l := range safetext.Lines(p.Raw) {
			fmt.Fprintln(w, l)
		}
		for _, l := range strings.Split(p.Raw, "\n") {
			hidden += safetext.Hidden(strings.TrimSuffix(l, "\r"))
		}
	}
	fmt.Fprintf(w, "\neffect:  %s\n", safetext.Line(p.EstimatedEffect))
	for _, warn := range safetext.URLWarnings(p.URL) {
		fmt.Fprintf(w, "url:     %s\n", warn)
	}
	for _, warn := range v.Warnings {
		fmt.Fprintf(w, "warning: %s\n", safetext.Line(warn))
	}
	r := v.Record
	hidden += writeTaskFields(w, r)
	if !v.LeaseValid {
		fmt.Fprintf(w, "lease:   NOT VALID — %s\n", safetext.Line(v.LeaseError))
	}
	if v.Problem != "" {
		fmt.Fprintf(w, "STORED REQUEST CHANGED — %s\n", safetext.Line(v.Problem))
	}
	if note := safetext.HiddenNote(hidden); note != "" {
		fmt.Fprintf(w, "note:    %s\n", note)
	}
	if r.State == approval.Pending {
		at, kind := r.Deadline()
		fmt.Fprintf(w, "decide by %s (%s expires in %s)\n", at.Format(time.RFC3339), kind, clockDur(at.Sub(now)))
	} else {
		fmt.Fprintf(w, "state:   %s\n", r.State)
	}
	fmt.Fprintf(w, "preview_hash: %s\n", v.BindingHash)
}

// previewFieldWidth is how many cells of an agent's value the preview's
// task fields show: room for any real name, too little to paint a second
// field after it.
const previewFieldWidth = 48

// writeTaskFields prints who asked for what, one labelled line per field,
// and returns how many hidden characters they hold. The values come from
// the agent (its lease's sub and jti, its manifest's capability and
// device): each is shown display-safe and cut, on a line of its own, so
// none can paint another field (an agent named "x, lease jti …, lease
// expires 2099…" once forged the rest of a one-line summary). A valid
// task id is the handle `approve` takes and stays whole.
func writeTaskFields(w io.Writer, r approval.Record) int {
	// ids the agent chose are masked when secret-shaped (a pasted key used
	// as a task id, a sub that is a bearer token) before they are cut
	masked := preview.MaskIdentifier(r.TaskID)
	id := safetext.Line(masked)
	if masked != r.TaskID || task.ValidateTaskID(r.TaskID) != nil {
		id = cutLine(masked, previewFieldWidth)
	}
	fmt.Fprintf(w, "task:    %s\n", id)
	fmt.Fprintf(w, "agent:   %s\n", cutLine(preview.MaskIdentifier(r.Agent), previewFieldWidth))
	fmt.Fprintf(w, "action:  %s\n", cutLine(r.CapabilityID, previewFieldWidth))
	if r.Device != "" {
		fmt.Fprintf(w, "device:  %s\n", cutLine(r.Device, previewFieldWidth))
	}
	// what Vigil knows comes first on a line, the agent's value last
	fmt.Fprintf(w, "lease:   expires %s, jti %s\n", r.LeaseExpires.Format(time.RFC3339),
		cutLine(preview.MaskIdentifier(r.TokenJTI), previewFieldWidth))
	return safetext.Hidden(r.TaskID) + safetext.Hidden(r.Agent) + safetext.Hidden(r.CapabilityID) +
		safetext.Hidden(r.Device) + safetext.Hidden(r.TokenJTI)
}

func newPreviewCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "preview TASK_ID",
		Short: "Show the masked HTTP-style preview of a task's exact request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if app.Cfg.Queue.Enabled() {
				return remotePreview(cmd, app, args) // [queue] url: the shared queue (cli/queue_remote.go)
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			v, err := eng.Queue.Preview(cmd.Context(), args[0])
			if errors.Is(err, approval.ErrDamaged) {
				if asJSON {
					if err := app.PrintJSON(map[string]any{"task": v.Record, "state": v.Record.State, "damage": v.Record.Damage}); err != nil {
						return err
					}
					return Quiet(ExitCheck)
				}
				return Failf(ExitCheck, "task %s is damaged: %s", safetext.Line(v.Record.TaskID), safetext.Line(v.Record.Damage))
			}
			if err != nil {
				return taskErr(err)
			}
			if asJSON {
				return app.PrintJSON(previewJSON(v))
			}
			writePreviewAt(app.Out, v, app.Now())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func taskErr(err error) error {
	var te *task.Error
	switch {
	case errors.Is(err, approval.ErrDamaged):
		return Fail(ExitCheck, safeErr(err))
	case errors.Is(err, approval.ErrNotFound), errors.As(err, &te):
		return Fail(ExitBadInput, safeErr(err))
	}
	return Fail(ExitExecution, safeErr(err))
}

// safeErr shows an error's text through safetext (it may quote a task id or
// a device's answer).
func safeErr(err error) error { return errors.New(safetext.Line(err.Error())) }

// decide runs a decision and prints its outcome: the result when there is
// one, and the exit code CLI.md gives (1 when the task failed, lost the
// race, or the request changed since the preview).
//
// On a terminal without --json (human) the outcome is one sentence
// (decidedLine); piped, or with --json, the JSON below, unchanged.
func decide(ctx context.Context, app *App, eng *Engine, id string, d approval.Decision, human bool) error {
	rec, res, err := eng.Queue.Decide(ctx, id, d)
	if human {
		return decideForPerson(app, id, rec, res, err, d)
	}
	var de *approval.DecidedError
	switch {
	case errors.As(err, &de):
		fmt.Fprintln(app.Err, "vigil: "+safetext.Line(de.Error()))
		return Quiet(ExitCheck)
	case errors.Is(err, approval.ErrPreviewChanged):
		// nothing ran, nothing changed: the agent-facing shape of a refusal
		if perr := app.PrintJSON(map[string]any{"task_id": id, "state": rec.State,
			"error": task.Error{Code: task.ExecutionFailed, Message: err.Error()}}); perr != nil {
			return perr
		}
		fmt.Fprintln(app.Err, "vigil: "+safetext.Line(err.Error()))
		return Quiet(ExitCheck)
	case errors.Is(err, approval.ErrTampered):
		if res != nil {
			if perr := app.PrintJSON(res); perr != nil {
				return perr
			}
		}
		fmt.Fprintln(app.Err, "vigil: "+safetext.Line(err.Error()))
		return Quiet(ExitCheck)
	case err != nil:
		return taskErr(err)
	}
	if res != nil {
		if err := app.PrintJSON(res); err != nil {
			return err
		}
		if res.Status != task.StatusSuccess && d.Approve {
			return Quiet(ExitCheck)
		}
		return nil
	}
	return app.PrintJSON(map[string]any{"task_id": rec.TaskID, "state": rec.State})
}

func newApproveCmd(app *App) *cobra.Command {
	var yes, asJSON bool
	var expect string
	cmd := &cobra.Command{
		Use:   "approve TASK_ID [TASK_ID…] [--yes] [--expect-preview HASH]",
		Short: "Approve pending tasks (asks y/N on a terminal unless --yes) and run each once",
		Long: "Approves what the person saw: --expect-preview HASH (the preview_hash `vigil preview` prints) refuses " +
			"the approval, exit 1, when the stored request no longer previews to HASH. Without it, the y/N prompt " +
			"approves the preview it showed, and --yes the stored request.\n\n" +
			"With several task ids: a summary table of all of them, then one y/N; each is bound to the preview hash " +
			"read for it before the prompt, a task whose preview has any warning is left out (approve it alone), " +
			"and a task that changed or was decided meanwhile is reported while the others proceed. stdout is a JSON " +
			"array with one outcome per task; exit 1 names each task not approved. --expect-preview is refused (exit 2).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return approveMany(cmd, app, args, yes, expect) // several at once (cli/approvals_batch.go)
			}
			if app.Cfg.Queue.Enabled() {
				return remoteApprove(cmd, app, args) // [queue] url: the shared queue (cli/queue_remote.go)
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			id := args[0]
			d := app.decision(true, approval.ViaCLI)
			d.PreviewHash = strings.TrimSpace(expect)
			if why := decisionsRefused(app, eng, d); why != "" {
				return Failf(ExitCheck, "approve: %s", why) // before any prompt: answering it could only fail
			}
			if !yes {
				f, ok := app.In.(*os.File)
				if !ok || !term.IsTerminal(f.Fd()) {
					return Failf(ExitBadInput, "approve: stdin is not a terminal; pass --yes to approve %s", safetext.Line(id))
				}
				v, err := eng.Queue.Preview(cmd.Context(), id)
				if err != nil {
					return taskErr(err)
				}
				writePreviewAt(app.Err, v, app.Now())
				fmt.Fprintf(app.Err, "\nApprove %s? [y/N] ", safetext.Line(id))
				line, _ := bufio.NewReader(app.In).ReadString('\n')
				if a := strings.TrimSpace(strings.ToLower(line)); a != "y" && a != "yes" {
					fmt.Fprintln(app.Err, "not approved")
					return Quiet(ExitCheck)
				}
				if d.PreviewHash == "" {
					d.PreviewHash = v.BindingHash // what the prompt showed
				}
			}
			return decide(cmd.Context(), app, eng, id, d, decidedForPerson(app, asJSON))
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (the default when stdout is not a terminal)")
	cmd.Flags().StringVar(&expect, "expect-preview", "", "refuse unless the stored request still previews to this `HASH` (preview_hash)")
	return cmd
}

func newDenyCmd(app *App) *cobra.Command {
	var reason string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "deny TASK_ID --reason R",
		Short: "Deny a pending task with a reason the agent gets back",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if app.Cfg.Queue.Enabled() {
				return remoteDeny(cmd, app, args) // [queue] url: the shared queue (cli/queue_remote.go)
			}
			if strings.TrimSpace(reason) == "" {
				return Failf(ExitBadInput, "--reason: must not be empty")
			}
			if err := task.CheckText(reason, approval.MaxReasonBytes); err != nil {
				return Failf(ExitBadInput, "--reason: %v", err)
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			d := app.decision(false, approval.ViaCLI)
			d.Reason = reason
			if why := decisionsRefused(app, eng, d); why != "" {
				return Failf(ExitCheck, "deny: %s", why)
			}
			return decide(cmd.Context(), app, eng, args[0], d, decidedForPerson(app, asJSON))
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (the default when stdout is not a terminal)")
	return cmd
}

func newResultCmd(app *App) *cobra.Command {
	var wait time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "result TASK_ID",
		Short: "Print a task's signed result (exit 1 when it failed, was denied or expired)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := task.ValidateTaskID(id); err != nil {
				return Fail(ExitBadInput, err)
			}
			if app.Cfg.Queue.Enabled() {
				return remoteResult(cmd, app, id, wait) // [queue] url: the shared queue (cli/queue_result.go)
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			deadline := time.Now().Add(wait)
			for {
				rec, gerr := eng.Queue.Get(id)
				switch {
				case errors.Is(gerr, approval.ErrDamaged):
					return Failf(ExitCheck, "task %s is damaged: %s", safetext.Line(id), safetext.Line(rec.Damage))
				case gerr != nil && !errors.Is(gerr, approval.ErrNotFound):
					return Fail(ExitExecution, safeErr(gerr))
				}
				res, err := eng.Queue.Result(id) // checked to answer this task's request
				if errors.Is(err, task.ErrNotThisTask) {
					return Failf(ExitCheck, "%s; refusing it", safeErr(err))
				}
				if err == nil {
					// an agent takes what is printed as Vigil's answer: a
					// stored result the operator key did not sign is not it
					if verr := task.Verify(res, eng.Signer.Public()); verr != nil {
						return Failf(ExitCheck, "task %s: the stored result does not verify with the operator key (%s); "+
							"it was altered or is not Vigil's", safetext.Line(id), safetext.Line(verr.Error()))
					}
					if decidedForPerson(app, asJSON) {
						for _, l := range resultLines(rec, gerr == nil, res) {
							fmt.Fprintln(app.Out, l)
						}
					} else {
						if err := app.PrintJSON(res); err != nil {
							return err
						}
						if gerr == nil {
							fmt.Fprintln(app.Err, outcomeLine(rec))
						}
					}
					if res.Status != task.StatusSuccess {
						return Quiet(ExitCheck)
					}
					return nil
				}
				if !errors.Is(err, task.ErrNotFound) {
					return Fail(ExitExecution, err)
				}
				if !time.Now().Before(deadline) {
					rec, gerr := eng.Queue.Get(id)
					if gerr != nil {
						return Failf(ExitBadInput, "task %s: no such task", id)
					}
					return Failf(ExitCheck, "task %s has no result yet (state %s)", id, rec.State)
				}
				select {
				case <-cmd.Context().Done():
					return Fail(ExitExecution, cmd.Context().Err())
				case <-time.After(100 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to `DURATION` for the result")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (the default when stdout is not a terminal)")
	cmd.AddCommand(newResultVerifyCmd(app))
	return cmd
}

// outcomeLine is the decision behind a result, for a person (stderr of
// `vigil result`): the same facts the TUI's decided list shows.
func outcomeLine(r approval.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task %s: %s", safetext.Line(r.TaskID), r.State)
	if r.DecidedBy != "" {
		fmt.Fprintf(&b, " — decided by %s", safetext.Line(r.Decider()))
		if r.DecidedVia != "" && r.DecidedVia != approval.ViaRule {
			fmt.Fprintf(&b, " via %s", safetext.Line(r.DecidedVia))
		}
		if r.DecidedAt != nil {
			fmt.Fprintf(&b, " at %s", r.DecidedAt.Format(time.RFC3339))
		}
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "; reason: %s", safetext.Line(r.Reason))
	}
	if r.Error != nil && r.State != approval.Denied {
		fmt.Fprintf(&b, "; %s: %s", r.Error.Code, safetext.Line(r.Error.Message))
	}
	if r.FinishedAt != nil {
		fmt.Fprintf(&b, "; finished %s", r.FinishedAt.Format(time.RFC3339))
	}
	return b.String()
}
