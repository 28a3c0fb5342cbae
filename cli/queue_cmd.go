package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/safetext"
)

// newQueueCmd is `vigil queue`: the shared queue's own commands.
func newQueueCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "The shared queue on NATS JetStream ([queue] url; docs/queue.md)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newQueueAuditPullCmd(app))
	return cmd
}

func newQueueAuditPullCmd(app *App) *cobra.Command {
	var asJSON bool
	var executor string
	cmd := &cobra.Command{
		Use:   "audit-pull DIR",
		Short: "Copy the executor's audit log from the VIGIL_AUDIT stream into DIR/audit.log",
		Long: "Writes every line the executor published, byte for byte, to DIR/audit.log (and the head anchor\n" +
			"`vigil audit verify` expects). Check the copy against a checkpoint the executor signed:\n" +
			"  vigil --home DIR audit verify --checkpoint FILE --key operator.pub.pem\n" +
			"With several executors (one per device set), name one with --executor: the id of its result-signing\n" +
			"key (ed25519:…), as the error listing them says.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !app.Cfg.Queue.Enabled() {
				return Failf(ExitBadInput, "queue.url: not set in %s; audit-pull reads the shared queue", app.Paths.Config)
			}
			r, err := openRemote(cmd.Context(), app, "operator")
			if err != nil {
				return err
			}
			defer r.Close()
			var buf bytes.Buffer
			var n int
			if executor != "" {
				n, err = natsqueue.PullExecutorAudit(cmd.Context(), r.js, executor, &buf)
			} else {
				n, err = natsqueue.PullAudit(cmd.Context(), r.js, &buf)
			}
			if errors.Is(err, natsqueue.ErrSeveralExecutors) {
				return Failf(ExitBadInput, "--executor: %s", safetext.Line(err.Error()))
			}
			if err != nil {
				return Fail(ExitExecution, err)
			}
			if err := os.MkdirAll(args[0], 0o700); err != nil {
				return Fail(ExitExecution, err)
			}
			if err := natsqueue.WriteAuditCopy(args[0], buf.Bytes()); err != nil {
				return Fail(ExitExecution, err)
			}
			if asJSON {
				return app.PrintJSON(map[string]any{"entries": n, "dir": args[0]})
			}
			fmt.Fprintf(app.Out, "%s copied to %s\n", plural(n, "entry", "entries"), safetext.Line(args[0]))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"entries","dir"}`)
	cmd.Flags().StringVar(&executor, "executor", "", "the executor whose log to copy (its key id; needed when there are several)")
	return cmd
}
