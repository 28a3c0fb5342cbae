package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runExecute(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err = &out, &errb
	app.In = strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd = t.TempDir()
	code := execute(context.Background(), app, append([]string{"--home", app.Cwd}, args...))
	return out.String(), errb.String(), code
}

// The TUI's keys have a command of their own; the old spelling under the
// crypto-keys command prints the same table and says where it moved.
func TestKeybindingsMovedOutOfKeys(t *testing.T) {
	md, errs, code := runExecute(t, "keybindings", "--markdown")
	if code != 0 || errs != "" || !strings.HasPrefix(md, "| where | keys |\n|---|---|\n") || md != keyBindingsMarkdown() {
		t.Fatalf("keybindings --markdown: exit %d %q\n%s", code, errs, md)
	}
	old, errs, code := runExecute(t, "keys", "--markdown")
	if code != 0 || old != md || !strings.Contains(errs, "deprecated; use: vigil keybindings --markdown") {
		t.Fatalf("keys --markdown: exit %d, stderr %q, same table %v", code, errs, old == md)
	}
	text, _, code := runExecute(t, "keybindings")
	if code != 0 || strings.ContainsAny(text, "|`") || !strings.Contains(text, "Approvals ") ||
		!strings.Contains(text, "[a] approve…") {
		t.Fatalf("keybindings: exit %d\n%s", code, text)
	}
	// `vigil keys` alone is its help, fitted like --help, with no --markdown in it
	help, _, code := runExecute(t, "keys")
	if code != 0 || !strings.Contains(help, "init") || strings.Contains(help, "markdown") {
		t.Fatalf("keys: exit %d\n%s", code, help)
	}
	for _, line := range strings.Split(help, "\n") {
		if strings.TrimRight(line, " ") != line {
			t.Fatalf("keys help line ends in a space: %q", line)
		}
	}
}
