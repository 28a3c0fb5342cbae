package memorypane

import (
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/memory"
)

// browseLimit is how many of the newest memories the pane lists unasked
// (a listing by filters shows the form's limit, as a search does).
const browseLimit = 50

// recentMsg carries a listing: the memories passing req's filters, newest
// first (the newest memories when it has none).
type recentMsg struct {
	gen     int
	req     memory.Request
	mems    []memory.Memory
	more    bool
	err     error
	refresh bool // asked again after a change on disk
}

// errNoStore is why a listing cannot run when the store did not open.
var errNoStore = errors.New("the memory database is not open")

// browse lists the newest memories off the UI goroutine.
func (p *Pane) browse() tea.Cmd {
	if p.o.Store == nil {
		return nil
	}
	return p.listing(memory.Request{Limit: browseLimit}, false)
}

// listing lists the memories passing req.Filters, newest first and at most
// req.Limit, off the UI goroutine. Nothing is ranked, so no score is shown.
func (p *Pane) listing(req memory.Request, refresh bool) tea.Cmd {
	ctx := p.startWork(refresh)
	gen, store := p.gen, p.o.Store
	if store == nil {
		err := errNoStore
		if p.o.OpenErr != nil {
			err = p.o.OpenErr
		}
		return func() tea.Msg { return recentMsg{gen: gen, req: req, err: err} }
	}
	return func() tea.Msg {
		mems, next, err := store.List(ctx, req.Filters, req.Limit, nil)
		if ctx.Err() != nil {
			return nil // dropped for a newer list: its gen no longer counts
		}
		return recentMsg{gen: gen, req: req, mems: mems, more: next != nil, err: err, refresh: refresh}
	}
}

// applyRecent shows a listing (no scores: nothing was ranked). A refresh
// that fails keeps the list it had and says why above it.
func (p *Pane) applyRecent(msg recentMsg) tea.Cmd {
	p.cancelWork()
	p.running, p.live.refreshing = false, false
	if msg.err != nil {
		if !msg.refresh {
			p.clearHits()
			p.live.shown = shownNone
		}
		p.browseErr = msg.err
		return p.afterWork()
	}
	hits := make([]memory.Hit, len(msg.mems))
	for i, m := range msg.mems {
		hits[i] = memory.Hit{Memory: m}
	}
	out := memory.Outcome{Request: msg.req, Hits: hits}
	if msg.refresh {
		p.replaceHits(out)
	} else {
		p.setHits(out)
	}
	p.searched, p.browsing, p.more = false, true, msg.more
	p.filtered = !msg.req.Filters.Empty()
	p.live.shown, p.live.req = shownListing, msg.req
	return p.afterWork()
}

// replaceHits is setHits for a list asked again: the fuzzy filter typed
// stays, and so does the selected memory when it is still listed.
func (p *Pane) replaceHits(out memory.Outcome) {
	selID, hadSel := int64(0), false
	if h, ok := p.Selected(); ok {
		selID, hadSel = h.ID, true
	}
	pat := p.filter.Value()
	p.setHits(out)
	if pat != "" {
		p.filter.SetValue(pat)
		p.refilter()
	}
	if !hadSel {
		return
	}
	for i, idx := range p.shown {
		if p.out.Hits[idx].ID == selID {
			p.list.Select(i)
			return
		}
	}
}
