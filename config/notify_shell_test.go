package config

import (
	"fmt"
	"strings"
	"testing"
)

// tomlArray writes argv as a TOML array of basic strings.
func tomlArray(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// A placeholder inside code a shell (or interpreter) parses is refused at
// load, naming the argument, the rule and the safe form; values as separate
// arguments, environment variables and programs that parse nothing load.
func TestNotifyCommandRefusesPlaceholderInShellCode(t *testing.T) {
	refused := []struct {
		argv []string
		idx  int
	}{
		{[]string{"sh", "-c", "notify-send Vigil '{agent} asks'"}, 2},
		{[]string{"/bin/bash", "-c", "echo {action}"}, 2},
		{[]string{"dash", "-ec", "echo {device}"}, 2},
		{[]string{"zsh", "-l", "-c", "echo {task_id}"}, 3},
		{[]string{"ksh", "-c", "echo {event}"}, 2},
		{[]string{"fish", "--command", "echo {agent}"}, 2},
		{[]string{"fish", "--command=echo {agent}"}, 1},
		{[]string{"busybox", "sh", "-c", "echo {agent}"}, 3},
		{[]string{"/usr/bin/env", "sh", "-c", "echo {agent}"}, 3},
		{[]string{"env", "-i", "PATH=/bin", "bash", "-c", "echo {agent}"}, 5},
		{[]string{"env", "-S", "sh -c 'echo {agent}'"}, 2},
		{[]string{"nohup", "timeout", "5", "sh", "-c", "echo {expires_in}"}, 5},
		{[]string{"osascript", "-e", `display notification "{agent}"`}, 2},
		{[]string{"python3", "-c", "print('{agent}')"}, 2},
		{[]string{"bash", "-o", "pipefail", "-c", "echo {agent}"}, 4},
		{[]string{"sh", "+e", "-c", "echo {agent}"}, 3},
		{[]string{"python3", "-W", "ignore", "-c", "print('{agent}')"}, 4},
		{[]string{"sudo", "-u", "ada", "sh", "-c", "echo {agent}"}, 5},
		{[]string{"doas", "-u", "ada", "bash", "-lc", "echo {agent}"}, 5},
		{[]string{"ssh", "desktop", "notify-send", "Vigil", "{agent}"}, 4},
		{[]string{"tmux", "display-message", "{agent} asks"}, 2},
		{[]string{"su", "ada", "-c", "notify-send {agent}"}, 3},
		{[]string{"ruby", "-rset", "-e", "puts '{agent}'"}, 3},
		{[]string{"sh", "-c", "--", "echo {agent}"}, 3},
	}
	for _, c := range refused {
		_, err := Load(write(t, "[notify]\ncommand = "+tomlArray(c.argv)+"\n"), "/")
		want := fmt.Sprintf(":2: notify.command[%d]: a placeholder inside code", c.idx)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "$VIGIL_AGENT") {
			t.Errorf("%q: got %v, want %q and the safe form", c.argv, err, want)
		}
	}
	allowed := [][]string{
		{"notify-send", "Vigil", "{agent} asks to {action} on {device}"},
		{"sh", "-c", `notify-send Vigil "$VIGIL_AGENT asks to $VIGIL_ACTION"`},
		{"sh", "-c", `notify-send Vigil "$1"`, "sh", "{agent}"},
		{"sh", "/home/me/notify.sh", "{agent}", "{task_id}"},
		{"env", "FOO=1", "notify-send", "{agent}"},
		{"bash", "-c", "echo {not_a_placeholder}"},
		{"sudo", "-u", "ada", "notify-send", "{agent}"},
		{"bash", "-o", "pipefail", "-c", `notify-send "$VIGIL_AGENT"`, "bash", "{agent}"},
	}
	for _, argv := range allowed {
		if _, err := Load(write(t, "[notify]\ncommand = "+tomlArray(argv)+"\n"), "/"); err != nil {
			t.Errorf("%q: %v", argv, err)
		}
	}
}
