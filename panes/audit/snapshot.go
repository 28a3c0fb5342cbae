package auditpane

// Snapshot is the pane's state as a test waits on it, safe to read from any
// goroutine: Update publishes one after every message, and Changed wakes the
// waiters, so a test waits for a state, never for a time.
type Snapshot struct {
	Badge     string // the chain's badge (Report)
	Lines     int    // lines indexed (the tail's, until the index lands)
	Indexed   bool   // the index covers the whole log
	Verifying bool   // a verification is in flight
	Reads     int    // incremental reads of the chain and index in flight
	Filtered  bool   // a filter is set
	Filtering bool   // its pass is still scanning
	Matches   int    // lines passing the filter so far (Lines without one)
	Detail    bool   // the detail view is open
}

// Snapshot returns the pane's latest published state.
func (p *Pane) Snapshot() Snapshot { return p.state.Load() }

// Changed is closed when a Snapshot newer than the one just read is published.
func (p *Pane) Changed() <-chan struct{} { return p.state.Changed() }

func (p *Pane) publish() {
	p.tellBroken()
	s := Snapshot{Badge: p.Report(), Lines: len(p.table.offs), Indexed: p.table.indexed,
		Verifying: p.ver.loading, Reads: p.ver.reads + p.table.reads, Filtered: p.filter.on,
		Filtering: p.filter.passing, Matches: p.viewLen(), Detail: p.detail.open()}
	if s == p.state.Load() {
		return // nothing a waiter could see changed (only Update publishes)
	}
	p.state.Publish(s)
}

// tellBroken tells onBroken of a break the badge now shows, once a break.
func (p *Pane) tellBroken() {
	b := p.ver.broken()
	if b == nil {
		p.reported = nil
		return
	}
	if p.onBroken == nil || (p.reported != nil && p.reported.String() == b.String()) {
		return
	}
	p.reported = b
	p.onBroken(b)
}
