package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/safetext"
)

// operatorKeyJSON is one key of `operators list --json`.
type operatorKeyJSON struct {
	Type        string `json:"type"`
	Fingerprint string `json:"fingerprint"`
	Comment     string `json:"comment,omitempty"`
	// SecurityKey: a FIDO key (sk-…), whose every sign-in needs a touch.
	SecurityKey bool `json:"security_key"`
}

type operatorJSON struct {
	Name string            `json:"name"`
	Keys []operatorKeyJSON `json:"keys"`
}

// hostKeyJSON is the gate's host key, for an operator to compare with what
// their client shows on first sign-in.
type hostKeyJSON struct {
	Path        string `json:"path"`
	Type        string `json:"type"`
	Fingerprint string `json:"fingerprint"`
}

func newOperatorsCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "operators", Short: "Who may decide over SSH ([[operators]])",
		Long: "The people listed in [[operators]] decide over `vigil serve --ssh` with their SSH keys " +
			"(docs/ssh.md); `list` shows each one's keys by fingerprint."}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the operators and their keys' fingerprints, from the config (no server needed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ops, err := operatorsJSON(app.Cfg.Operators)
			if err != nil {
				return Fail(ExitBadInput, fmt.Errorf("%s: %w", app.Paths.Config, err))
			}
			host := readHostKey(hostKeyPath(app))
			if asJSON {
				out := map[string]any{"operators": ops}
				if host != nil {
					out["host_key"] = host
				}
				return app.PrintJSON(out)
			}
			printOperators(app, ops, host)
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list)
	return cmd
}

// operatorsJSON reads each operator's key lines (keys, then keys_file) with
// their comments.
func operatorsJSON(ops []config.OperatorConfig) ([]operatorJSON, error) {
	out := make([]operatorJSON, 0, len(ops))
	for _, op := range ops {
		lines, err := operatorKeyLines(op)
		if err != nil {
			return nil, err
		}
		o := operatorJSON{Name: op.Name, Keys: []operatorKeyJSON{}}
		for i, l := range lines {
			pk, err := config.ParseOperatorKey(l)
			if err != nil {
				return nil, fmt.Errorf("operator %q: key %d: %v", op.Name, i+1, err)
			}
			_, comment, _, _, _ := gossh.ParseAuthorizedKey([]byte(l))
			o.Keys = append(o.Keys, operatorKeyJSON{Type: pk.Type(), Fingerprint: gossh.FingerprintSHA256(pk),
				Comment: comment, SecurityKey: strings.HasPrefix(pk.Type(), "sk-")})
		}
		out = append(out, o)
	}
	return out, nil
}

// operatorKeyLines are an operator's authorized_keys lines as
// config.OperatorConfig.OperatorKeys reads them.
func operatorKeyLines(op config.OperatorConfig) ([]string, error) {
	lines := append([]string(nil), op.Keys...)
	if op.KeysFile == "" {
		return lines, nil
	}
	b, err := os.ReadFile(op.KeysFile)
	if err != nil {
		return nil, fmt.Errorf("operator %q: keys_file: %v", op.Name, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// readHostKey is the gate's host key's public half, nil when there is none
// yet (the first `vigil serve --ssh` makes it) or it cannot be read here.
func readHostKey(path string) *hostKeyJSON {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s, err := gossh.ParsePrivateKey(b)
	if err != nil {
		return nil
	}
	return &hostKeyJSON{Path: path, Type: s.PublicKey().Type(), Fingerprint: gossh.FingerprintSHA256(s.PublicKey())}
}

// printOperators is `operators list` for a person: one row per key; a
// comment comes from the config and is shown display-safe.
func printOperators(app *App, ops []operatorJSON, host *hostKeyJSON) {
	if len(ops) == 0 {
		fmt.Fprintf(app.Out, "no operators: nobody can decide over SSH (add [[operators]] to %s)\n", safetext.Line(app.Paths.Config))
	} else {
		fmt.Fprintf(app.Out, "%-16s %-28s %-51s %s\n", "OPERATOR", "TYPE", "FINGERPRINT", "COMMENT")
		for _, op := range ops {
			for _, k := range op.Keys {
				note := safetext.Line(k.Comment)
				if k.SecurityKey {
					note = strings.TrimSpace(note + " (security key: a touch for each sign-in)")
				}
				fmt.Fprintf(app.Out, "%-16s %-28s %-51s %s\n", op.Name, k.Type, k.Fingerprint, note)
			}
		}
	}
	if host != nil {
		fmt.Fprintf(app.Out, "\nSSH host key: %s %s (%s)\n", host.Type, host.Fingerprint, safetext.Line(host.Path))
	}
}
