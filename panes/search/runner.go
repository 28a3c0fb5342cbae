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
	q := p.results.lastReq.Pattern
	if p.composer.isScoped() {
		q = p.results.scopedText
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
	p.composer.remember(q)
	path := p.opts.HistoryPath
	if path == "" {
		return nil
	}
	return func() tea.Msg { return historyMsg{err: AppendHistory(path, q)} }
}

// ranCurrent reports whether the results on screen answer the pattern as it
// is now, without an error: the person has seen this search run.
func (p *Pane) ranCurrent() bool {
	q := p.composer.pattern()
	if strings.TrimSpace(q) == "" || p.composer.errText != "" || p.results.runErr != "" || p.results.gen != p.gen || p.seq != 0 {
		return false
	}
	if p.composer.isScoped() {
		return p.results.scoped != nil && p.results.scopedText == q
	}
	return p.results.lastReq.Pattern == q && (p.results.final != nil || p.running)
}

// changed is called after every edit: local checks at once, the search
// after the debounce.
func (p *Pane) changed() tea.Cmd {
	if _, ok := p.composer.buildRequest(); !ok {
		p.seq = 0 // nothing to run until the field is fixed
		p.stopSearch()
		return nil
	}
	if strings.TrimSpace(p.composer.pattern()) == "" {
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
	req, ok := p.composer.buildRequest()
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
	p.scanning = 0
	p.started = p.now()
	if p.composer.isScoped() {
		sc := p.composer.scope()
		q := scope.Query{Text: req.Pattern, MaxResults: int(derefOr(req.MaxResults, 100))}
		p.results.scopedText = req.Pattern
		return func() tea.Msg {
			hits, terr := scope.Search(context.Background(), sc, q, scope.Limits{})
			if terr != nil {
				return scopedMsg{gen: gen, err: terr}
			}
			return scopedMsg{gen: gen, hits: hits}
		}
	}
	p.results.lastReq = req
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

// stopByKey is ctrl+x: the running search (or the one waiting for its
// debounce) stops, and the pane says so with the files it had scanned
// rather than going blank. Results of an older pattern are not left to
// read as this one's.
func (p *Pane) stopByKey() {
	scanned := p.scanning
	if p.results.gen != p.gen || !p.running {
		p.clearResults()
	}
	p.seq = 0
	p.stopSearch()
	p.results.stopped = true
	p.results.scanned = max(p.results.scanned, scanned)
}

func (p *Pane) stopSearch() {
	if p.cur != nil {
		p.cur.stop()
		p.cur = nil
	}
	p.running = false
}

func (p *Pane) clearResults() {
	p.results.clear(p.gen)
	p.preview.scoped = scopedPreview{}
}

// onBatch takes a batch of the newest search onto the screen; batches of a
// superseded search are dropped and not pumped again.
func (p *Pane) onBatch(m batchMsg) tea.Cmd {
	if m.gen != p.gen || p.cur == nil || p.cur.gen != m.gen {
		return nil
	}
	p.scanning = max(p.scanning, m.scanned)
	if p.results.gen != m.gen && !m.finished && len(m.events) == 0 && len(m.errs) == 0 {
		// progress only: the previous results stay until there is news
		return p.cur.pump()
	}
	if p.results.gen != m.gen {
		p.results.begin(m.gen)
		p.preview.reread() // the file may have changed since the preview read it
		p.composer.clearError()
	}
	p.results.add(m.events, m.errs, m.scanned)
	if !m.finished {
		return p.cur.pump()
	}
	p.running = false
	p.results.elapsed = p.now().Sub(p.started)
	p.cur = nil
	if m.err != nil {
		var te *search.ToolError
		if errors.As(m.err, &te) {
			p.composer.setError(te)
			p.results.res = results{}
			return nil
		}
		p.results.runErr = m.err.Error()
	}
	record := p.recordRun(m.gen)
	p.results.finish(m.resp)
	return record
}
