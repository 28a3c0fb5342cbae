package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// NotifyPlaceholders are the names [notify] command fills, each written
// {name}; exec/notify fills them and also passes each as an environment
// variable VIGIL_<NAME> (VIGIL_AGENT, VIGIL_TASK_ID, …, VIGIL_SSH). {ssh} is
// built from the config and a checked task id, not from what an agent
// wrote, but it is a command line: it belongs in a message, never in code a
// shell parses, like every other placeholder.
var NotifyPlaceholders = []string{"agent", "action", "device", "task_id", "expires_in", "event", "ssh", "count", "message"}

// codeFlags are, for each program that runs code given as an argument,
// the options whose value is that code (shell scripts, one-liners). A
// placeholder there is parsed as code: display-safe is not shell-safe, so
// a lease sub like `x$(touch PWNED)` would run.
var codeFlags = map[string][]string{
	"sh": {"-c"}, "bash": {"-c"}, "dash": {"-c"}, "zsh": {"-c"}, "ksh": {"-c"}, "mksh": {"-c"},
	"ash": {"-c"}, "yash": {"-c"}, "fish": {"-c", "--command"}, "tcsh": {"-c"}, "csh": {"-c"},
	"pwsh": {"-c", "-command", "-encodedcommand"}, "powershell": {"-c", "-command", "-encodedcommand"},
	"python": {"-c"}, "python3": {"-c"}, "perl": {"-e", "-E"}, "ruby": {"-e"},
	"node": {"-e", "--eval", "-p", "--print"}, "osascript": {"-e"},
}

// optionValues are, for each program, the options whose value is the next
// argument (so it is not taken for the command or the script).
var optionValues = map[string][]string{
	"env": {"-u", "-C", "--unset", "--chdir"}, "nice": {"-n"}, "timeout": {"-s", "-k", "--signal", "--kill-after"},
	"stdbuf": {"-i", "-o", "-e"}, "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U"},
	"doas": {"-u", "-C"}, "pkexec": {"--user"}, "ionice": {"-c", "-n", "-p"},
	"sh": {"-o", "+o"}, "dash": {"-o", "+o"}, "ash": {"-o", "+o"}, "ksh": {"-o", "+o"}, "mksh": {"-o", "+o"},
	"yash": {"-o", "+o"}, "zsh": {"-o", "+o"}, "bash": {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"},
	"python": {"-W", "-X", "-Q"}, "python3": {"-W", "-X", "-Q"}, "ruby": {"-I", "-r"},
	"node": {"-r", "--require", "--import", "--loader"}, "osascript": {"-l", "-s"},
}

// wrappers run the rest of their arguments as a command; their own options
// (and env's NAME=value) come first. env -S splits a string the way a
// shell would, so it is code too.
var wrappers = map[string]bool{"env": true, "nohup": true, "setsid": true, "nice": true, "timeout": true,
	"stdbuf": true, "exec": true, "command": true, "busybox": true, "toybox": true, "sudo": true, "doas": true,
	"pkexec": true, "flatpak-spawn": true, "ionice": true}

// parsesAll are programs that parse every argument they are given: ssh
// joins them into a command line for the remote shell, tmux and screen
// expand formats (#(command) runs one), su -c runs code. A placeholder
// anywhere in their arguments is refused.
var parsesAll = map[string]bool{"ssh": true, "tmux": true, "screen": true, "su": true}

// checkNotifyShell refuses a placeholder inside an argument that a shell or
// interpreter will parse as code.
func checkNotifyShell(argv []string) error {
	i := 0
	for i < len(argv) {
		prog := strings.ToLower(strings.TrimSuffix(filepath.Base(argv[i]), ".exe"))
		if wrappers[prog] {
			next, err := skipWrapper(prog, argv, i)
			if err != nil {
				return err
			}
			i = next
			continue
		}
		if parsesAll[prog] {
			for k := i + 1; k < len(argv); k++ {
				if hasPlaceholder(argv[k]) {
					return shellError(k, prog)
				}
			}
			return nil
		}
		flags, ok := codeFlags[prog]
		if !ok {
			return nil
		}
		return checkCodeArgs(prog, flags, argv, i)
	}
	return nil
}

