package auditpane

import (
	"context"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/sahilm/fuzzy"
)

// filterSpec is what the view is filtered by.
type filterSpec struct {
	event, outcome, query string
}

func (sp filterSpec) empty() bool { return sp == filterSpec{} }

// keeps says whether a row passes the filters (the query fuzzily, as the
// pane has always matched: case-folded, characters in order).
func (sp filterSpec) keeps(r row) bool {
	if !sp.keepsColumns([]byte(r.event), []byte(r.outcome)) {
		return false
	}
	return sp.query == "" || len(fuzzy.Find(sp.query, []string{r.hay()})) == 1
}

func (sp filterSpec) keepsColumns(event, outcome []byte) bool {
	if sp.event != "" && string(event) != sp.event {
		return false
	}
	ok := string(outcome) == "ok"
	return !(sp.outcome == "ok" && !ok) && !(sp.outcome == "failed" && ok)
}

// lineFilter judges raw lines against a spec, parsing only the lines the
// byte scan cannot decide.
type lineFilter struct {
	sp  filterSpec
	pat pattern
	pre prefilter
	buf []byte // scratch: a row's filter text
	out []byte // scratch: a row's outcome
}

func newLineFilter(sp filterSpec) *lineFilter {
	return &lineFilter{sp: sp, pat: newPattern(sp.query), pre: newPrefilter(sp.query)}
}

// maybe is the cheap test: whether the row of a line read by readHead (valid
// or damaged) could pass; every row that passes passes it.
func (f *lineFilter) maybe(h headFields, damaged bool) bool {
	if f.sp.event != "" || f.sp.outcome != "" {
		event, outcome := h.event, damagedOutcomeB
		if damaged {
			event = damagedEventB
		} else {
			f.out = h.outcome(f.out[:0])
			outcome = f.out
		}
		if !f.sp.keepsColumns(event, outcome) {
			return false
		}
	}
	if f.sp.query == "" {
		return true
	}
	f.buf = h.hay(f.buf[:0], damaged)
	return f.pat.within(f.buf)
}

var damagedEventB, damagedOutcomeB = []byte(damagedEvent), []byte(damagedOutcome)

// keeps says whether the row of line passes; verified says the chain has
// verified the line, so it is valid (its row is the valid one).
func (f *lineFilter) keeps(line []byte, verified bool) bool {
	if f.pre.rejects(line, verified) {
		return false // most lines of a large log, for a query
	}
	h, ok := readHead(line)
	if !ok {
		return f.sp.keeps(rowOf(line))
	}
	if verified {
		if !f.maybe(h, false) {
			return false
		}
		return f.sp.query == "" || len(fuzzy.Find(f.sp.query, []string{string(h.hay(nil, false))})) == 1
	}
	if !f.maybe(h, false) && !f.maybe(h, true) && tailShaped(line, h) {
		return false // neither row it can be passes: no need to know which
	}
	return f.sp.keeps(rowOf(line))
}

// A filter pass scans lines [from, to) of the log for a spec and streams the
// matching line numbers back. Exactly one pass runs at a time: a new one
// cancels the one before and starts scanning only once it has stopped.
type filterPass struct {
	gen     int
	cancel  context.CancelFunc
	done    chan struct{} // closed when the pass's goroutine has returned
	scanned atomic.Int64  // lines judged so far
	out     chan filterBatch
	to      int // the line the pass ends at
}

// filterBatch is one batch of a pass's results.
type filterBatch struct {
	gen     int
	matches []int // line numbers, ascending
	next    int   // lines [from, next) are judged
	done    bool
	err     error
}

type filterBatchMsg struct {
	filterBatch
	pass *filterPass
}

// passHook, when set by a test, runs after every chunk a pass judges, as the
// pass hands the chunk's matches on (in line order).
var passHook func(*filterPass)

// passChunk is how many bytes a pass reads at once (and how often it checks
// for cancellation).
const passChunk = 4 << 20

// startPass starts a pass over lines [from, to) of offs (the index, shared
// read-only: it is only ever appended to) and returns a command for its first
// batch.
func startPass(prev *filterPass, gen int, path string, offs []int64, end int64, from, to int, sp filterSpec, verified *atomic.Int64) (*filterPass, tea.Cmd) {
	ctx, cancel := context.WithCancel(context.Background())
	fp := &filterPass{gen: gen, cancel: cancel, done: make(chan struct{}), out: make(chan filterBatch, 4), to: to}
	var wait <-chan struct{}
	if prev != nil {
		prev.cancel()
		wait = prev.done
	}
	go func() {
		defer close(fp.done)
		defer close(fp.out)
		if wait != nil {
			<-wait // one pass at a time
		}
		err := fp.run(ctx, path, offs, end, from, to, sp, verified)
		select { // unless cancelled meanwhile: nobody reads a cancelled pass
		case fp.out <- filterBatch{gen: gen, next: to, done: true, err: err}:
		case <-ctx.Done():
		}
	}()
	return fp, fp.wait()
}

