package search

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Span is one match within a line: 0-based byte offsets into the raw line.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Event is one element of matches[] (FR-LS-04): a match line or a context
// line. Column and MatchText describe the line's first match; Submatches
// (an extension) lists every match on the line.
type Event struct {
	Type       string // "match" or "context"
	Path       string // relative to the order root, NFC, forward slashes
	LineNumber uint64
	Column     uint64 // 1-based byte column; 0 for context
	Line       string // lossy UTF-8, no line terminator
	MatchText  string
	Submatches []Span
}

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
	include, exclude globSet
	env              []string
}

func prepare(ctx context.Context, req Request, opts Options) (*prepared, error) {
	e, err := validateFields(req, opts)
	if err != nil {
		return nil, err
	}
	p := &prepared{e: e, env: opts.Env}
	if p.env == nil {
		p.env = os.Environ()
	}
	if p.deny, err = compileSet(opts.Deny); err != nil {
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
		return nil, badArgs("fuzzy: not supported by the %s backend; install ugrep or omit fuzzy (FR-LS-VAL-07)", p.be.Name)
	}
	p.pat, p.fixed = e.backendPattern()
	if err := checkPattern(ctx, p.be, e, p.pat, p.fixed, p.env); err != nil {
		return nil, err
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
}

type fileResult struct {
	pos    int64
	events []Event
	err    *FileError
	code   int    // backend exit code, on the chunk's last result
	stderr string // unexplained backend stderr, on the chunk's last result
	last   bool
}

// Chunks start small so that the first results (and early stop for dense
// patterns) come quickly, then grow to amortize process start-up.
const (
	firstChunk = 32
	maxChunk   = 1024
	sniffBytes = 8192
)

// Run executes a search. emit (may be nil) receives batches in final
// order from Run's own goroutine, never after Run returns. Cancelling ctx
// kills the backend's process group; Run then returns the partial response
// and ctx's error. Tool errors are *ToolError.
func Run(ctx context.Context, req Request, opts Options, emit func(Batch)) (Response, error) {
	p, err := prepare(ctx, req, opts)
	if err != nil {
		return Response{}, err
	}
	return p.run(ctx, req.Pattern, emit)
}

func (p *prepared) run(parent context.Context, pattern string, emit func(Batch)) (Response, error) {
	resp := Response{Pattern: pattern, Path: p.pl.target, Matches: []Event{}, Errors: []FileError{}}
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
		var cur []item
		push := func() bool {
			if len(cur) == 0 {
				return true
			}
			c := &chunk{items: cur, results: make(chan fileResult, 2*len(cur)+2)}
			cur = nil
			size = min(size*2, maxChunk)
			select {
			case ordered <- c:
			case <-ctx.Done():
				return false
			}
			select {
			case work <- c:
			case <-ctx.Done():
				return false
			}
			return true
		}
		w := &walker{ctx: ctx, pl: p.pl, e: p.e, deny: p.deny, include: p.include, exclude: p.exclude,
			emit: func(it item) bool {
				cur = append(cur, it)
				if len(cur) >= size {
					return push()
				}
				return true
			}}
		w.run()
		push()
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
	)
	flush := func() {
		if emit != nil && (len(batch.Events) > 0 || len(batch.Errors) > 0) {
			batch.FilesScanned = lastPos
			emit(batch)
		}
		batch = Batch{Offset: len(resp.Matches)}
	}
	n := p.e.maxResults
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
				batch.Errors = append(batch.Errors, *fr.err)
			}
			if fr.last {
				codes = append(codes, fr.code)
				if fr.stderr != "" {
					stderrs = append(stderrs, fr.stderr)
				}
			}
			for _, ev := range fr.events {
				if ev.Type == "match" {
					anyMatch = true
				}
				if len(resp.Matches) == n {
					// The +1 look-ahead event exists (FR-LS-06a).
					resp.Truncated = true
					stopped = true
					break outer
				}
				resp.Matches = append(resp.Matches, ev)
				batch.Events = append(batch.Events, ev)
			}
			if len(batch.Events) >= 512 || len(c.results) == 0 {
				flush()
			}
		}
	}
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

