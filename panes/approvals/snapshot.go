package approvalspane

import "github.com/vigil-dev/vigil/panes"

// Snapshot is the pane's state as a test waits on it, safe to read from
// any goroutine while the program runs (the pane itself is the program's).
type Snapshot struct {
	Pending  int    // tasks in the queue
	Decided  int    // tasks in the decided list
	Selected string // the pending task under the cursor
	Loading  bool   // a reload is in flight
	Busy     bool   // a decision is being carried out
	Notice   string // the notice on screen
	// Result is the decided task whose result has been read and is shown
	// (when the decided list is).
	Result string
	Ticks  int // ticks handled: one more is a repaint with the clock as it is now
	// Marked is how many pending tasks are marked; Summary is whether the
	// marked tasks' summary is open; Report is the last batch's lines.
	Marked  int
	Summary bool
	Report  []string
	// Previewed is the pending task whose preview is on screen.
	Previewed string
}

// state is what the pane last published, and who waits for the next.
type state struct {
	ticks int // the program's side: counted by Update
	pub   panes.Published[Snapshot]
}

// Snapshot returns the pane's state after the last message it handled.
func (p *Pane) Snapshot() Snapshot { return p.state.pub.Load() }

// Changed returns a channel closed when the pane has handled its next
// message: take it, read Snapshot, and wait on it while the state is not
// the one wanted (a wait on state, never on time).
func (p *Pane) Changed() <-chan struct{} { return p.state.pub.Changed() }

// publish stores the state for Snapshot and wakes those waiting.
func (p *Pane) publish() {
	s := Snapshot{Pending: len(p.queue.list), Decided: len(p.decided.list), Selected: p.queue.selID,
		Loading: p.load.loading, Busy: p.busy, Notice: p.notice, Ticks: p.state.ticks,
		Marked: len(p.batch.marked), Summary: p.dialogs.summary != nil}
	if v := p.queue.view; v != nil {
		s.Previewed = v.Record.TaskID
	}
	for _, l := range p.batch.report {
		s.Report = append(s.Report, l.text)
	}
	if d := &p.decided; d.result != nil && d.resultID == d.selID {
		s.Result = d.resultID
	}
	p.state.pub.Publish(s)
}
