package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/demotree"
	searchpane "github.com/vigil-dev/vigil/panes/search"
)

// demoConfig is the demo home's config.toml. Paths are relative to the home.
const demoConfig = `# Vigil demo home — every path below is relative to this file's folder.
theme = "auto"

[sandbox]
root = "files"

[tools.search]
binary = "ugrep"
fallback_binary = "rg"

[approvals]
timeout = "10m"

[leases]
issuer = "abos-policy-authority"
audience = "abos-executor"
[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[[devices]]
id = "living-room"
driver = "sim"

# A Home Assistant speaker that is not reachable from the demo: its preview
# shows how the bearer token is masked and warns that the device did not
# answer; approving it fails after retries.
[[devices]]
id = "kitchen"
driver = "hass"
base_url = "http://127.0.0.1:9/"
entity_id = "media_player.kitchen"
token_file = "hass-token.txt"
`

// demoStep adds one kind of content to a demo home.
type demoStep struct {
	name string
	run  func(ctx context.Context, app *App, dir string) error
}

// demoSteps is the order the demo home is built in; each issue adds its own.
func demoSteps() []demoStep {
	return []demoStep{
		{"config", func(_ context.Context, _ *App, dir string) error {
			// the scopes' sample mailboxes and dataset come first: the config lists them
			scopes, err := scope.WriteDemo(filepath.Join(dir, "scopes"))
			if err != nil {
				return err
			}
			cfg := demoConfig
			for _, sc := range scopes {
				cfg += fmt.Sprintf("\n[[scopes]]\nname = %q\nkind = %q\npath = %q\n", sc.Name, sc.Kind, sc.Path)
				if sc.PrimaryKey != "" {
					cfg += fmt.Sprintf("primary_key = %q\n", sc.PrimaryKey)
				}
			}
			return atomicfile.Write(filepath.Join(dir, "config.toml"), []byte(cfg), 0o600)
		}},
		{"files", func(_ context.Context, _ *App, dir string) error {
			_, err := demotree.Write(filepath.Join(dir, "files"))
			return err
		}},
		{"history", func(_ context.Context, app *App, _ string) error {
			for _, q := range []string{"TODO", `func \w+Context\(`} {
				if err := searchpane.AppendHistory(app.Paths.History, q); err != nil {
					return err
				}
			}
			return nil
		}},
		{"audit", demoAudit},
		{"memories", func(ctx context.Context, app *App, _ string) error {
			s, err := memory.Open(app.Paths.Memory, memory.Options{Now: app.Now})
			if err != nil {
				return err
			}
			defer s.Close()
			return memory.SeedDemo(s, app.Now())
		}},
		{"keys", func(_ context.Context, app *App, dir string) error {
			if err := atomicfile.Write(filepath.Join(dir, "hass-token.txt"), []byte("demo-hass-token-0123456789abcdef\n"), 0o600); err != nil {
				return err
			}
			_, _, err := lease.InitKeys(app.Paths.Keys, nil, false)
			return err
		}},
		{"approvals", demoApprovals},
	}
}

func demoAudit(_ context.Context, app *App, _ string) error {
	log, err := audit.Open(app.Paths.Audit, app.Now)
	if err != nil {
		return err
	}
	_, err = log.Append(audit.Entry{Actor: app.Operator(), Event: audit.EventDemo, Success: true,
		Details: audit.Details(map[string]any{"note": "demo home created"})})
	return err
}

// demoTask is one pending action the demo agent submits.
type demoTask struct {
	id, capability string
	inputs         map[string]any
	age            time.Duration // how long ago it was submitted
}

var demoTasks = []demoTask{
	{"demo-play-movie", "MEDIA_PLAY", map[string]any{"media_uri": "/media/movies/big-buck-bunny.mkv", "target_device": "living-room"}, 40 * time.Second},
	{"demo-stream-secret", "MEDIA_PLAY", map[string]any{
		"media_uri":     "https://ada:hunter2@media.example.com/live/stream.m3u8?api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc&quality=hd",
		"target_device": "living-room"}, 2 * time.Minute},
	{"demo-kitchen-pause", "MEDIA_PAUSE", map[string]any{"target_device": "kitchen"}, 4 * time.Minute},
	{"demo-seek-soon", "MEDIA_SEEK", map[string]any{"target_device": "living-room", "position_seconds": 754}, 8*time.Minute + 30*time.Second},
}

// demoApprovals submits the demo agent's pending tasks with valid leases,
// each as if it had arrived a while ago, so one is close to its deadline.
func demoApprovals(ctx context.Context, app *App, _ string) error {
	eng, err := app.Engine(ctx)
	if err != nil {
		return err
	}
	key, _, err := lease.LoadPrivateKey(filepath.Join(app.Paths.Keys, lease.IssuerKeyFile))
	if err != nil {
		return err
	}
	for _, t := range demoTasks {
		tok, err := lease.Issue(key, lease.IssueOptions{Subject: "agent:demo-assistant", TaskID: t.id,
			Caps: []string{t.capability}, TTL: time.Hour, Now: app.Now})
		if err != nil {
			return err
		}
		inputs, _ := json.Marshal(t.inputs)
		raw, _ := json.Marshal(map[string]any{"task_id": t.id, "capability_id": t.capability,
			"inputs": json.RawMessage(inputs), "lease": tok})
		age := t.age
		q, err := app.openQueue(ctx, eng, func() time.Time { return app.Now().Add(-age) })
		if err != nil {
			return err
		}
		out, err := q.Submit(ctx, raw, "demo")
		if err != nil {
			return err
		}
		if out.State != "pending" {
			return fmt.Errorf("demo task %s was %s: %v", t.id, out.State, out.Error)
		}
	}
	return nil
}

func newDemoCmd(app *App) *cobra.Command {
	var dir string
	var noOpen, asJSON bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build a ready demo home (files, memories, pending actions, audit) and open it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !noOpen {
				if err := needTerminal(app); err != nil {
					return Failf(ExitBadInput, "%w; vigil demo --no-open builds the demo home without opening it", err)
				}
			}
			if dir == "" {
				d, err := os.MkdirTemp("", "vigil-demo-")
				if err != nil {
					return Fail(ExitExecution, err)
				}
				dir = d
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return Fail(ExitBadInput, err)
			}
			// a demo never writes over someone's home: the folder must be new or empty
			if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
				return Failf(ExitBadInput, "--dir: %s is not empty; give a new or empty folder", abs)
			}
			if err := os.MkdirAll(abs, 0o700); err != nil {
				return Fail(ExitExecution, err)
			}
			// the demo home is the home from here on, whatever --home said
			app.HomeFlag, app.ConfigFlag, app.loaded = abs, "", false
			for _, step := range demoSteps() {
				if step.name != "config" {
					if err := app.Load(); err != nil {
						return err
					}
					if err := app.EnsureState(); err != nil {
						return err
					}
				}
				if err := step.run(cmd.Context(), app, abs); err != nil {
					return Failf(ExitExecution, "demo: %s: %w", step.name, err)
				}
			}
			if asJSON {
				if err := app.PrintJSON(map[string]string{"dir": abs}); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(app.Out, abs)
			}
			if noOpen {
				return nil
			}
			return runTUI(cmd.Context(), app)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "build the demo home in `DIR` (default: a fresh temp dir)")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "build the home and print its path without opening the TUI")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"dir": DIR} as JSON`)
	return cmd
}