// searchChunk sniffs the chunk's files, runs the backend over the text
// ones and delivers one fileResult per item, in item order.
func (p *prepared) searchChunk(ctx context.Context, c *chunk) {
	defer close(c.results)
	send := func(fr fileResult) { c.results <- fr } // buffered: never blocks
	var args []string
	index := make(map[string]int, len(c.items))
	pending := make([]bool, len(c.items)) // searched by the backend
	// Sniff in parallel: on slow file systems opening every file is the
	// dominant cost, and it overlaps with other chunks' backend runs.
	verdict := make([]string, len(c.items))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range c.items {
		it := &c.items[i]
		if it.err != "" || it.skip || ctx.Err() != nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			verdict[i] = sniff(it.abs, p.e.maxSize)
		})
	}
	wg.Wait()
	for i, it := range c.items {
		if it.err != "" || it.skip || ctx.Err() != nil {
			continue
		}
		switch msg := verdict[i]; msg {
		case "":
			pending[i] = true
			index[it.arg] = i
			args = append(args, it.arg)
		case "binary", "too large":
			// Skipped without error, still counted (FR-LS-SRC-08, 05e).
		default:
			c.items[i].err = msg
		}
	}
	next := 0 // items before next have been delivered
	deliverUpTo := func(end int) {
		for ; next < end; next++ {
			it := c.items[next]
			fr := fileResult{pos: it.pos}
			if it.err != "" {
				fr.err = &FileError{Path: it.rel, Error: it.err}
			}
			send(fr)
		}
	}
	code, stderr := 1, ""
	if len(args) > 0 && ctx.Err() == nil {
		code, stderr = p.runBackend(ctx, c, args, index, pending, &next, deliverUpTo)
	}
	deliverUpTo(len(c.items))
	c.results <- fileResult{last: true, code: code, stderr: stderr}
}

// sniff opens a file the way the backend will and reads its start: ""
// for text, "binary" when it has a NUL byte, "too large" over maxSize,
// else the error.
func sniff(path string, maxSize int64) string {
	f, err := os.Open(path)
	if err != nil {
		return errText(err)
	}
	defer f.Close()
	if maxSize > 0 {
		st, err := f.Stat()
		if err != nil {
			return errText(err)
		}
		if st.Size() > maxSize {
			return "too large"
		}
	}
	var buf [sniffBytes]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return errText(err)
	}
	if bytes.IndexByte(buf[:n], 0) >= 0 {
		return "binary"
	}
	return ""
}

// runBackend streams one backend process's output into per-file events.
func (p *prepared) runBackend(ctx context.Context, c *chunk, args []string, index map[string]int,
	pending []bool, next *int, deliverUpTo func(int)) (int, string) {
	cmd := command(ctx, p.be, p.pl.orderRoot, p.env, backendArgs(p.be, p.e, p.pat, p.fixed, args))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 2, err.Error()
	}
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return 2, p.be.Name + ": " + err.Error()
	}
	cur := -1
	var recs []record
	finish := func() {
		if cur < 0 {
			return
		}
		deliverUpTo(cur)
		it := c.items[cur]
		fr := fileResult{pos: it.pos, events: p.fileEvents(it, recs)}
		if fr.events == nil && len(recs) > 0 {
			fr.err = &FileError{Path: it.rel, Error: "cannot read file for context lines"}
		}
		c.results <- fr
		*next = cur + 1
		cur, recs = -1, recs[:0]
	}
	malformed := false
	br := bufio.NewReaderSize(stdout, 256<<10)
	var pendingLine []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			pendingLine = append(pendingLine, line...)
			continue
		}
		if len(pendingLine) > 0 {
			pendingLine = append(pendingLine, line...)
			line = pendingLine
		}
		if len(line) > 0 {
			var rec record
			var ok bool
			var perr error
			if p.be.Name == "rg" {
				rec, ok, perr = parseRGLine(bytes.TrimRight(line, "\n"))
			} else {
				rec, perr = parseUgrepLine(line)
				ok = perr == nil
				if perr != nil && err == nil && bytes.Count(line, []byte{'"'})%2 == 1 {
					// A raw newline inside a file name: read on.
					pendingLine = append(pendingLine[:0:0], line...)
					continue
				}
			}
			pendingLine = pendingLine[:0]
			if perr != nil {
				malformed = true
			} else if ok {
				i, known := index[string(rec.path)]
				if !known || i < *next && i != cur {
					malformed = true
				} else {
					if i != cur {
						finish()
						cur = i
					}
					recs = appendRecord(recs, rec, p.e.maxPerFile)
				}
			}
		}
		if err != nil {
			break
		}
	}
	finish()
	werr := cmd.Wait()
	code := exitCode(werr)
	if ctx.Err() != nil {
		return 0, ""
	}
	unexplained := p.explainStderr(c, stderr.String(), index, pending)
	if malformed {
		unexplained = strings.TrimSpace(unexplained + "\n" + p.be.Name + ": output could not be parsed")
		code = max(code, 2)
	}
	if unexplained == "" && code >= 2 {
		code = 0
	}
	return code, unexplained
}

