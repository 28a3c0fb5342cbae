package memorypane

// Snapshot is the pane's state as a test waits on it, safe to read from
// any goroutine while the program runs (the pane itself is the program's).
type Snapshot struct {
	Busy     bool // a search, the browse or an opened memory is loading
	Searched bool // the list holds a search's answer
	Browsing bool // the list holds a listing newest first (no scores)
	Filtered bool // that listing was chosen by the form's filters, without a query
	Hits     int  // hits in the list, before the filter
	Invalid  int  // validation failures shown in the form
	Detail   bool // a memory is open (read from the store unless Busy)
	Keys     int  // key presses handled so far
}

// Snapshot returns the pane's state after the last message it handled.
func (p *Pane) Snapshot() Snapshot { return p.state.Load() }

// Changed returns a channel closed when the pane has handled its next
// message: take it, read Snapshot, and wait on it while the state is not
// the one wanted (a wait on state, never on time).
func (p *Pane) Changed() <-chan struct{} { return p.state.Changed() }

// publish stores the state for Snapshot and wakes those waiting.
func (p *Pane) publish() {
	s := Snapshot{Busy: p.running || (p.detail != nil && p.detail.loading), Searched: p.searched,
		Browsing: p.browsing, Filtered: p.filtered, Hits: len(p.out.Hits), Invalid: len(p.general), Detail: p.mode == modeDetail && p.detail != nil,
		Keys: p.keys}
	for _, errs := range p.invalid {
		s.Invalid += len(errs)
	}
	p.state.Publish(s)
}
