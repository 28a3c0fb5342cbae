package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

// newResultVerifyCmd is `vigil result verify FILE`: it checks a result's
// Ed25519 signature with the operator's public key. Exit 0 when it verifies,
// 1 when it does not, 2 when FILE is not a result, 3 when the key is missing.
func newResultVerifyCmd(app *App) *cobra.Command {
	var keyPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check a result's signature with the operator's public key (FILE or - for stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keyPath == "" {
				keyPath = filepath.Join(app.Paths.Keys, lease.OperatorPubFile)
			}
			pub, err := task.LoadPublicKey(keyPath)
			if errors.Is(err, os.ErrNotExist) {
				return Failf(ExitExecution, "--key: %s does not exist; run `vigil keys init` first", keyPath)
			}
			if err != nil {
				return Fail(ExitExecution, err)
			}
			var data []byte
			if args[0] == "-" {
				data, err = io.ReadAll(io.LimitReader(app.In, task.MaxResultBytes+1))
			} else {
				data, err = readLimited(args[0], task.MaxResultBytes+1)
			}
			if err != nil {
				return Fail(ExitBadInput, err)
			}
			r, err := task.ParseResult(data)
			if err != nil {
				return Fail(ExitBadInput, fmt.Errorf("%s: %w", args[0], err))
			}
			verr := task.Verify(r, pub)
			if asJSON {
				out := map[string]any{"valid": verr == nil, "task_id": r.TaskID, "capability_id": r.CapabilityID,
					"status": r.Status, "key_id": task.KeyID(pub)}
				if verr != nil {
					out["error"] = verr.Error()
				}
				if err := app.PrintJSON(out); err != nil {
					return err
				}
				if verr != nil {
					return Quiet(ExitCheck)
				}
				return nil
			}
			if verr != nil {
				return Fail(ExitCheck, fmt.Errorf("%s: %w", args[0], verr))
			}
			fmt.Fprintf(app.Out, "OK: %s (%s, %s) signed by %s\n", r.TaskID, r.CapabilityID, r.Status, r.Signature.KeyID)
			return nil
		},
	}
	cmd.Flags().StringVar(&keyPath, "key", "", "the operator's public key (default keys/operator.pub.pem)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"valid":…} as JSON`)
	return cmd
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
