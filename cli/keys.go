package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

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

// newKeysCmd is `vigil keys` with its `init` subcommand: the crypto keys.
// Its old --markdown flag (the screens' key bindings) still works, hidden,
// with a note on stderr pointing at `vigil keybindings --markdown`.
func newKeysCmd(app *App) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{Use: "keys", Short: "Manage the operator's result key and the local lease issuer key", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !markdown {
				return showHelp(cmd)
			}
			fmt.Fprintln(app.Err, "vigil: keys --markdown is deprecated; use: vigil keybindings --markdown")
			_, err := fmt.Fprint(app.Out, keyBindingsMarkdown())
			return err
		}}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "deprecated: use vigil keybindings --markdown")
	_ = cmd.Flags().MarkHidden("markdown")
	cmd.AddCommand(newKeysInitCmd(app))
	return cmd
}

// newKeybindingsCmd is `vigil keybindings`: the TUI's keys, screen by
// screen, generated from the keymaps (so it cannot drift); --markdown is
// the README's table.
func newKeybindingsCmd(app *App) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "keybindings [--markdown]",
		Short: "List the TUI's key bindings, screen by screen (--markdown: the README's table)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			table := keyBindingsMarkdown()
			if !markdown {
				table = keyBindingsText(table)
			}
			_, err := fmt.Fprint(app.Out, table)
			return err
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the README's markdown table")
	return cmd
}

// keyBindingsText is the markdown table for a terminal: the screen, then
// its keys in brackets, without the table's pipes and backquotes.
func keyBindingsText(md string) string {
	var rows [][2]string
	width := 0
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 2 || strings.HasPrefix(line, "|---") || cells[0] == "where" {
			continue
		}
		rows = append(rows, [2]string{cells[0], codeSpan.ReplaceAllString(cells[1], "[$1]")})
		width = max(width, len([]rune(cells[0])))
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s  %s\n", width, r[0], r[1])
	}
	return b.String()
}

// showHelp prints cmd's help as --help does (fitted to 100 columns) from
// inside a running command, whose output otherwise passes unchanged.
func showHelp(cmd *cobra.Command) error {
	if h, ok := cmd.Root().OutOrStdout().(*helpWriter); ok {
		h.raw = false
		defer func() { _ = h.flush(); h.raw = true }()
	}
	return cmd.Help()
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
