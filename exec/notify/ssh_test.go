package notify

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/config"
)

// {ssh} reaches a real command as its own argument and as VIGIL_SSH,
// unmasked (a masked command would not run) and display-safe; a task with
// no gate address known gets an empty value, not a broken command.
func TestSSHPlaceholderAndEnv(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	sh := script(t, `{ for a in "$@"; do printf '%s\n' "$a"; done; printf 'env=%s\n' "$VIGIL_SSH"; } > "`+out+`"`)
	e := Event{Kind: Arrived, TaskID: "task-7", Agent: "agent:planner", Action: "MEDIA_PLAY", Device: "kitchen",
		SSH: config.SSHCommand("vigil@gate.example:2222", "preview", "task-7")}
	argv := []string{sh, "{agent} asks to {action}", "open it: {ssh}"}
	if err := (Command{Argv: argv}).Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "agent:planner asks to MEDIA_PLAY\nopen it: ssh -p 2222 vigil@gate.example preview task-7\n" +
		"env=ssh -p 2222 vigil@gate.example preview task-7\n"
	if string(b) != want {
		t.Fatalf("the command got %q, want %q", b, want)
	}

	e.SSH = ""
	if err := (Command{Argv: argv}).Run(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if b, _ = os.ReadFile(out); !strings.Contains(string(b), "open it: \nenv=\n") {
		t.Fatalf("no gate address, yet {ssh} said %q", b)
	}
	if got := Expand([]string{"{ssh}"}, Event{SSH: "ssh gate\x1b]0;x\a"})[0]; strings.ContainsAny(got, "\x1b\a") {
		t.Fatalf("{ssh} is not display-safe: %q", got)
	}
}
