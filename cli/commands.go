package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/mcpserver"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/task"
)

// commands lists every subcommand; each lives in its own file.
func commands(app *App) []*cobra.Command {
	return []*cobra.Command{
		newConfigCmd(app),
		newAuditCmd(app),
		newDemoCmd(app),
		newVersionCmd(app),
		newSearchCmd(app),
		newMemoryCmd(app),
		newMcpCmd(app),
		newKeysCmd(app),
		newLeaseCmd(app),
		newSubmitCmd(app),
		newPendingCmd(app),
		newPreviewCmd(app),
		newApproveCmd(app),
		newDenyCmd(app),
		newResultCmd(app),
		newServeCmd(app),
		newQueueCmd(app),
		newDoctorCmd(app),
		newRulesCmd(app),
		newOperatorsCmd(app),
		newInitCmd(app),
		newKeybindingsCmd(app),
	}
}

// jsonOnly are the commands whose data output is JSON whatever the flags
// (CLI.md: the tool commands print JSON always; approve, deny and result
// have their own --json, a sentence on a terminal without it). They
// accept --json so that a script can pass it to every command that prints
// data; for them it changes nothing.
var jsonOnly = []string{
	"search", "submit",
	"memory add", "memory import", "memory search", "memory reindex",
}

// noData are the runnable commands that print no data, so have no --json:
// the TUI, long-running servers, cobra's and fang's script generators,
// `keys`, which prints its help, and `keybindings`, the TUI's keys
// (documentation, like `man`).
var noData = []string{"vigil", "mcp", "serve", "help", "man", "completion", "keys", "keybindings"}

// acceptJSON gives each command in jsonOnly a --json flag that changes
// nothing, unless the command has one of its own.
func acceptJSON(root *cobra.Command) {
	walk(root, func(c *cobra.Command) {
		if !slices.Contains(jsonOnly, commandPath(c)) || c.Flags().Lookup("json") != nil {
			return
		}
		c.Flags().Bool("json", false, "print JSON (the default and only format here; accepted for scripts)")
		if f := c.Flags().Lookup("text"); f != nil && f.Value.Type() == "bool" { // memory search --text: output for a person
			c.MarkFlagsMutuallyExclusive("json", "text")
		}
	})
}

// commandPath is c's path without the root's name: "memory add".
func commandPath(c *cobra.Command) string {
	if !c.HasParent() {
		return c.Name()
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// Completion values. Each function reads only what it needs, never writes,
// and offers nothing it cannot read (a shell may call it on every tab).
var (
	auditEvents = []string{audit.EventSubmitted, audit.EventRejected, audit.EventApproved, audit.EventDenied,
		audit.EventExpired, audit.EventExecuted, audit.EventFailed, audit.EventSearched, "tampered", audit.EventTorn,
		audit.EventSealed, audit.EventDemo, "memory_added", "memory_deleted", audit.EventRuleAdded, audit.EventRuleRevoked,
		audit.EventRuleExpired, mcpserver.EventLeaseIssued}
	backends   = []string{"auto", "ugrep", "rg"}
	themeNames = []string{"auto", "dark", "light", "high-contrast"}
	cases      = []string{"smart", "sensitive", "insensitive"}
)

// registerCompletions wires dynamic completion: task ids for the commands
// that take one (pending ones for approve and deny), and flag values.
func registerCompletions(app *App, root *cobra.Command) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	flag := func(path, name string, fn cobra.CompletionFunc) {
		walk(root, func(c *cobra.Command) {
			if commandPath(c) == path && c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, fn)
			}
		})
	}
	firstArg := func(path string, fn cobra.CompletionFunc) {
		walk(root, func(c *cobra.Command) {
			if commandPath(c) != path || c.ValidArgsFunction != nil {
				return
			}
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp // one task id only
				}
				return fn(cmd, args, prefix)
			}
		})
	}
	_ = root.RegisterFlagCompletionFunc("theme", fixed(themeNames...))
	flag("search", "backend", fixed(backends...))
	flag("search", "case", fixed(cases...))
	for _, path := range []string{"audit show", "audit tail"} {
		flag(path, "event", fixed(auditEvents...))
		flag(path, "task", taskIDs(app, false))
	}
	flag("lease issue", "cap", fixed(slices.Concat(media.Capabilities, scope.Capabilities)...))
	flag("lease issue", "device", deviceIDs(app))
	firstArg("approve", taskIDs(app, true))
	firstArg("deny", taskIDs(app, true))
	firstArg("preview", taskIDs(app, false))
	firstArg("result", taskIDs(app, false))
}

// taskIDs completes with the ids in the queue's tasks folder; pendingOnly
// keeps those whose record says pending.
func taskIDs(app *App, pendingOnly bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if loadForCompletion(app) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		dir := filepath.Join(app.Paths.State, "tasks")
		ents, _ := os.ReadDir(dir)
		var out []cobra.Completion
		for _, e := range ents {
			id := e.Name()
			// a hostile folder name never reaches the shell: only valid task ids
			if !e.IsDir() || !strings.HasPrefix(id, prefix) || task.ValidateTaskID(id) != nil {
				continue
			}
			if pendingOnly && recordState(filepath.Join(dir, id, "record.json")) != "pending" {
				continue
			}
			out = append(out, id)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// loadForCompletion loads the home named by the completed command line: the
// root's PersistentPreRunE has already loaded one for `__complete` itself,
// before cobra parsed the line's own --home and --config.
func loadForCompletion(app *App) error {
	app.loaded = false
	return app.Load()
}

// recordState reads a task record's state, or "" when it cannot.
func recordState(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var r struct {
		State string `json:"state"`
	}
	if json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&r) != nil {
		return ""
	}
	return r.State
}

// deviceIDs completes --device with the config's allowlisted devices.
func deviceIDs(app *App) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if loadForCompletion(app) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, d := range app.Cfg.Devices {
			if task.ValidateTaskID(d.ID) == nil { // the same safe alphabet
				out = append(out, d.ID)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