// appendRecord merges records of the same line (ugrep prints one per
// match) and applies the per-file cap on matching lines (FR-LS-SRC-10).
func appendRecord(recs []record, rec record, maxPerFile int) []record {
	if n := len(recs); n > 0 && recs[n-1].line == rec.line {
		recs[n-1].spans = append(recs[n-1].spans, rec.spans...)
		return recs
	}
	if maxPerFile > 0 && len(recs) >= maxPerFile {
		return recs
	}
	rec.path = nil
	rec.text = bytes.Clone(rec.text)
	rec.spans = slices.Clone(rec.spans)
	return append(recs, rec)
}

// explainStderr turns backend warnings that name one of the chunk's files
// into per-file errors; the rest is returned as unexplained stderr.
func (p *prepared) explainStderr(c *chunk, stderr string, index map[string]int, pending []bool) string {
	if stderr == "" {
		return ""
	}
	var rest []string
	for _, line := range strings.Split(strings.TrimSpace(lossy(stderr)), "\n") {
		best := ""
		for _, tok := range strings.Fields(line) {
			tok = strings.TrimSuffix(tok, ":")
			if _, ok := index[tok]; ok && len(tok) > len(best) {
				best = tok
			}
		}
		if best == "" {
			rest = append(rest, line)
			continue
		}
		i := index[best]
		if c.items[i].err == "" {
			msg := line
			if k := strings.LastIndex(line, ": "); k >= 0 {
				msg = line[k+2:]
			}
			msg = strings.TrimSpace(msg)
			if k := strings.Index(msg, " (os error"); k >= 0 {
				msg = msg[:k]
			}
			c.items[i].err = strings.ToLower(strings.TrimSuffix(msg, "."))
			// Already delivered files get their error as an extra result.
			c.results <- fileResult{err: &FileError{Path: c.items[i].rel, Error: c.items[i].err}}
		}
	}
	return strings.Join(rest, "\n")
}

// limitedBuffer keeps the first 64 KiB of stderr.
type limitedBuffer struct{ bytes.Buffer }

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if room := 64<<10 - l.Len(); room > 0 {
		l.Buffer.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}

// fileEvents builds a file's events in order: context lines (read from the
// file, for both backends, so they agree) before and after each match.
func (p *prepared) fileEvents(it item, recs []record) []Event {
	if len(recs) == 0 {
		return []Event{}
	}
	var lines [][]byte
	if p.e.context > 0 {
		data, err := os.ReadFile(it.abs)
		if err != nil {
			return nil
		}
		lines = bytes.Split(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] == '\n' {
			lines = lines[:len(lines)-1]
		}
	}
	out := make([]Event, 0, len(recs))
	var emitted uint64 // highest line number already emitted
	isMatch := func(ln uint64, from int) bool {
		for _, r := range recs[from:] {
			if r.line == ln {
				return true
			}
			if r.line > ln {
				return false
			}
		}
		return false
	}
	for k, r := range recs {
		if p.e.context > 0 {
			from := uint64(1)
			if r.line > uint64(p.e.context) {
				from = r.line - uint64(p.e.context)
			}
			for ln := max(from, emitted+1); ln < r.line; ln++ {
				if ln-1 < uint64(len(lines)) && !isMatch(ln, k) {
					out = append(out, Event{Type: "context", Path: it.rel, LineNumber: ln, Line: lossy(string(trimEOL(lines[ln-1])))})
				}
			}
		}
		ev := Event{Type: "match", Path: it.rel, LineNumber: r.line, Line: lossy(string(r.text)), Column: 1}
		if len(r.spans) > 0 {
			ev.Column = uint64(r.spans[0].start) + 1
			ev.MatchText = lossy(string(r.text[r.spans[0].start:r.spans[0].end]))
			ev.Submatches = make([]Span, len(r.spans))
			for i, s := range r.spans {
				ev.Submatches[i] = Span{s.start, s.end}
			}
		}
		out = append(out, ev)
		emitted = max(emitted, r.line)
		if p.e.context > 0 {
			limit := r.line + uint64(p.e.context)
			if k+1 < len(recs) && recs[k+1].line <= limit {
				limit = recs[k+1].line - 1
			}
			for ln := r.line + 1; ln <= limit && ln-1 < uint64(len(lines)); ln++ {
				out = append(out, Event{Type: "context", Path: it.rel, LineNumber: ln, Line: lossy(string(trimEOL(lines[ln-1])))})
				emitted = ln
			}
		}
	}
	return out
}
