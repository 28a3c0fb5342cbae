package search

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Run executes a search. emit (may be nil) receives batches in final
// order from Run's own goroutine, never after Run returns. Cancelling ctx
// kills the backend's process group; Run then returns the partial response
// and ctx's error. Tool errors are *ToolError.
func Run(ctx context.Context, req Request, opts Options, emit func(Batch)) (Response, error) {
	p, err := prepareUnchecked(req, opts)
	if err != nil {
		return Response{}, err
	}
	// A caller that streams needs results in order as they become final,
	// which only the ordered path gives; others get the rg walk when it
	// can answer exactly. rg rejecting the pattern makes the walk fall back,
	// so it needs no pattern check of its own.
	if emit == nil && p.walkEligible() {
		start := time.Now()
		resp, fallback, err := p.runWalk(ctx, req.Pattern)
		if !fallback {
			return resp, err
		}
		p.e.timeoutMS = max(p.e.timeoutMS-time.Since(start).Milliseconds(), 1)
	}
	return p.run(ctx, req.Pattern, emit)
}

func (p *prepared) run(parent context.Context, pattern string, emit func(Batch)) (Response, error) {
	p.proof = newPatternProof(func() error { return checkPattern(parent, p.be, p.e, p.pat, p.fixed, p.env) })
	ctx, cancelTimeout := context.WithTimeout(parent, time.Duration(p.e.timeoutMS)*time.Millisecond)
	defer cancelTimeout()
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	// The walk feeds chunks to the workers and, in the same order, to this
	// goroutine, which reads each chunk's results as they become final.
	workers := max(runtime.NumCPU(), 2)
	ordered := make(chan *chunk, workers)
	work := make(chan *chunk, workers)
	var wg sync.WaitGroup
	wg.Go(func() { p.listChunks(ctx, ordered, work) })
	for range workers {
		wg.Go(func() {
			for c := range work {
				p.searchChunk(ctx, c)
			}
		})
	}
	// Wait for the walker and every backend to be gone (killed) so nothing
	// outlives Run; drain what is left so no goroutine blocks.
	shutdown := func() {
		stop()
		go drainChunks(ordered)
		wg.Wait()
	}

	// Nothing is emitted before the backend has accepted the pattern.
	if err := p.awaitPattern(parent, ctx); err != nil {
		shutdown()
		return Response{}, err
	}
	col := &collector{
		resp: Response{Pattern: pattern, Path: p.pl.target, Errors: []FileError{}},
		emit: emit,
		n:    p.e.maxResults,
	}
	col.consume(ctx, ordered)
	col.joinMatches()
	if col.canceledBy == nil && !col.stopped && ctx.Err() != nil {
		col.canceledBy = ctx.Err()
	}
	shutdown()
	col.flush()
	return col.finish(parent, p.e)
}

// listChunks walks the tree and cuts the files it lists into chunks, each
// sent to ordered (the order results are read in) and then to work (a
// worker searches it).
func (p *prepared) listChunks(ctx context.Context, ordered, work chan<- *chunk) {
	defer close(ordered)
	defer close(work)
	k := &chunker{p: p, ctx: ctx, ordered: ordered, work: work, size: firstChunk}
	k.cur = make([]item, 0, k.size)
	w := &walker{ctx: ctx, pl: p.pl, e: p.e, deny: p.deny, include: p.include, exclude: p.exclude,
		sizes: p.sniffAfter(), // chunks are stat'ed, not sniffed: learn sizes while listing
		emit:  k.add}
	w.run()
	k.push()
	if k.pushed == 0 {
		p.proof.verify() // no chunk, so no backend run has settled it
	}
}

// chunker fills chunks from the walk's items, growing them from firstChunk
// by chunkGrowth up to chunkLimit files or maxChunkBytes of arguments.
type chunker struct {
	p             *prepared
	ctx           context.Context
	ordered, work chan<- *chunk
	size          int // files the next chunk may hold
	pushed        int // chunks sent so far
	cur           []item
	curBytes      int
}

// add appends an item to the chunk being filled, sending it when full. It
// reports false once ctx is done, which stops the walk.
func (k *chunker) add(it item) bool {
	k.cur = append(k.cur, it)
	k.curBytes += len(it.arg) + 1
	if len(k.cur) >= k.p.chunkLimit(k.pushed, k.size) || k.curBytes >= maxChunkBytes {
		return k.push()
	}
	return true
}

// push sends the chunk being filled (if any) and starts the next, larger one.
func (k *chunker) push() bool {
	if len(k.cur) == 0 {
		return true
	}
	c := &chunk{items: k.cur, results: make(chan fileResult, 2*len(k.cur)+2)}
	k.pushed++
	k.size = min(k.size*chunkGrowth, maxChunk)
	k.cur, k.curBytes = make([]item, 0, k.size), 0
	select {
	case k.ordered <- c:
	case <-k.ctx.Done():
		return false
	}
	select {
	case k.work <- c:
	case <-k.ctx.Done():
		// Never searched, so nobody else closes it: whoever reads the
		// chunks in order (the drain at the end) must not wait on it.
		close(c.results)
		return false
	}
	return true
}

