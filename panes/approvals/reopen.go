package approvalspane

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/safetext"
)

type (
	// reopenMsg asks to try Options.Reopen again.
	reopenMsg struct{}
	// openedMsg is what Options.Reopen returned.
	openedMsg struct {
		o   Options
		err error
	}
)

// retryOpen waits a tick and tries Options.Reopen; nothing without it.
func (p *Pane) retryOpen() tea.Cmd {
	if p.o.Reopen == nil {
		return nil
	}
	return tea.Tick(p.o.Tick, func(time.Time) tea.Msg { return reopenMsg{} })
}

// tryOpen runs Options.Reopen off the UI goroutine.
func (p *Pane) tryOpen() tea.Cmd {
	reopen := p.o.Reopen
	if reopen == nil || p.o.Queue != nil {
		return nil
	}
	return p.bg.run(func(context.Context) tea.Msg {
		o, err := reopen()
		return openedMsg{o: o, err: err}
	})
}

// opened takes the queue Reopen opened, and starts reading it; or shows
// why it still cannot, and tries again a tick later.
func (p *Pane) opened(msg openedMsg) tea.Cmd {
	if p.o.Queue != nil {
		return nil
	}
	if msg.err != nil || msg.o.Queue == nil {
		if msg.err != nil {
			p.o.QueueErr = msg.err
		}
		return p.retryOpen()
	}
	p.o.Queue, p.o.ResultKey, p.o.QueueErr, p.o.Reopen = msg.o.Queue, msg.o.ResultKey, nil, nil
	p.o.Rules = msg.o.Rules
	p.o.DecisionsRefused, p.refused = msg.o.DecisionsRefused, safetext.Line(msg.o.DecisionsRefused)
	return p.open()
}
