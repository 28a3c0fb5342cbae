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
		Short: "List tasks waiting for a decision (picks up manifests dropped in the inbox first)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
				if list == nil {
					list = []approval.Record{}
				}
				return app.PrintJSON(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(app.Out, "no pending tasks")
				return nil
			}
			now := app.Now()
			fmt.Fprintf(app.Out, "%-24s %-20s %-12s %-14s %-8s %s\n", "TASK", "AGENT", "CAPABILITY", "DEVICE", "AGE", "EXPIRES IN")
			for _, r := range list {
				fmt.Fprintf(app.Out, "%-24s %-20s %-12s %-14s %-8s %s\n", r.TaskID, r.Agent, r.CapabilityID, r.Device,
					shortDur(now.Sub(r.SubmittedAt)), shortDur(r.ExpiresAt.Sub(now)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
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
	return out
}

// writePreview prints the preview as an HTTP request a person can read.
func writePreview(w io.Writer, v approval.View) {
	p := v.Preview
	fmt.Fprintf(w, "%s %s\n", p.Method, p.URL)
	keys := make([]string, 0, len(p.Headers))
	for k := range p.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s: %s\n", k, p.Headers[k])
	}
	if p.Raw != "" {
		fmt.Fprintf(w, "\n%s\n", p.Raw)
	}
	fmt.Fprintf(w, "\neffect:  %s\n", p.EstimatedEffect)
	r := v.Record
	fmt.Fprintf(w, "task:    %s (%s) from %s, lease jti %s, expires %s\n", r.TaskID, r.CapabilityID, r.Agent, r.TokenJTI,
		r.LeaseExpires.Format(time.RFC3339))
	if !v.LeaseValid {
		fmt.Fprintf(w, "lease:   NOT VALID — %s\n", v.LeaseError)
	}
	fmt.Fprintf(w, "decide by %s · preview %s\n", r.ExpiresAt.Format(time.RFC3339), v.BindingHash)
}

func newPreviewCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "preview TASK_ID",
		Short: "Show the masked HTTP-style preview of a task's exact request",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			v, err := eng.Queue.Preview(cmd.Context(), args[0])
			if err != nil {
				return taskErr(err)
			}
			if asJSON {
				return app.PrintJSON(previewJSON(v))
			}
			writePreview(app.Out, v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func taskErr(err error) error {
	var te *task.Error
	switch {
	case errors.Is(err, approval.ErrNotFound), errors.As(err, &te):
		return Fail(ExitBadInput, err)
	}
	return Fail(ExitExecution, err)
}

// decide runs a decision and prints its outcome: the result when there is
// one, and the exit code CLI.md gives (1 when the task failed or lost the race).
func decide(ctx context.Context, app *App, eng *Engine, id string, d approval.Decision) error {
	rec, res, err := eng.Queue.Decide(ctx, id, d)
	var de *approval.DecidedError
	switch {
	case errors.As(err, &de):
		fmt.Fprintln(app.Err, "vigil: "+de.Error())
		return Quiet(ExitCheck)
	case errors.Is(err, approval.ErrPreviewChanged):
		return Fail(ExitCheck, err)
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
	var yes bool
	cmd := &cobra.Command{
		Use:   "approve TASK_ID",
		Short: "Approve a pending task (asks y/N on a terminal unless --yes) and run it once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			id := args[0]
			v, err := eng.Queue.Preview(cmd.Context(), id)
			if err != nil {
				return taskErr(err)
			}
			if !yes {
				f, ok := app.In.(*os.File)
				if !ok || !term.IsTerminal(f.Fd()) {
					return Failf(ExitBadInput, "approve: stdin is not a terminal; pass --yes to approve %s", id)
				}
				writePreview(app.Err, v)
				fmt.Fprintf(app.Err, "\nApprove %s? [y/N] ", id)
				line, _ := bufio.NewReader(app.In).ReadString('\n')
				if a := strings.TrimSpace(strings.ToLower(line)); a != "y" && a != "yes" {
					fmt.Fprintln(app.Err, "not approved")
					return Quiet(ExitCheck)
				}
			}
			return decide(cmd.Context(), app, eng, id, approval.Decision{Approve: true, By: app.Operator(), PreviewHash: v.BindingHash})
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve without asking")
	return cmd
}

func newDenyCmd(app *App) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "deny TASK_ID --reason R",
		Short: "Deny a pending task with a reason the agent gets back",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(reason) == "" {
				return Failf(ExitBadInput, "--reason: must not be empty")
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			return decide(cmd.Context(), app, eng, args[0], approval.Decision{Approve: false, By: app.Operator(), Reason: reason})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (required)")
	return cmd
}

func newResultCmd(app *App) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "result TASK_ID",
		Short: "Print a task's signed result (exit 1 when it failed, was denied or expired)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if err := task.ValidateTaskID(id); err != nil {
				return Fail(ExitBadInput, err)
			}
			eng, err := app.Engine(cmd.Context())
			if err != nil {
				return err
			}
			deadline := time.Now().Add(wait)
			for {
				if _, err := eng.Queue.Get(id); err != nil && !errors.Is(err, approval.ErrNotFound) {
					return Fail(ExitExecution, err)
				}
				res, err := eng.Results.Load(id)
				if err == nil {
					if err := app.PrintJSON(res); err != nil {
						return err
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
	cmd.AddCommand(newResultVerifyCmd(app))
	return cmd
}
