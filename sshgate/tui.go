package sshgate

import (
	"context"
	"crypto/ed25519"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2/bubbletea"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/panes"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// TUIOptions wires the Approvals screen an interactive session opens: the
// serve process's own queue, so every session is live on the engine's
// change feed, and decides with the gate rules of the local TUI.
type TUIOptions struct {
	Queue approval.Decider
	// Rules offers "allow like this" and the Rules view; nil: neither.
	Rules approvalspane.RuleSource
	// ResultKey verifies decided results before they are shown signed.
	ResultKey ed25519.PublicKey
	Theme     string
	Bell      bool
	Notify    bool // [notify] terminal: the bell and OSC 9 reach the operator's terminal
	MouseOff  bool
	Now       func() time.Time
}

// screenFPS caps redraws as the local TUI does (cli/tui.go's tuiFPS: a key
// is drawn within 50 ms, for half the idle cost of 60).
const screenFPS = 20

// screen runs the Approvals screen on the session's terminal, at its size,
// until the operator quits, the connection ends or the idle timeout does.
func (g *Gate) screen(ctx context.Context, sess ssh.Session, s *Session, in typed) int {
	o := g.o.TUI
	styles := themes.Resolve(o.Theme, true)
	apr := approvalspane.New(approvalspane.Options{
		// operatorQueue stamps ssh and the key on every decision too, so
		// no path through the pane can decide as this account
		Queue:    operatorQueue{Decider: o.Queue, key: s.Key},
		Via:      approval.ViaSSH,
		Key:      s.Key,
		Operator: "operator:" + s.Operator,
		Now:      o.Now, Bell: o.Bell, Notify: o.Notify, ResultKey: o.ResultKey, Rules: o.Rules,
	}, styles)
	defer apr.Close()
	m := ui.New(ui.Options{Context: ctx, Panes: []panes.Pane{apr}, Theme: o.Theme, MouseOff: o.MouseOff,
		// ctrl+z would stop the serve process itself: there is no shell
		// of the operator's here to resume it
		JobControl: func() bool { return false }})
	// MakeOptions reads and writes through in: the operator's keys reset
	// the idle timeout.
	p := tea.NewProgram(m, append(bubbletea.MakeOptions(in), tea.WithFPS(screenFPS))...)
	// the program quits with ctx (idle, shutdown, connection gone) as on q:
	// the terminal is given back, and no error is logged for an ending
	// that is not one
	defer context.AfterFunc(ctx, p.Quit)()
	// wish's middleware runs it and turns the client's window changes into
	// resizes
	bubbletea.MiddlewareWithProgramHandler(func(ssh.Session) *tea.Program { return p })(func(ssh.Session) {})(sess)
	return 0
}

// operatorQueue is the queue as one signed-in operator decides on it: every
// decision is stamped as made over SSH with their key, whatever surface
// the screen names.
type operatorQueue struct {
	approval.Decider
	key string
}

func (q operatorQueue) stamp(d approval.Decision) approval.Decision {
	d.Via, d.Key = approval.ViaSSH, q.key
	return d
}

// Decide records d as this operator's, over SSH.
func (q operatorQueue) Decide(ctx context.Context, id string, d approval.Decision) (approval.Record, *task.Result, error) {
	return q.Decider.Decide(ctx, id, q.stamp(d))
}

// MayDecide answers for d as it will be stamped (a home that requires an
// operator key takes an SSH operator's decisions).
func (q operatorQueue) MayDecide(d approval.Decision) error {
	if m, ok := q.Decider.(interface{ MayDecide(approval.Decision) error }); ok {
		return m.MayDecide(q.stamp(d))
	}
	return nil
}

// RequiresOperatorKey passes the home's setting through.
func (q operatorQueue) RequiresOperatorKey() bool {
	m, ok := q.Decider.(interface{ RequiresOperatorKey() bool })
	return ok && m.RequiresOperatorKey()
}
