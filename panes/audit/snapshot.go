package auditpane

import (
	"sync"
)

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

// snapshots holds the latest Snapshot and the channel that closes when a
// newer one is published.
type snapshots struct {
	mu      sync.Mutex
	cur     Snapshot
	changed chan struct{}
}

// Snapshot returns the pane's latest published state.
func (p *Pane) Snapshot() Snapshot {
	p.state.mu.Lock()
	defer p.state.mu.Unlock()
	return p.state.cur
}

// Changed is closed when a Snapshot newer than the one just read is published.
func (p *Pane) Changed() <-chan struct{} {
	p.state.mu.Lock()
	defer p.state.mu.Unlock()
	if p.state.changed == nil {
		p.state.changed = make(chan struct{})
	}
	return p.state.changed
}

func (p *Pane) publish() {
	s := Snapshot{Badge: p.Report(), Lines: len(p.table.offs), Indexed: p.table.indexed,
		Verifying: p.ver.loading, Reads: p.ver.reads + p.table.reads, Filtered: p.filter.on,
		Filtering: p.filter.passing, Matches: p.viewLen(), Detail: p.detail.open()}
	p.state.mu.Lock()
	defer p.state.mu.Unlock()
	if s == p.state.cur {
		return // nothing a waiter could see changed
	}
	p.state.cur = s
	if p.state.changed != nil {
		close(p.state.changed)
		p.state.changed = nil
	}
}
