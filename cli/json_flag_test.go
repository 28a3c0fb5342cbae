package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryDataCommandHasJSONFlag: CLI.md promises --json on every command
// that prints data. A command added later without it fails here unless it
// is listed in noData.
func TestEveryDataCommandHasJSONFlag(t *testing.T) {
	root := NewRootCmd(NewApp())
	n := 0
	walk(root, func(c *cobra.Command) {
		if !c.Runnable() || slices.Contains(noData, commandPath(c)) {
			return
		}
		n++
		if c.Flags().Lookup("json") == nil {
			t.Errorf("vigil %s prints data but has no --json flag", commandPath(c))
		}
	})
	if n < 20 {
		t.Fatalf("walked %d commands; the tree is not the one vigil runs", n)
	}
}

// TestJSONFlagAcceptedAndPrintsJSON runs, on a demo home, the commands that
// refused --json (and others) with it: each exits as it would without it,
// prints JSON on stdout, and no "unknown flag".
func TestJSONFlagAcceptedAndPrintsJSON(t *testing.T) {
	home := demoHome(t)
	cases := []struct {
		args []string
		code int
		want string // a key the JSON must have
	}{
		{[]string{"lease", "issue", "--sub", "agent:t", "--task-id", "t-json-1", "--cap", "MEDIA_PLAY", "--json"}, 0, `"lease"`},
		{[]string{"approve", "demo-play-movie", "--yes", "--json"}, 0, `"signature"`},
		{[]string{"deny", "demo-seek-soon", "--reason", "not now", "--json"}, 0, `"APPROVAL_DENIED"`},
		{[]string{"result", "demo-play-movie", "--json"}, 0, `"status"`},
		{[]string{"result", "demo-seek-soon", "--json"}, 1, `"FAILURE"`},
		{[]string{"search", "--json", "TODO"}, 0, `"matches"`},
		{[]string{"memory", "add", "--text", "json flag test", "--json"}, 0, `"id"`},
		{[]string{"memory", "search", "--json", `{"query":"json"}`}, 0, `"content"`},
		{[]string{"pending", "--json"}, 0, `"task_id"`},
		{[]string{"preview", "demo-kitchen-pause", "--json"}, 0, `"preview_hash"`},
		{[]string{"config", "show", "--json"}, 0, `"config_file"`},
		{[]string{"version", "--json"}, 0, `"commit"`},
		{[]string{"demo", "--dir", filepath.Join(t.TempDir(), "d"), "--no-open", "--json"}, 0, `"dir"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			out, errs, code := run(t, home, c.args...)
			if strings.Contains(errs, "unknown flag") || code != c.code {
				t.Fatalf("vigil %s: exit %d (want %d)\n%s%s", strings.Join(c.args, " "), code, c.code, out, errs)
			}
			dec := json.NewDecoder(strings.NewReader(out))
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, out)
			}
			if !strings.Contains(out, c.want) {
				t.Fatalf("JSON lacks %s:\n%s", c.want, out)
			}
		})
	}
}

// TestJSONAndTextAreExclusive: memory search's --text (for a person) and
// --json cannot both be asked for.
func TestJSONAndTextAreExclusive(t *testing.T) {
	home := demoHome(t)
	_, errs, code := run(t, home, "memory", "search", "--json", "--text", `{"query":"x"}`)
	if code != ExitBadInput || !strings.Contains(errs, "json") {
		t.Fatalf("exit %d, %s", code, errs)
	}
}
