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

// passHook, when set by a test, runs after every chunk a pass judges.
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

func (fp *filterPass) run(ctx context.Context, path string, offs []int64, end int64, from, to int, sp filterSpec, verified *atomic.Int64) error {
	if from >= to {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// the lines of a chunk are judged by one filter per core, in order
	filters := make([]*lineFilter, min(runtime.GOMAXPROCS(0), 4))
	for w := range filters {
		filters[w] = newLineFilter(sp)
	}
	lineEnd := func(i int) int64 {
		if i+1 < len(offs) {
			return offs[i+1]
		}
		return end
	}
	buf := make([]byte, passChunk)
	if verified == nil {
		verified = &atomic.Int64{}
	}
	for i := from; i < to; {
		if ctx.Err() != nil {
			return nil
		}
		// read whole lines, at least one (a line longer than the buffer is read alone)
		start := offs[i]
		j := i + 1
		for j < to && lineEnd(j)-start <= passChunk {
			j++
		}
		size := lineEnd(j-1) - start
		chunk := buf
		if size > int64(len(buf)) {
			chunk = make([]byte, size)
		}
		chunk = chunk[:size]
		if _, err := f.ReadAt(chunk, start); err != nil && err != io.EOF {
			return err
		}
		known := int(verified.Load())
		matches := judge(filters, i, j, func(k int) ([]byte, bool) {
			return chunk[offs[k]-start : lineEnd(k)-start-1], k < known // without its newline
		})
		fp.scanned.Add(int64(j - i))
		i = j
		if passHook != nil {
			passHook(fp)
		}
		select {
		case fp.out <- filterBatch{gen: fp.gen, matches: matches, next: i}:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// judge returns the lines in [i, j) the filters keep, ascending, splitting
// the range between them (each filter has scratch space of its own).
func judge(filters []*lineFilter, i, j int, line func(k int) ([]byte, bool)) []int {
	parts := make([][]int, len(filters))
	per := (j - i + len(filters) - 1) / len(filters)
	var wg sync.WaitGroup
	for w, lf := range filters {
		lo, hi := i+w*per, min(i+(w+1)*per, j)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := lo; k < hi; k++ {
				if b, verified := line(k); lf.keeps(b, verified) {
					parts[w] = append(parts[w], k)
				}
			}
		}()
	}
	wg.Wait()
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
