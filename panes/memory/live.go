package memorypane

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/memory"
)

// What the list on screen answers, so a change on disk can ask it again.
type shownKind int

const (
	shownNone    shownKind = iota // nothing (an empty or refused form)
	shownListing                  // newest first: browsing, or filters without a query
	shownSearch                   // a search's ranked hits
)

// live is the pane's following of the store: the engine's change feed
// (memory.Store.Changes; the pane watches no file), what the list answers,
// and one refresh in flight at most, with changes meanwhile merged into
// the next.
type live struct {
	ch         <-chan struct{} // the feed; nil: not followed
	stop       context.CancelFunc
	shown      shownKind
	req        memory.Request // what shown was asked with
	refreshing bool           // a refresh is in flight
	dirty      bool           // a change came while a read was in flight
}

// changedMsg is one value of the feed (closed: the feed ended).
type changedMsg struct{ closed bool }

// follow starts following the store's changes under ctx.
func (p *Pane) follow(ctx context.Context) tea.Cmd {
	if p.o.Store == nil || ctx == nil {
		return nil
	}
	fctx, stop := context.WithCancel(ctx)
	ch, err := p.o.Store.Changes(fctx)
	if err != nil {
		stop()
		return nil // the list still answers enter and ctrl+r
	}
	p.live.ch, p.live.stop = ch, stop
	return p.waitChange()
}

// waitChange waits for the feed's next value; one waiter at a time, the
// next started once this one is handled.
func (p *Pane) waitChange() tea.Cmd {
	ch := p.live.ch
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		_, open := <-ch
		return changedMsg{closed: !open}
	}
}

// changed asks the list on screen again after memories changed on disk.
func (p *Pane) changed(msg changedMsg) tea.Cmd {
	if msg.closed {
		p.live.ch = nil
		return nil
	}
	return tea.Batch(p.waitChange(), p.refresh())
}

// refresh asks the shown list again, quietly. While a read is in flight
// the change is noted and asked for once it lands (afterWork): a burst of
// additions costs one read at a time, and a search the person started is
// never cancelled for one.
func (p *Pane) refresh() tea.Cmd {
	if p.running || p.live.refreshing {
		p.live.dirty = true
		return nil
	}
	switch p.live.shown {
	case shownListing:
		return p.listing(p.live.req, true)
	case shownSearch:
		return p.search(p.live.req, true)
	}
	return nil
}

// afterWork runs when a read's answer is shown: a change that came
// meanwhile is asked for now.
func (p *Pane) afterWork() tea.Cmd {
	if !p.live.dirty {
		return nil
	}
	p.live.dirty = false
	return p.refresh()
}

// close ends the feed and waits until it has stopped watching.
func (l *live) close() {
	if l.stop == nil {
		return
	}
	l.stop()
	l.stop = nil
	if ch := l.ch; ch != nil {
		for range ch { // the feed closes it once its watcher is closed
		}
	}
}
