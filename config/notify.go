package config

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// NotifyConfig says how a person is told that an agent waits for them (a
// task arrived, or is a minute from expiring).
type NotifyConfig struct {
	// Terminal: the TUI rings the bell and sends an OSC 9 desktop notification.
	Terminal bool `toml:"terminal" json:"terminal"`
	// Command is run without a shell by `vigil serve`; {agent} {action}
	// {device} {task_id} {expires_in} {event} are filled with masked,
	// display-safe values, which are also in its environment (VIGIL_AGENT,
	// …); {ssh} is the command that opens the task on the SSH gate
	// (SSHCommand), empty when no address is known. A placeholder inside code a shell parses (sh -c) is refused at
	// load: display-safe is not shell-safe. Empty: no command.
	Command []string `toml:"command" json:"command"`
	// Timeout bounds one run of Command; past it the command is killed.
	Timeout Duration `toml:"timeout" json:"timeout"`
}

// DefaultNotifyTimeout bounds one run of [notify] command unless set.
const DefaultNotifyTimeout = 5 * time.Second

// MaxNotifyTimeout bounds [notify] timeout: a notification that takes longer
// has missed its moment.
const MaxNotifyTimeout = time.Minute

func (n NotifyConfig) validate() error {
	if t := n.Timeout.Duration; t <= 0 || t > MaxNotifyTimeout {
		return &Error{Key: "notify.timeout", Rule: fmt.Sprintf("must be positive and at most %s, got %s", MaxNotifyTimeout, t)}
	}
	if len(n.Command) > 0 && strings.TrimSpace(n.Command[0]) == "" {
		return &Error{Key: "notify.command", Rule: "the first element is the program to run and cannot be empty"}
	}
	for i, a := range n.Command {
		if strings.ContainsRune(a, 0) {
			return &Error{Key: fmt.Sprintf("notify.command[%d]", i), Rule: "must not contain a NUL byte"}
		}
	}
	return checkNotifyShell(n.Command)
}

// SSHCommand is the command line a person runs to reach the SSH gate at
// addr ("host:port" or "user@host:port": [ssh] advertise, or the address
// `vigil serve --ssh` listens on) and run args there, e.g.
// "ssh -p 2222 vigil@gate.example preview TASK_ID" ("-p" left out for
// port 22). It is "" when addr names no host one could connect to (empty,
// or an unspecified address such as 0.0.0.0 or [::]) or when any part holds
// a character a shell would read as more than a word: the line is shown in
// notifications to be copied into a terminal, so it is only ever plain
// words. It holds no secret: the gate knows people by their keys.
func SSHCommand(addr string, args ...string) string {
	user, hostport := "", addr
	if at := strings.LastIndex(addr, "@"); at >= 0 {
		user, hostport = addr[:at], addr[at+1:]
		if user == "" {
			return ""
		}
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" || port == "" {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return ""
	}
	if strings.HasPrefix(user, "-") || strings.HasPrefix(host, "-") {
		return "" // ssh would take it for an option
	}
	for i, w := range append([]string{user, host, port}, args...) {
		if (w == "" && i > 0) || !plainWord(w) {
			return ""
		}
	}
	line := []string{"ssh"}
	if port != "22" {
		line = append(line, "-p", port)
	}
	if user != "" {
		host = user + "@" + host
	}
	return strings.Join(append(append(line, host), args...), " ")
}

// plainWord: only characters no shell treats specially. The user part may
// be empty (none given); anything else must not be.
func plainWord(s string) bool {
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-%+=/,", c)
		if !ok {
			return false
		}
	}
	return true
}
