package searchpane

// The runner: generations, the debounce, running and cancelling searches,
// taking their batches onto the screen, and the history of run searches.

import (
	"context"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
)

// runAndRecord runs the composed search at once; once it has answered
// without the engine refusing it, its pattern joins the history.
func (p *Pane) runAndRecord() tea.Cmd {
	cmd := p.runNow()
	if p.running {
		p.recordGen = p.gen
	}
	return cmd
}

// recordRun records the pattern of search gen if the person ran it.
func (p *Pane) recordRun(gen uint64) tea.Cmd {
	if gen != p.recordGen || gen == 0 {
		return nil
	}
	p.recordGen = 0
	q := p.lastReq.Pattern
	if p.isScoped() {
		q = p.scopedText
	}
	return p.recordHistory(q)
}

// recordHistory remembers the current pattern as a run search: in memory
// now, so ↑ reaches it in this session, and on disk off the UI goroutine.
// Only searches the person ran are recorded (enter, ctrl+r, or esc after its
// results showed): the live searches typing starts are not, so a half-typed
// "leas" never lands in the history, and a pattern the engine refused is
// not recorded at all.
func (p *Pane) recordHistory(q string) tea.Cmd {
	if strings.TrimSpace(q) == "" {
		return nil
	}
	p.history = pushHistory(p.history, q)
	p.histIdx = len(p.history)
	p.histDraft = ""
	path := p.opts.HistoryPath
	if path == "" {
		return nil
	}
	return func() tea.Msg { return historyMsg{err: AppendHistory(path, q)} }
}

// ranCurrent reports whether the results on screen answer the pattern as it
// is now, without an error: the person has seen this search run.
func (p *Pane) ranCurrent() bool {
	q := p.inputs[fPattern].Value()
	if strings.TrimSpace(q) == "" || p.errText != "" || p.runErr != "" || p.shownGen != p.gen || p.seq != 0 {
		return false
	}
	if p.isScoped() {
		return p.scoped != nil && p.scopedText == q
	}
	return p.lastReq.Pattern == q && (p.final != nil || p.running)
}

// changed is called after every edit: local checks at once, the search
// after the debounce.
func (p *Pane) changed() tea.Cmd {
	if _, ok := p.buildRequest(); !ok {
		p.seq = 0 // nothing to run until the field is fixed
		p.stopSearch()
		return nil
	}
	if strings.TrimSpace(p.inputs[fPattern].Value()) == "" {
		p.seq = 0
		p.stopSearch()
		p.clearResults()
		return nil
	}
	// the running search is now stale: stop its backend at once, but keep
	// its results on screen until the new ones arrive
	p.stopSearch()
	p.seq++
	seq := p.seq
	return tea.Tick(p.debounce, func(time.Time) tea.Msg { return debounceMsg{seq: seq} })
}

// runNow starts the composed search at once, superseding any running one.
func (p *Pane) runNow() tea.Cmd {
	p.seq = 0
	req, ok := p.buildRequest()
	if !ok {
		return nil
	}
	if strings.TrimSpace(req.Pattern) == "" {
		p.stopSearch()
		p.clearResults()
		return nil
	}
	p.stopSearch()
	p.gen++
	gen := p.gen
	p.running = true
	p.started = p.now()
	if p.isScoped() {
		sc := p.opts.Scopes[p.scopeIdx-1]
		q := scope.Query{Text: req.Pattern, MaxResults: int(derefOr(req.MaxResults, 100))}
		p.scopedText = req.Pattern
		return func() tea.Msg {
			hits, terr := scope.Search(context.Background(), sc, q, scope.Limits{})
			if terr != nil {
				return scopedMsg{gen: gen, err: terr}
			}
			return scopedMsg{gen: gen, hits: hits}
		}
	}
	p.lastReq = req
	run := p.opts.Engine
	if run == nil {
		run = search.Run
	}
	p.cur = startStream(gen, req, p.opts.Search, run)
	return p.cur.pump()
}

func derefOr(v *int64, d int64) int64 {
	if v == nil {
		return d
	}
	return *v
}

func (p *Pane) stopSearch() {
	if p.cur != nil {
		p.cur.stop()
		p.cur = nil
	}
	p.running = false
}

func (p *Pane) clearResults() {
	p.res = results{}
	p.scoped = nil
	p.final = nil
	p.fileErrs = nil
	p.scanned = 0
	p.runErr = ""
	p.showErrs = false
	p.list.Reset()
	p.shownGen = p.gen
	p.lastReq = search.Request{}
	p.scopedText = ""
	p.scPrev = scopedPreview{}
}

// onBatch takes a batch of the newest search onto the screen; batches of a
// superseded search are dropped and not pumped again.
func (p *Pane) onBatch(m batchMsg) tea.Cmd {
	if m.gen != p.gen || p.cur == nil || p.cur.gen != m.gen {
		return nil
	}
	if p.shownGen != m.gen {
		// first news of a new query: replace the old results only now, so
		// the screen never flashes empty while typing
		p.res = results{}
		p.fileErrs, p.final, p.runErr = nil, nil, ""
		p.showErrs = false
		p.errView.Top()
		p.list.Reset()
		p.shownGen = m.gen
		p.prevPath = "" // the file may have changed since the preview read it: read it again
		p.clearError()
	}
	fresh := len(p.res.rows) == 0
	p.res.add(m.events)
	if fresh {
		p.selectFirstMatch()
	}
	p.fileErrs = append(p.fileErrs, m.errs...)
	p.scanned = max(p.scanned, m.scanned)
	if !m.finished {
		return p.cur.pump()
	}
	p.running = false
	p.elapsed = p.now().Sub(p.started)
	p.cur = nil
	if m.err != nil {
		var te *search.ToolError
		if errors.As(m.err, &te) {
			p.setError(te)
			p.res = results{}
			return nil
		}
		p.runErr = m.err.Error()
	}
	record := p.recordRun(m.gen)
	resp := m.resp
	p.final = &resp
	p.scanned = resp.FilesScanned
	if resp.Errors != nil {
		p.fileErrs = resp.Errors // the complete list, in order
	}
	return record
}

// selectFirstMatch puts the cursor on the first match line (not a header or
// a context line) of fresh results.
func (p *Pane) selectFirstMatch() {
	for i, r := range p.res.rows {
		if r.ev >= 0 && p.res.events[r.ev].Type == "match" {
			p.list.Select(i)
			return
		}
	}
	p.list.Select(0)
}
