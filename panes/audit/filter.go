package auditpane

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index"
	"github.com/vigil-dev/vigil/panes"
)

var outcomes = []string{"", "ok", "failed"}

// filterState is the child that holds the filters (the / field, the event
// and the outcome) and the view they select: the matching line numbers,
// streamed in by an audit/index pass.
type filterState struct {
	field   panes.TextField
	typing  bool // the / field has the keyboard
	event   string
	outcome int   // index in outcomes
	on      bool  // view holds the matching lines; otherwise every line shows
	view    []int // line numbers passing the filters, ascending
	gen     int   // generation of the latest filter
	pass    *index.Pass
	passing bool // the latest pass is still scanning
	next    int  // lines [0, next) are filtered into view
	err     error
}

// spec is the filter as the engine's index reads it.
func (f *filterState) spec() index.Filter {
	return index.Filter{Query: audit.Query{Event: f.event}, Outcome: outcomes[f.outcome], Text: f.field.Value()}
}

// none says no filter is set.
func (f *filterState) none() bool {
	return f.event == "" && f.outcome == 0 && f.field.Value() == ""
}

func (f *filterState) clear() {
	f.event, f.outcome = "", 0
	f.field.SetValue("")
}

func (f *filterState) cancelPass() {
	if f.pass != nil {
		f.pass.Cancel()
	}
}

type filterBatchMsg struct {
	index.Batch
	gen  int
	pass *index.Pass
}

// refilter starts the view over after a filter change or a new index: one
// pass over the lines, cancelling the one before, its matches streaming in.
func (p *Pane) refilter() tea.Cmd {
	f := &p.filter
	f.gen++
	f.view, f.next, f.err = nil, 0, nil
	if f.spec().Empty() {
		f.cancelPass()
		f.on, f.passing = false, false
		p.settleSelection()
		return nil
	}
	f.on = true
	return p.startPass(0)
}

// startPass filters lines [from, len(offs)) into the view: at once when
// they are in memory (a small log, or the tail before the index lands), else
// in a pass off the UI goroutine.
func (p *Pane) startPass(from int) tea.Cmd {
	f, t := &p.filter, &p.table
	if t.raw != nil || !t.indexed {
		f.cancelPass()
		f.passing = false
		f.view = append(f.view, p.filterNow(from)...)
		f.next = len(t.offs)
		p.settleSelection()
		return nil
	}
	span := t.span()
	span.Offs = span.Offs[:len(span.Offs):len(span.Offs)] // the pass reads it while the index grows
	f.pass = index.StartPass(p.life.ctx, f.pass, p.path, span, from, len(t.offs), f.spec(), p.ver.good)
	f.passing = true
	return p.waitPass(f.pass, f.gen)
}

// waitPass is a command that delivers the pass's next batch.
func (p *Pane) waitPass(fp *index.Pass, gen int) tea.Cmd {
	return func() tea.Msg {
		b, ok := fp.Next()
		if !ok {
			return nil // cancelled
		}
		return filterBatchMsg{Batch: b, gen: gen, pass: fp}
	}
}

// filterNow filters lines [from, len(offs)) held in memory.
func (p *Pane) filterNow(from int) []int {
	t := &p.table
	var out []int
	sp := p.filter.spec()
	if t.raw == nil { // the tail: its rows are cached
		for i := from; i < len(t.offs); i++ {
			if r, ok := t.rows.get(t.offs[i]); ok && sp.Keeps(r) {
				out = append(out, i)
			}
		}
		return out
	}
	lf, known, span := index.NewLineFilter(sp), int(p.ver.good.Load()), t.span()
	for i := from; i < len(t.offs); i++ {
		if lf.Keeps(span.Line(t.raw, i), i < known) {
			out = append(out, i)
		}
	}
	return out
}

func (p *Pane) applyBatch(m filterBatchMsg) tea.Cmd {
	f := &p.filter
	if m.pass != f.pass || m.gen != f.gen {
		return nil // superseded: that pass is cancelled
	}
	f.view = append(f.view, m.Matches...)
	f.next = m.Next
	if m.Err != nil {
		f.err = m.Err
	}
	p.settleSelection()
	if !m.Done {
		return p.waitPass(m.pass, m.gen)
	}
	f.passing = false
	if len(p.table.offs) > m.pass.To() {
		return p.startPass(m.pass.To()) // lines appended meanwhile
	}
	return nil
}

// extendView takes lines [from, len(offs)) (just appended) into the view.
func (p *Pane) extendView(from int) tea.Cmd {
	if p.filter.on && !p.filter.passing {
		cmd := p.startPass(from)
		p.settleSelection()
		return cmd
	}
	p.settleSelection()
	return nil
}
