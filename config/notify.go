package config

import (
	"fmt"
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
	// …). A placeholder inside code a shell parses (sh -c) is refused at
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
