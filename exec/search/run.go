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
	resp := Response{Pattern: pattern, Path: p.pl.target, Errors: []FileError{}}
	ctx, cancelTimeout := context.WithTimeout(parent, time.Duration(p.e.timeoutMS)*time.Millisecond)
	defer cancelTimeout()
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	workers := max(runtime.NumCPU(), 2)
	ordered := make(chan *chunk, workers)
	work := make(chan *chunk, workers)
	var wg sync.WaitGroup

	wg.Go(func() {
		defer close(ordered)
		defer close(work)
		size := firstChunk
		pushed := 0
		cur := make([]item, 0, size)
		var curBytes int
		push := func() bool {
			if len(cur) == 0 {
				return true
			}
			c := &chunk{items: cur, results: make(chan fileResult, 2*len(cur)+2)}
			pushed++
			size = min(size*chunkGrowth, maxChunk)
			cur, curBytes = make([]item, 0, size), 0
			select {
			case ordered <- c:
			case <-ctx.Done():
				return false
			}
			select {
			case work <- c:
			case <-ctx.Done():
				// Never searched, so nobody else closes it: whoever reads the
				// chunks in order (the drain at the end) must not wait on it.
				close(c.results)
				return false
			}
			return true
		}
		w := &walker{ctx: ctx, pl: p.pl, e: p.e, deny: p.deny, include: p.include, exclude: p.exclude,
			sizes: p.sniffAfter(), // chunks are stat'ed, not sniffed: learn sizes while listing
			emit: func(it item) bool {
				cur = append(cur, it)
				curBytes += len(it.arg) + 1
				if len(cur) >= p.chunkLimit(pushed, size) || curBytes >= maxChunkBytes {
					return push()
				}
				return true
			}}
		w.run()
		push()
		if pushed == 0 {
			p.proof.verify() // no chunk, so no backend run has settled it
		}
	})
	for range workers {
		wg.Go(func() {
			for c := range work {
				p.searchChunk(ctx, c)
			}
		})
	}

	var (
		batch      Batch
		codes      []int
		stderrs    []string
		anyMatch   bool
		stopped    bool
		lastPos    int64
		canceledBy error
		parts      [][]Event // per-file event lists, joined once at the end
		count      int
	)
	flush := func() {
		if emit != nil && (len(batch.Events) > 0 || len(batch.Errors) > 0) {
			batch.FilesScanned = lastPos
			emit(batch)
		}
		batch = Batch{Offset: count}
	}
	n := p.e.maxResults
	// Nothing is emitted before the backend has accepted the pattern.
	var checkErr error
	select {
	case <-p.proof.done:
		checkErr = p.proof.err
	case <-ctx.Done():
		if parent.Err() == nil {
			// Timed out before any run settled the pattern: a bad pattern
			// is still BadArgs, not an empty timed-out answer.
			p.proof.verify()
			checkErr = p.proof.err
		}
	}
	if checkErr != nil {
		stop()
		go func() {
			for c := range ordered {
				for range c.results {
				}
			}
		}()
		wg.Wait()
		return Response{}, checkErr
	}
outer:
	for c := range ordered {
		for {
			var fr fileResult
			var ok bool
			select {
			case fr, ok = <-c.results:
			case <-ctx.Done():
				canceledBy = ctx.Err()
				break outer
			}
			if !ok {
				break
			}
			if fr.pos > 0 {
				lastPos = fr.pos
			}
			if fr.err != nil {
				resp.Errors = append(resp.Errors, *fr.err)
				if emit != nil {
					batch.Errors = append(batch.Errors, *fr.err)
				}
			}
			if fr.last {
				codes = append(codes, fr.code)
				if fr.stderr != "" {
					stderrs = append(stderrs, fr.stderr)
				}
			}
			evs := fr.events
			// The +1 look-ahead (FR-LS-06a): one event beyond max_results
			// means the list is truncated.
			over := len(evs) > n-count
			if over {
				evs = evs[:n-count]
			}
			for i := range fr.events[:min(len(fr.events), len(evs)+1)] {
				if fr.events[i].Type == "match" {
					anyMatch = true
					break
				}
			}
			if len(evs) > 0 {
				parts = append(parts, evs)
				count += len(evs)
				if emit != nil {
					batch.Events = append(batch.Events, evs...)
				}
			}
			if over {
				resp.Truncated = true
				stopped = true
				break outer
			}
			if len(batch.Events) >= 512 || len(c.results) == 0 {
				flush()
			}
		}
	}
	resp.Matches = make([]Event, 0, count)
	for _, evs := range parts {
		resp.Matches = append(resp.Matches, evs...)
	}
	parts = nil
	if canceledBy == nil && !stopped && ctx.Err() != nil {
		canceledBy = ctx.Err()
	}
	stop()
	// Wait for the walker and every backend to be gone (killed) so nothing
	// outlives Run; drain what is left so no goroutine blocks.
	go func() {
		for c := range ordered {
			for range c.results {
			}
		}
	}()
	wg.Wait()
	flush()

	if canceledBy != nil && parent.Err() == nil {
		resp.TimedOut = true // our own deadline, not the caller's cancel
	}
	resp.FilesScanned = lastPos
	resp.Count = len(resp.Matches)
	code := 1
	if anyMatch || resp.Truncated {
		code = 0
	}
	for _, c := range codes {
		if c >= 2 && len(stderrs) > 0 {
			code = c
		}
	}
	resp.ExitCode = &code
	resp.Stderr = strings.Join(stderrs, "\n")
	resp.Content = content(&resp, p.e)
	if parent.Err() != nil {
		return resp, parent.Err()
	}
	return resp, nil
}
