package index

import (
	"context"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sahilm/fuzzy"

	"github.com/vigil-dev/vigil/audit"
)

// Filter is what a viewer's rows are filtered by. It judges rows (the shown
// columns, damaged lines included as the damaged row), where audit.Query
// alone judges entries.
type Filter struct {
	// Query holds the exact values `vigil audit show --task/--event` select
	// by, compared with the row's shown column: for a valid entry whose
	// value is plain text the two agree (TestFilterAgreesWithQuery); the
	// damaged row's event is DamagedEvent.
	Query audit.Query
	// Outcome is "", "ok" (the outcome is ok) or "failed" (it is not).
	Outcome string
	// Text is the fuzzy filter: its characters in order in Row.Hay, case
	// folded, as github.com/sahilm/fuzzy matches.
	Text string
}

// Empty says the filter keeps every row.
func (f Filter) Empty() bool { return f == Filter{} }

// Keeps says whether a row passes the filter.
func (f Filter) Keeps(r Row) bool {
	if !f.keepsColumns([]byte(r.Event), []byte(r.Task), []byte(r.Outcome)) {
		return false
	}
	return f.Text == "" || len(fuzzy.Find(f.Text, []string{r.Hay()})) == 1
}

// columns says whether the exact-value parts of the filter are set.
func (f Filter) columns() bool {
	return f.Query.Event != "" || f.Query.TaskID != "" || f.Outcome != ""
}

func (f Filter) keepsColumns(event, task, outcome []byte) bool {
	if f.Query.Event != "" && string(event) != f.Query.Event {
		return false
	}
	if f.Query.TaskID != "" && string(task) != f.Query.TaskID {
		return false
	}
	ok := string(outcome) == "ok"
	return !(f.Outcome == "ok" && !ok) && !(f.Outcome == "failed" && ok)
}

// LineFilter judges raw lines of the log against a Filter, parsing only the
// lines the byte scan cannot decide: the prefilter rejects most lines of a
// large log for a fuzzy text in place, readHead reads the columns of a
// canonical line without decoding JSON, and only the rest are parsed.
// A LineFilter keeps scratch space: one per goroutine.
type LineFilter struct {
	sp  Filter
	pat pattern
	pre prefilter
	buf []byte // scratch: a row's filter text
	out []byte // scratch: a row's outcome
}

// NewLineFilter prepares f for judging raw lines.
func NewLineFilter(f Filter) *LineFilter {
	return &LineFilter{sp: f, pat: newPattern(f.Text), pre: newPrefilter(f.Text)}
}

// maybe is the cheap test: whether the row of a line read by readHead (valid
// or damaged) could pass; every row that passes passes it.
func (f *LineFilter) maybe(h headFields, damaged bool) bool {
	if f.sp.columns() {
		event, outcome := h.event, damagedOutcomeB
		if damaged {
			event = damagedEventB
		} else {
			f.out = h.outcome(f.out[:0])
			outcome = f.out
		}
		if !f.sp.keepsColumns(event, h.task, outcome) {
			return false
		}
	}
	if f.sp.Text == "" {
		return true
	}
	f.buf = h.hay(f.buf[:0], damaged)
	return f.pat.within(f.buf)
}

var damagedEventB, damagedOutcomeB = []byte(DamagedEvent), []byte(DamagedOutcome)

// Keeps says whether the row of line (without its newline) passes; verified
// says the chain has verified the line, so it is valid (its row is the
// valid one).
func (f *LineFilter) Keeps(line []byte, verified bool) bool {
	if f.pre.rejects(line, verified) {
		return false // most lines of a large log, for a query
	}
	h, ok := readHead(line)
	if !ok {
		return f.sp.Keeps(RowOf(line))
	}
	if verified {
		if !f.maybe(h, false) {
			return false
		}
		return f.sp.Text == "" || len(fuzzy.Find(f.sp.Text, []string{string(h.hay(nil, false))})) == 1
	}
	if !f.maybe(h, false) && !f.maybe(h, true) && tailShaped(line, h) {
		return false // neither row it can be passes: no need to know which
	}
	return f.sp.Keeps(RowOf(line))
}

// A Pass scans lines [from, to) of the log for a Filter and streams the
// matching line numbers back. Exactly one pass runs at a time: a new one
// cancels the one before and starts scanning only once it has stopped.
type Pass struct {
	cancel  context.CancelFunc
	done    chan struct{} // closed when the pass's goroutine has returned
	scanned atomic.Int64  // lines judged so far
	out     chan Batch
	to      int // the line the pass ends at
}