// drainChunks reads every remaining result so no producer stays blocked.
func drainChunks(ordered <-chan *chunk) {
	for c := range ordered {
		for range c.results {
		}
	}
}

// awaitPattern waits until some backend run (or the check itself) has
// settled whether the pattern compiles, and returns the check's error.
func (p *prepared) awaitPattern(parent, ctx context.Context) error {
	select {
	case <-p.proof.done:
		return p.proof.err
	case <-ctx.Done():
		if parent.Err() == nil {
			// Timed out before any run settled the pattern: a bad pattern
			// is still BadArgs, not an empty timed-out answer.
			p.proof.verify()
			return p.proof.err
		}
	}
	return nil
}

// collector reads the chunks' results in order into the response, and into
// batches for emit, until max_results (plus one look-ahead) or ctx's end.
type collector struct {
	emit func(Batch)
	n    int // max_results
	resp Response

	batch      Batch
	codes      []int    // backend exit codes, one per chunk
	stderrs    []string // unexplained backend stderr, per chunk
	anyMatch   bool
	stopped    bool // truncated: the results were not read to the end
	lastPos    int64
	shownPos   int64     // FilesScanned of the last batch emitted
	shownAt    time.Time // when it was emitted
	canceledBy error
	parts      [][]Event // per-file event lists, joined once at the end
	count      int
}

func (col *collector) consume(ctx context.Context, ordered <-chan *chunk) {
	for c := range ordered {
		if !col.chunk(ctx, c) {
			return
		}
	}
}

// chunk reads one chunk's results; false when reading stops for good.
func (col *collector) chunk(ctx context.Context, c *chunk) bool {
	for {
		var fr fileResult
		var ok bool
		select {
		case fr, ok = <-c.results:
		case <-ctx.Done():
			col.canceledBy = ctx.Err()
			return false
		}
		if !ok {
			return true
		}
		if !col.take(fr) {
			return false
		}
		if len(col.batch.Events) >= 512 || len(c.results) == 0 {
			col.flush()
		}
	}
}

// take adds one file's result; false once max_results is exceeded.
func (col *collector) take(fr fileResult) bool {
	if fr.pos > 0 {
		col.lastPos = fr.pos
	}
	if fr.err != nil {
		col.resp.Errors = append(col.resp.Errors, *fr.err)
		if col.emit != nil {
			col.batch.Errors = append(col.batch.Errors, *fr.err)
		}
	}
	if fr.last {
		col.codes = append(col.codes, fr.code)
		if fr.stderr != "" {
			col.stderrs = append(col.stderrs, fr.stderr)
		}
	}
	evs := fr.events
	// The +1 look-ahead (FR-LS-06a): one event beyond max_results
	// means the list is truncated.
	over := len(evs) > col.n-col.count
	if over {
		evs = evs[:col.n-col.count]
	}
	for i := range fr.events[:min(len(fr.events), len(evs)+1)] {
		if fr.events[i].Type == "match" {
			col.anyMatch = true
			break
		}
	}
	if len(evs) > 0 {
		col.parts = append(col.parts, evs)
		col.count += len(evs)
		if col.emit != nil {
			col.batch.Events = append(col.batch.Events, evs...)
		}
	}
	if over {
		col.resp.Truncated = true
		col.stopped = true
		return false
	}
	return true
}

// flush emits the batch gathered so far, if any, and starts the next.
func (col *collector) flush() {
	if col.emit != nil && (len(col.batch.Events) > 0 || len(col.batch.Errors) > 0 || col.progressDue()) {
		col.batch.FilesScanned = col.lastPos
		col.emit(col.batch)
		col.shownPos, col.shownAt = col.lastPos, time.Now()
	}
	col.batch = Batch{Offset: col.count}
}

// progressEvery is how often a search that finds nothing still emits a
// batch (files scanned only): a screen shows it moving, not stuck.
const progressEvery = 100 * time.Millisecond

// progressDue reports files scanned since the last batch, which was
// emitted at least progressEvery ago.
func (col *collector) progressDue() bool {
	return col.lastPos > col.shownPos && time.Since(col.shownAt) >= progressEvery
}

func (col *collector) joinMatches() {
	col.resp.Matches = make([]Event, 0, col.count)
	for _, evs := range col.parts {
		col.resp.Matches = append(col.resp.Matches, evs...)
	}
	col.parts = nil
}

// finish fills in the response's totals and exit code: 0 when anything
// matched, 1 when nothing did, or a backend's error code (2+) when it
// also said why on stderr.
func (col *collector) finish(parent context.Context, e effective) (Response, error) {
	resp := col.resp
	if col.canceledBy != nil && parent.Err() == nil {
		resp.TimedOut = true // our own deadline, not the caller's cancel
	}
	resp.FilesScanned = col.lastPos
	resp.Count = len(resp.Matches)
	code := 1
	if col.anyMatch || resp.Truncated {
		code = 0
	}
	for _, c := range col.codes {
		if c >= 2 && len(col.stderrs) > 0 {
			code = c
		}
	}
	resp.ExitCode = &code
	resp.Stderr = strings.Join(col.stderrs, "\n")
	resp.Content = content(&resp, e)
	if parent.Err() != nil {
		return resp, parent.Err()
	}
	return resp, nil
}
