package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/exec/task"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	memorypane "github.com/vigil-dev/vigil/panes/memory"
	searchpane "github.com/vigil-dev/vigil/panes/search"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// newKeysCmd is `vigil keys` with its `init` subcommand. Its --markdown
// flag is about the other kind of key: it prints the screens' key bindings
// as the README's table (generated from the keymaps, so it cannot drift).
func newKeysCmd(app *App) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{Use: "keys", Short: "Manage the operator's result key and the local lease issuer key", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !markdown {
				return cmd.Help()
			}
			_, err := fmt.Fprint(app.Out, keyBindingsMarkdown())
			return err
		}}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the screens' key bindings as the README's markdown table")
	cmd.AddCommand(newKeysInitCmd(app))
	return cmd
}

// keyBindingsMarkdown builds the panes that document their keys (without
// starting them: nothing is read or run) and renders the table.
func keyBindingsMarkdown() string {
	styles := themes.Resolve("dark", true)
	sp := searchpane.New(searchpane.Options{Search: search.DefaultOptions(os.TempDir())}, styles)
	defer sp.Close()
	return ui.KeysMarkdown(4, sp, memorypane.New(memorypane.Options{}, styles), approvalspane.New(approvalspane.Options{}, styles), auditpane.New("", styles))
}

type keyInfo struct {
	PrivateKey string `json:"private_key"`
	PublicKey  string `json:"public_key"`
	KeyID      string `json:"key_id,omitempty"`
	KID        string `json:"kid,omitempty"`
	Alg        string `json:"alg"`
}

func newKeysInitCmd(app *App) *cobra.Command {
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the result-signing key and a local lease-issuer key pair under keys/",
		Long: "Creates keys/operator.key.pem (Ed25519, signs task results) and keys/issuer.key.pem " +
			"(Ed25519, signs leases from `vigil lease issue`) with their public keys, and prints the public keys' paths. " +
			"Existing keys are kept unless --force.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := app.EnsureState(); err != nil {
				return err
			}
			op, is, err := lease.InitKeys(app.Paths.Keys, nil, force)
			if errors.Is(err, lease.ErrKeyExists) {
				return Fail(ExitBadInput, err)
			}
			if err != nil {
				return Fail(ExitExecution, err)
			}
			signer, err := task.LoadSigner(op.Private)
			if err != nil {
				return Fail(ExitExecution, err)
			}
			out := map[string]keyInfo{
				"operator": {PrivateKey: op.Private, PublicKey: op.Public, KeyID: signer.KeyID(), Alg: task.SignatureAlg},
				"issuer":   {PrivateKey: is.Private, PublicKey: is.Public, KID: lease.LocalIssuerKID, Alg: lease.AlgEdDSA},
			}
			if asJSON {
				return app.PrintJSON(out)
			}
			fmt.Fprintf(app.Out, "operator result key (%s): %s\n", signer.KeyID(), op.Public)
			fmt.Fprintf(app.Out, "lease issuer key (kid %q): %s\n", lease.LocalIssuerKID, is.Public)
			fmt.Fprintf(app.Err, "To trust leases from `vigil lease issue`, add to %s:\n"+
				"[[leases.keys]]\nkid = %q\nalg = %q\npublic_key = %q\n",
				app.Paths.Config, lease.LocalIssuerKID, lease.AlgEdDSA, is.Public)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace existing keys (results signed before can no longer be verified)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the key paths as JSON")
	return cmd
}
