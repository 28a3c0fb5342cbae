package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/safetext"
)

// decidedForPerson reports whether approve, deny and result print a
// sentence instead of JSON: stdout is a terminal and --json was not asked.
// Piped or redirected, the output is the JSON agents and scripts have
// always read, byte for byte (CLI.md).
func decidedForPerson(app *App, asJSON bool) bool {
	if asJSON {
		return false
	}
	f, ok := app.Out.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// humanOut is decidedForPerson for a command with a --json flag.
func humanOut(cmd *cobra.Command, app *App) bool {
	asJSON, _ := cmd.Flags().GetBool("json")
	return decidedForPerson(app, asJSON)
}

// decidedLine says what a decision did, in a person's words:
// "t1 approved by operator:ada and executed: SUCCESS (signed result saved)",
// "t1 denied by operator:ada: not now". Every value from outside (the task
// id, the decider, a reason, a device's error) goes through safetext.
func decidedLine(rec approval.Record, res *task.Result) string {
	var b strings.Builder
	b.WriteString(safetext.Line(rec.TaskID))
	by := ""
	if rec.DecidedBy != "" {
		by = " by " + safetext.Line(rec.Decider())
	}
	switch rec.State {
	case approval.Denied:
		fmt.Fprintf(&b, " denied%s", by)
		if rec.Reason != "" {
			fmt.Fprintf(&b, ": %s", safetext.Line(rec.Reason))
		}
	case approval.Pending:
		b.WriteString(" is still pending")
	case approval.Expired:
		b.WriteString(" expired before anyone decided")
	case approval.Tampered:
		b.WriteString(" was not run: its stored request was altered after it was submitted")
	default:
		if rec.DecidedBy != "" {
			fmt.Fprintf(&b, " approved%s and", by)
		}
		if res == nil {
			fmt.Fprintf(&b, " %s", rec.State)
			break
		}
		fmt.Fprintf(&b, " executed: %s", safetext.Line(res.Status))
		if res.Error != nil {
			fmt.Fprintf(&b, ", %s: %s", safetext.Line(string(res.Error.Code)), safetext.Line(res.Error.Message))
		}
	}
	if res != nil && res.Signature != nil {
		b.WriteString(" (signed result saved)")
	}
	return b.String()
}

// resultLines is `vigil result` for a person: the outcome sentence, when
// it was decided and finished, and the result's output (display-safe).
func resultLines(rec approval.Record, known bool, res *task.Result) []string {
	if !known { // a result without its record: what the result alone says
		rec = approval.Record{TaskID: res.TaskID, State: approval.Done}
	}
	out := []string{decidedLine(rec, res)}
	if known && rec.DecidedAt != nil {
		when := "decided " + humanTime(*rec.DecidedAt)
		if rec.DecidedVia != "" && rec.DecidedVia != approval.ViaRule {
			when += " via " + safetext.Line(rec.DecidedVia)
		}
		out = append(out, when)
	}
	if res.ExecutedAt != "" {
		out = append(out, "executed "+safetext.Line(res.ExecutedAt))
	}
	var compact bytes.Buffer
	if json.Compact(&compact, res.Output) == nil {
		if o := compact.String(); o != "null" && o != "{}" {
			out = append(out, "output: "+safetext.Line(o))
		}
	}
	return out
}

// humanTime is a moment for a person: RFC 3339 to the second, no
// nanoseconds.
func humanTime(t time.Time) string { return t.Format(time.RFC3339) }

// decideForPerson is decide's outcome on a terminal: the same exit codes,
// a sentence on stdout for what happened, the refusal on stderr.
func decideForPerson(app *App, id string, rec approval.Record, res *task.Result, err error, d approval.Decision) error {
	var de *approval.DecidedError
	switch {
	case errors.As(err, &de):
		fmt.Fprintln(app.Err, "vigil: "+safetext.Line(de.Error()))
		return Quiet(ExitCheck)
	case errors.Is(err, approval.ErrPreviewChanged):
		fmt.Fprintf(app.Err, "vigil: %s not approved: %s\n", safetext.Line(id), safetext.Line(err.Error()))
		return Quiet(ExitCheck)
	case errors.Is(err, approval.ErrTampered):
		if res != nil {
			fmt.Fprintln(app.Out, decidedLine(rec, res))
		}
		fmt.Fprintln(app.Err, "vigil: "+safetext.Line(err.Error()))
		return Quiet(ExitCheck)
	case err != nil:
		return taskErr(err)
	}
	fmt.Fprintln(app.Out, decidedLine(rec, res))
	if res != nil && res.Status != task.StatusSuccess && d.Approve {
		return Quiet(ExitCheck)
	}
	return nil
}
