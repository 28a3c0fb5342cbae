package config

import "strings"

// DecisionsRefusal says in plain words how decisions are made on a home
// whose [decisions] require_operator_key is set, for the person this
// account's `vigil approve`/`deny` and the local TUI's Approvals pane turn
// away: both say this same text, so the two surfaces never disagree. It
// names the SSH command when [ssh] advertise gives the gate's address, the
// shared queue when there is one, and says so when no operator is listed
// yet (then nobody can decide). "" when the home takes local decisions.
func (c *Config) DecisionsRefusal() string {
	if !c.Decisions.RequireOperatorKey {
		return ""
	}
	var b strings.Builder
	b.WriteString("Decisions on this home are made by an operator over SSH")
	if cmd := SSHCommand(c.SSH.Advertise); cmd != "" {
		b.WriteString(" (" + cmd + ")")
	} else {
		b.WriteString(" (vigil serve --ssh; [ssh] advertise names its address)")
	}
	if c.Queue.Enabled() {
		b.WriteString(" or with the shared queue's operator credentials")
	}
	b.WriteString("; this account can read tasks but not decide ([decisions] require_operator_key).")
	if len(c.Operators) == 0 {
		b.WriteString(" No [[operators]] are listed yet: add one with their SSH public key.")
	}
	return b.String()
}