// skipWrapper returns the index of the command a wrapper runs.
func skipWrapper(prog string, argv []string, i int) (int, error) {
	j := i + 1
	for j < len(argv) {
		a := argv[j]
		switch {
		case prog == "env" && (a == "-S" || strings.HasPrefix(a, "--split-string") || strings.HasPrefix(a, "-S")):
			code := strings.TrimPrefix(strings.TrimPrefix(a, "--split-string"), "-S")
			k := j
			if code == "" || code == "=" {
				k = j + 1
			}
			if k < len(argv) && hasPlaceholder(argv[k]) {
				return 0, shellError(k, "env -S")
			}
			return len(argv), nil // the rest is env's to split: nothing more to find
		case prog == "env" && strings.Contains(a, "=") && !strings.HasPrefix(a, "-"):
			j++
		case a == "--":
			return j + 1, nil
		case strings.HasPrefix(a, "-"):
			if slices.Contains(optionValues[prog], a) {
				j++
			}
			j++
		case prog == "timeout" && j == firstNonOption(argv, i+1):
			j++ // the duration
		default:
			return j, nil
		}
	}
	return j, nil
}

func firstNonOption(argv []string, from int) int {
	for k := from; k < len(argv); k++ {
		if !strings.HasPrefix(argv[k], "-") {
			return k
		}
		if argv[k] == "-s" || argv[k] == "-k" {
			k++
		}
	}
	return len(argv)
}

// checkCodeArgs finds the code argument of prog at argv[i] (the value of
// one of flags, or of a short-option cluster holding it, like sh -ec) and
// refuses a placeholder in it.
func checkCodeArgs(prog string, flags []string, argv []string, i int) error {
	pending := false // the next non-option argument is code
	for k := i + 1; k < len(argv); k++ {
		a := argv[k]
		if pending && a == "--" {
			if k+1 < len(argv) && hasPlaceholder(argv[k+1]) {
				return shellError(k+1, prog) // sh -c -- 'code'
			}
			return nil
		}
		if pending && !strings.HasPrefix(a, "-") {
			if hasPlaceholder(a) {
				return shellError(k, prog)
			}
			return nil // what follows are the script's own arguments ($0, $1, …): safe
		}
		if slices.Contains(optionValues[prog], a) {
			if k+1 < len(argv) && hasPlaceholder(argv[k+1]) {
				return shellError(k+1, prog)
			}
			k++
			continue
		}
		if !(strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+")) || a == "-" || a == "--" || a == "+" {
			return nil // a script file or the end of options: its arguments are data
		}
		if hasPlaceholder(a) {
			return shellError(k, prog) // an option is no place for a value
		}
		low := strings.ToLower(a)
		for _, f := range flags {
			if low == f {
				pending = true
			} else if strings.HasPrefix(low, f+"=") {
				if hasPlaceholder(a) {
					return shellError(k, prog)
				}
				return nil
			} else if len(f) == 2 && !strings.HasPrefix(low, "--") && strings.ContainsRune(a[1:], rune(f[1])) {
				pending = true // a cluster: sh -ec, bash -lc
			}
		}
	}
	return nil
}

func hasPlaceholder(a string) bool {
	for _, name := range NotifyPlaceholders {
		if strings.Contains(a, "{"+name+"}") {
			return true
		}
	}
	return false
}

func shellError(k int, prog string) error {
	return &Error{Key: fmt.Sprintf("notify.command[%d]", k), Rule: fmt.Sprintf(
		"a placeholder inside code that %s parses would run what an agent wrote (a lease sub like x$(…)); "+
			"pass values as separate arguments or read them from the environment: "+
			`["sh", "-c", "notify-send Vigil \"$VIGIL_AGENT asks to $VIGIL_ACTION\""] or `+
			`["sh", "-c", "notify-send Vigil \"$1\"", "sh", "{agent}"]`, prog)}
}
