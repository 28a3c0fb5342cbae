package search

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/text/unicode/norm"
)

// Span is one match within a line: 0-based byte offsets into the raw line.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Event is one element of matches[] (FR-LS-04): a match line or a context
// line. Column and MatchText describe the line's first match; Submatches
// (an extension) lists the line's matches, the first maxSubmatches of
// them: SubmatchesTruncated says there were more.
type Event struct {
	Type                string // "match" or "context"
	Path                string // relative to the order root, NFC, forward slashes
	LineNumber          uint64
	Column              uint64 // 1-based byte column; 0 for context
	Line                string // lossy UTF-8, no line terminator
	MatchText           string
	Submatches          []Span
	SubmatchesTruncated bool
	// A line longer than [tools.search] max_line_bytes is cut (linecut.go):
	// LineBytes is then the whole line's length and TextOffset where Line
	// starts in it (both 0 for a line shown whole). Column stays the first
	// match's column in the whole line; Submatches are offsets into Line,
	// only the matches that start within it (SubmatchesTruncated says some
	// were left out), and MatchText is the part of the first match within
	// it (MatchTextTruncated says it went on).
	TextOffset         int
	LineBytes          int
	MatchTextTruncated bool
}

// Cut reports whether Line is a window of a longer line.
func (ev *Event) Cut() bool { return ev.LineBytes > 0 }

// FileError is one per-file failure (FR-LS-ERR-06).
type FileError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// Response is FR-LS-05's response object.
type Response struct {
	Pattern      string
	Path         string
	Count        int
	Matches      []Event
	Truncated    bool
	TimedOut     bool
	FilesScanned int64
	Errors       []FileError
	ExitCode     *int
	Stderr       string
	Content      string
}

// Batch is what Run streams: events (in final order, continuing where the
// previous batch stopped) and per-file errors found meanwhile.
type Batch struct {
	Offset       int // index in matches[] of Events[0]
	Events       []Event
	Errors       []FileError
	FilesScanned int64 // so far
}

// prepared is a request ready to run.
type prepared struct {
	e                effective
	pl               place
	be               BackendInfo
	pat              string
	fixed            bool
	deny             globSet
	denyGlobs        []string
	include, exclude globSet
	env              []string

	proof      *patternProof // the ordered path's pattern check
	startKnown atomic.Bool   // a backend run has finished: its start-up cost is known
	heavyStart atomic.Bool   // ...and it was large (ugrep compiling a Unicode class)
}

func prepare(ctx context.Context, req Request, opts Options) (*prepared, error) {
	p, err := prepareUnchecked(req, opts)
	if err != nil {
		return nil, err
	}
	if err := checkPattern(ctx, p.be, p.e, p.pat, p.fixed, p.env); err != nil {
		return nil, err
	}
	return p, nil
}

// prepareUnchecked is prepare without asking the backend to compile the
// pattern, which Run does while the walk and the first chunks start.
func prepareUnchecked(req Request, opts Options) (*prepared, error) {
	e, err := validateFields(req, opts)
	if err != nil {
		return nil, err
	}
	p := &prepared{e: e, env: opts.Env}
	if p.env == nil {
		p.env = os.Environ()
	}
	p.denyGlobs = opts.Deny
	nfcDeny := make([]string, len(opts.Deny))
	for i, g := range opts.Deny {
		nfcDeny[i] = norm.NFC.String(g) // names are also matched in NFC
	}
	if p.deny, err = compileDeny(nfcDeny); err != nil {
		return nil, execFailed("sandbox.deny: %v", err)
	}
	p.include, _ = compileSet(e.include)
	p.exclude, _ = compileSet(e.exclude)
	if p.pl, err = resolvePath(req.Path, opts, p.deny); err != nil {
		return nil, err
	}
	if p.be, err = selectBackend(opts); err != nil {
		return nil, err
	}
	if e.fuzzy > 0 && p.be.Name != "ugrep" {
		return nil, badField(FieldFuzzy, "not supported by the %s backend; install ugrep or omit fuzzy", p.be.Name)
	}
	p.pat, p.fixed = e.backendPattern(p.be.Name)
	if p.be.Name == "ugrep" {
		if p.pat, p.fixed, err = ugrepPattern(p.pat, p.fixed); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Validate checks a request without searching: schema rules, caps, the
// sandbox path, backend availability, fuzzy support and the regex (by asking
// the backend to compile it). It returns a *ToolError or nil.
func Validate(req Request, opts Options) error {
	_, err := prepare(context.Background(), req, opts)
	return err
}

// chunk is a run of eligible files searched by one backend process.
type chunk struct {
	items   []item
	results chan fileResult
	whole   bool // every file's events are wanted: not a run of the final order
}

type fileResult struct {
	pos    int64
	events []Event
	err    *FileError
	code   int    // backend exit code, on the chunk's last result
	stderr string // unexplained backend stderr, on the chunk's last result
	last   bool
}

// chunkLimit is how many files the chunk being filled may hold. From the
// second chunk on it waits (growing to maxChunk meanwhile) until a backend
// run has shown its start-up cost: when each process costs tens of
// milliseconds before it reads a file (ugrep turning a Unicode \w into a
// DFA), few large chunks beat many growing ones.
func (p *prepared) chunkLimit(pushed, size int) int {
	if pushed < 1 || (p.startKnown.Load() && !p.heavyStart.Load()) {
		return size
	}
	return maxChunk
}

// patternProof settles whether the backend accepts the pattern. Any
// backend run that exits with 0 or 1 has compiled it, so the ordered path
// starts no process just for the check unless a run fails (exit 2: was it
// the pattern?) or no run happens at all.
type patternProof struct {
	once  sync.Once
	done  chan struct{}
	err   error
	check func() error
}

func newPatternProof(check func() error) *patternProof {
	return &patternProof{done: make(chan struct{}), check: check}
}

// accepted records a backend run that compiled the pattern.
func (pp *patternProof) accepted() {
	if pp != nil {
		pp.once.Do(func() { close(pp.done) })
	}
}

// verify runs the check itself, unless already settled.
func (pp *patternProof) verify() {
	if pp != nil {
		pp.once.Do(func() { pp.err = pp.check(); close(pp.done) })
	}
}

// Chunks start small so that the first results (and early stop for dense
// patterns) come quickly, then grow fast: a backend process costs its
// start-up (ugrep compiles a Unicode \w into a DFA in ~40 ms) and each
// runs on all cores. Argument bytes are capped well below ARG_MAX.
const (
	heavyStartup  = 30 * time.Millisecond // a run over a few files this slow is mostly start-up
	firstChunk    = 32
	chunkGrowth   = 4
	maxChunk      = 16384
	maxChunkBytes = 512 << 10
	sniffBytes    = 8192
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

// limitedBuffer keeps the first stderrLimit bytes of stderr.
type limitedBuffer struct{ bytes.Buffer }

const stderrLimit = 64 << 10

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if room := stderrLimit - l.Len(); room > 0 {
		l.Buffer.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}
