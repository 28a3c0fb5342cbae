package scope

import (
	"container/heap"
	"context"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/exec/task"
)

// run is the state of one search: its query, its two budgets, and the best
// max_results candidates seen so far. Only those are kept, so memory grows
// with max_results, not with the size of the scope, while count still counts
// every match (seed 000 §6).
type run struct {
	ctx      context.Context
	q        Query
	lim      Limits
	deadline time.Time
	mem      budget
	mu       sync.Mutex // guards best and count: message decoding runs on several goroutines
	best     candHeap
	count    int
}

// cand is a hit with its sort key: class, then num, then str, then seq.
// Files use str = relative path; emails class 0 (dated) / 1 (undated), num =
// Unix nanoseconds and seq = source ordinal; datasets class 0 (integer key) /
// 1 (other key), num = the integer, str = the key, seq = the row.
type cand struct {
	hit   Hit
	class int
	num   int64
	str   string
	seq   int64
	size  int64 // bytes charged to the memory budget while retained
}

func less(a, b *cand) bool {
	if a.class != b.class {
		return a.class < b.class
	}
	if a.num != b.num {
		return a.num < b.num
	}
	if a.str != b.str {
		return a.str < b.str // byte order of UTF-8 is code-point order
	}
	return a.seq < b.seq
}

// candHeap is a max-heap: its root is the worst retained candidate, the one
// a better newcomer evicts.
type candHeap []*cand

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return less(h[j], h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(*cand)) }
func (h *candHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

func newRun(ctx context.Context, q Query, lim Limits) *run {
	return &run{ctx: ctx, q: q, lim: lim, deadline: lim.Clock().Add(lim.Timeout),
		mem: budget{limit: lim.MemoryBytes}}
}

// tick is called before each item (file, message, record). It ends the
// search when the caller cancelled it or the wall clock ran out.
func (r *run) tick() error {
	if err := r.ctx.Err(); err != nil {
		// A caller's deadline is a wall clock too; a plain cancel (a pane
		// dropping a superseded query) is not a resource problem.
		if errors.Is(err, context.DeadlineExceeded) {
			return task.Errorf(task.ResourceExhausted, "wall clock: the caller's deadline passed; no partial results")
		}
		return task.Errorf(task.ExecutionFailed, "search cancelled: %v", err)
	}
	if r.lim.Clock().After(r.deadline) {
		return task.Errorf(task.ResourceExhausted, "wall clock: the search ran longer than %s; no partial results", r.lim.Timeout)
	}
	return nil
}

// offer counts a match and keeps it if it is among the best max_results.
// It builds the candidate lazily: most matches of a big scope lose to the
// retained ones on the key alone, before any snippet is cut.
func (r *run) offer(key cand, build func() Hit) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	if len(r.best) >= r.q.MaxResults && !less(&key, r.best[0]) {
		return nil
	}
	c := key
	c.hit = build()
	c.size = candOverhead + int64(len(c.hit.ID)+len(c.hit.Field)+len(c.hit.Snippet)+len(c.hit.Timestamp)+len(c.str)+
		len(c.hit.Sender)+len(c.hit.Subject)+len(c.hit.Summary))
	if err := r.mem.grow(c.size); err != nil {
		return err
	}
	heap.Push(&r.best, &c)
	if len(r.best) > r.q.MaxResults {
		old := heap.Pop(&r.best).(*cand)
		r.mem.release(old.size)
	}
	return nil
}

// candOverhead approximates the fixed bytes of a retained candidate (the
// struct, its string headers and the heap slot).
const candOverhead = 160

func (r *run) finish() Hits {
	out := make([]Hit, len(r.best))
	for i := len(r.best) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&r.best).(*cand).hit
	}
	return Hits{Hits: out, Count: r.count, Truncated: r.count > r.q.MaxResults}
}

// budget counts the bytes a search holds. It is an account, not a runtime
// measurement: readers charge what they buffer (a message's raw bytes, its
// decoded body, a record, a directory listing) before holding it and release
// it when done, and retained results stay charged. Going over the limit is
// RESOURCE_EXHAUSTED, and the search returns nothing. Go's own overhead (GC
// headroom, buffers of fixed size) is outside the account; the benchmarks
// report the real peak heap next to the accounted peak.
type budget struct {
	mu                sync.Mutex
	limit, held, peak int64
}

func (b *budget) grow(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.limit {
		return task.Errorf(task.ResourceExhausted, "memory: the search would hold %d bytes, over the limit of %d bytes; no partial results", b.held+n, b.limit)
	}
	b.held += n
	if b.held > b.peak {
		b.peak = b.held
	}
	return nil
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
}

// room is how many more bytes may be charged.
func (b *budget) room() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit - b.held
}

// SnippetRadius is how many code points of context a snippet keeps on each
// side of the first match.
const SnippetRadius = 40

// snippet cuts the first match at byte offset at (length n) out of text with
// SnippetRadius code points either side, marks cut ends with "…", and turns
// ASCII control characters (newlines, tabs) into spaces so a snippet is one
// line. It returns the match's byte offsets within the snippet.
func snippet(text string, at, n int) (string, int, int) {
	// The query is trimmed, so the match never touches the text's leading or
	// trailing white space, which a snippet leaves out.
	lo := at - len(strings.TrimLeftFunc(text[:at], unicode.IsSpace))
	hi := len(strings.TrimRightFunc(text, unicode.IsSpace))
	hi = max(hi, at+n)
	start := at
	for i := 0; i < SnippetRadius && start > lo; i++ {
		_, w := utf8.DecodeLastRuneInString(text[:start])
		start -= w
	}
	end := at + n
	for i := 0; i < SnippetRadius && end < hi; i++ {
		_, w := utf8.DecodeRuneInString(text[end:hi])
		end += w
	}
	var b strings.Builder
	b.Grow(end - start + 8)
	if start > lo {
		b.WriteString("…")
	}
	ms := b.Len() + (at - start)
	for i := start; i < end; i++ {
		c := text[i]
		if c < 0x20 || c == 0x7f {
			c = ' '
		}
		b.WriteByte(c)
	}
	if end < hi {
		b.WriteString("…")
	}
	return b.String(), ms, ms + n
}

// matchFields finds the query in the fields in order and offers the item
// once, under the first field that contains it: one result per item, so
// count counts messages or records, not field hits.
// label, when not nil, adds the fields that describe the item in a list
// (Hit.Sender, Subject, Summary); it runs only for an item that is kept.
func (r *run) matchFields(key cand, id string, names, values []string, ts string, label func(*Hit)) error {
	for i, val := range values {
		at := strings.Index(val, r.q.Text)
		if at < 0 {
			continue
		}
		name := names[i]
		return r.offer(key, func() Hit {
			s, ms, me := snippet(val, at, len(r.q.Text))
			h := Hit{ID: id, Field: name, Snippet: s, MatchStart: ms, MatchEnd: me, Timestamp: ts}
			if label != nil {
				label(&h)
			}
			return h
		})
	}
	return nil
}

// labelMax is the most bytes a list label (a sender, a subject) keeps.
const labelMax = 120

// clip cuts s to at most n bytes at a rune boundary, marking the cut, and
// turns line breaks into spaces: a label is one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