// Batch is one batch of a pass's results.
type Batch struct {
	Matches []int // line numbers, ascending
	Next    int   // lines [from, Next) are judged
	Done    bool  // the last batch: Err says why the pass ended early
	Err     error
}

// passHook, when set by a test, runs after every chunk a pass judges, as the
// pass hands the chunk's matches on (in line order).
var passHook func(*Pass)

// passChunk is how many bytes a pass reads at once (and how often it checks
// for cancellation).
const passChunk = 4 << 20

// StartPass starts a pass over lines [from, to) of lines (the index, shared
// read-only: it is only ever appended to) of the log at path, after
// cancelling prev (nil for none). The lines before verified's value are the
// ones the chain verified: the filter trusts them unparsed (nil: none). The
// pass ends when ctx does too.
func StartPass(ctx context.Context, prev *Pass, path string, lines Span, from, to int, f Filter, verified *atomic.Int64) *Pass {
	ctx, cancel := context.WithCancel(ctx)
	fp := &Pass{cancel: cancel, done: make(chan struct{}), out: make(chan Batch, 4), to: to}
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
		err := fp.run(ctx, path, lines, from, to, f, verified)
		if ctx.Err() != nil {
			return // cancelled: run may have stopped part way, so no last batch
		}
		select { // unless cancelled meanwhile: nobody reads a cancelled pass
		case fp.out <- Batch{Next: to, Done: true, Err: err}:
		case <-ctx.Done():
		}
	}()
	return fp
}

// Next waits for the pass's next batch; false when the pass was cancelled
// (or its last batch was taken).
func (fp *Pass) Next() (Batch, bool) {
	b, ok := <-fp.out
	return b, ok
}

// Cancel stops the pass; Done is closed once it has.
func (fp *Pass) Cancel() { fp.cancel() }

// Done is closed when the pass's goroutines have returned.
func (fp *Pass) Done() <-chan struct{} { return fp.done }

// To is the line the pass ends at.
func (fp *Pass) To() int { return fp.to }

// Scanned is how many lines the pass has judged so far.
func (fp *Pass) Scanned() int64 { return fp.scanned.Load() }

// run judges the pass's lines chunk by chunk: workers (one per core) each
// read a chunk of their own and judge it, a few chunks ahead, so reading
// the file overlaps judging; this goroutine hands the results on in order.
func (fp *Pass) run(ctx context.Context, path string, lines Span, from, to int, sp Filter, verified *atomic.Int64) error {
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
	workers := min(runtime.GOMAXPROCS(0), 4)
	ahead := 2 * workers // chunks in flight: each worker has one more waiting
	jobs := make(chan chunkJob, ahead)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lf, buf := NewLineFilter(sp), make([]byte, passChunk)
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
		case fp.out <- Batch{Matches: r.matches, Next: job.j}:
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

// Span is lines of the log by where they start: Offs[i] is where line i
// starts, End where the last one ends (just after its newline).
type Span struct {
	Offs []int64
	End  int64
}

// LineEnd is where line i ends (just after its newline).
func (l Span) LineEnd(i int) int64 {
	if i+1 < len(l.Offs) {
		return l.Offs[i+1]
	}
	return l.End
}

// Line is line i's bytes in b (which holds the log from offset 0), without
// its newline.
func (l Span) Line(b []byte, i int) []byte { return b[l.Offs[i] : l.LineEnd(i)-1] }

// chunkEnd is where the chunk starting at line i ends: whole lines up to
// passChunk bytes, at least one (a longer line is read alone), before to.
func (l Span) chunkEnd(i, to int) int {
	start := l.Offs[i]
	j := i + 1
	for j < to && l.LineEnd(j)-start <= passChunk {
		j++
	}
	return j
}

// judge reads lines [i, j) into buf (or a buffer of their size, when
// larger) and returns those lf keeps, ascending; the lines before known
// are verified.
func (l Span) judge(ctx context.Context, f *os.File, buf []byte, lf *LineFilter, i, j, known int) chunkResult {
	start := l.Offs[i]
	size := l.LineEnd(j-1) - start
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
		line := chunk[l.Offs[k]-start : l.LineEnd(k)-start-1] // without its newline
		if lf.Keeps(line, k < known) {
			matches = append(matches, k)
		}
	}
	return chunkResult{matches: matches}
}