// wait is a command that delivers the pass's next batch.
func (fp *filterPass) wait() tea.Cmd {
	return func() tea.Msg {
		b, ok := <-fp.out
		if !ok {
			return nil // cancelled
		}
		return filterBatchMsg{filterBatch: b, pass: fp}
	}
}

// run judges the pass's lines chunk by chunk: workers (one per core) each
// read a chunk of their own and judge it, a few chunks ahead, so reading
// the file overlaps judging; this goroutine hands the results on in order.
func (fp *filterPass) run(ctx context.Context, path string, offs []int64, end int64, from, to int, sp filterSpec, verified *atomic.Int64) error {
	if from >= to {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if verified == nil {
		verified = &atomic.Int64{}
	}
	ctx, stop := context.WithCancel(ctx)
	lines := passLines{offs: offs, end: end}
	workers := min(runtime.GOMAXPROCS(0), 4)
	ahead := 2 * workers // chunks in flight: each worker has one more waiting
	jobs := make(chan chunkJob, ahead)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lf, buf := newLineFilter(sp), make([]byte, passChunk)
			for job := range jobs {
				if ctx.Err() != nil {
					job.res <- chunkResult{} // nobody reads it: the pass is cancelled
					continue
				}
				job.res <- lines.judge(ctx, f, buf, lf, job.i, job.j, int(verified.Load()))
			}
		}()
	}
	defer func() {
		stop() // on an error too: the workers' chunks are not wanted
		close(jobs)
		wg.Wait() // the workers are done before the pass is (and before f closes)
	}()

	var queue []chunkJob // in line order
	next := from
	for {
		for next < to && len(queue) < ahead { // never blocks: jobs holds ahead
			job := chunkJob{i: next, j: lines.chunkEnd(next, to), res: make(chan chunkResult, 1)}
			jobs <- job
			queue = append(queue, job)
			next = job.j
		}
		if len(queue) == 0 {
			return nil
		}
		var r chunkResult
		select {
		case r = <-queue[0].res:
		case <-ctx.Done():
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if r.err != nil {
			return r.err
		}
		job := queue[0]
		queue = queue[1:]
		fp.scanned.Add(int64(job.j - job.i))
		if passHook != nil {
			passHook(fp)
		}
		select {
		case fp.out <- filterBatch{gen: fp.gen, matches: r.matches, next: job.j}:
		case <-ctx.Done():
			return nil
		}
	}
}

// chunkJob is lines [i, j) of a pass, to be judged into res.
type chunkJob struct {
	i, j int
	res  chan chunkResult // buffered: a worker never waits on it
}

type chunkResult struct {
	matches []int
	err     error
}

// passLines are the lines of the index a pass reads.
type passLines struct {
	offs []int64
	end  int64 // where the last line ends
}

func (l passLines) lineEnd(i int) int64 {
	if i+1 < len(l.offs) {
		return l.offs[i+1]
	}
	return l.end
}

// chunkEnd is where the chunk starting at line i ends: whole lines up to
// passChunk bytes, at least one (a longer line is read alone), before to.
func (l passLines) chunkEnd(i, to int) int {
	start := l.offs[i]
	j := i + 1
	for j < to && l.lineEnd(j)-start <= passChunk {
		j++
	}
	return j
}

// judge reads lines [i, j) into buf (or a buffer of their size, when
// larger) and returns those lf keeps, ascending; the lines before known
// are verified.
func (l passLines) judge(ctx context.Context, f *os.File, buf []byte, lf *lineFilter, i, j, known int) chunkResult {
	start := l.offs[i]
	size := l.lineEnd(j-1) - start
	if size > int64(len(buf)) {
		buf = make([]byte, size)
	}
	chunk := buf[:size]
	if n, err := f.ReadAt(chunk, start); n < len(chunk) {
		// the log shrank under the index (the live reload redoes it): judge
		// no stale bytes of buf
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return chunkResult{err: err}
	}
	var matches []int
	for k := i; k < j; k++ {
		if k&1023 == 0 && ctx.Err() != nil {
			return chunkResult{} // cancelled: nobody reads it
		}
		line := chunk[l.offs[k]-start : l.lineEnd(k)-start-1] // without its newline
		if lf.keeps(line, k < known) {
			matches = append(matches, k)
		}
	}
	return chunkResult{matches: matches}
}
