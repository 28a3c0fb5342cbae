package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/lease"
)

// newLeaseCmd is `vigil lease` with its `issue` subcommand.
func newLeaseCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "lease", Short: "Issue lease tokens with the local issuer key", Args: cobra.NoArgs}
	cmd.AddCommand(newLeaseIssueCmd(app))
	return cmd
}

func newLeaseIssueCmd(app *App) *cobra.Command {
	var o lease.IssueOptions
	var keyPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "issue --sub AGENT --task-id ID --cap CAP... [--device D...] [--ttl 10m]",
		Short: "Print a lease JWT signed by the local issuer key",
		Long: "Signs a lease for one task with keys/issuer.key.pem (made by `vigil keys init`), using the issuer " +
			"and audience of the config's [leases] section. For demos, tests, and people who are their own policy authority.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keyPath == "" {
				keyPath = filepath.Join(app.Paths.Keys, lease.IssuerKeyFile)
			}
			key, _, err := lease.LoadPrivateKey(keyPath)
			if errors.Is(err, os.ErrNotExist) {
				return Failf(ExitExecution, "--key: %s does not exist; run `vigil keys init` first", keyPath)
			}
			if err != nil {
				return Fail(ExitExecution, err)
			}
			o.Issuer, o.Audience, o.Now = app.Cfg.Leases.Issuer, app.Cfg.Leases.Audience, app.Now
			if o.TTL <= 0 {
				return Failf(ExitBadInput, "--ttl: must be positive, got %s", o.TTL)
			}
			tok, err := lease.Issue(key, o)
			if err != nil {
				return Fail(ExitBadInput, err)
			}
			if asJSON {
				return app.PrintJSON(map[string]string{"lease": tok, "task_id": o.TaskID})
			}
			fmt.Fprintln(app.Out, tok)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Subject, "sub", "", "the agent id the lease is for (required)")
	f.StringVar(&o.TaskID, "task-id", "", "the task the lease authorizes (required)")
	f.StringArrayVar(&o.Caps, "cap", nil, "a capability the lease grants, e.g. MEDIA_PLAY (repeatable, at least one)")
	f.StringArrayVar(&o.Devices, "device", nil, "limit the lease to this device (repeatable)")
	f.DurationVar(&o.TTL, "ttl", lease.DefaultIssueTTL, "how long the lease is valid (at most 24h)")
	f.StringVar(&o.KID, "kid", lease.LocalIssuerKID, "the kid written into the token header")
	f.StringVar(&keyPath, "key", "", "the issuer's private key (default keys/issuer.key.pem)")
	f.BoolVar(&asJSON, "json", false, `print {"lease","task_id"} as JSON instead of the bare token`)
	return cmd
}
