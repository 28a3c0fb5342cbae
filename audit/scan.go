package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Query selects entries by exact field values; an empty field matches any.
// It is what `vigil audit show --task/--event` and `tail` filter with.
type Query struct {
	TaskID string
	Event  string
}

// Empty reports whether q selects every entry.
func (q Query) Empty() bool { return q.TaskID == "" && q.Event == "" }

// Match reports whether e is selected.
func (q Query) Match(e Entry) bool {
	return (q.TaskID == "" || e.TaskID == q.TaskID) && (q.Event == "" || e.Event == q.Event)
}

// Bytes is the byte test for a line: a canonical line whose entry matches
// holds `"task_id":"X"` (and `"event":"E"`) exactly as the log encodes the
// value, so lines without them are skipped unparsed. A line holding them
// may still not match (the text can sit inside details): confirm with Match
// on the parsed entry. Nil when q is empty.
func (q Query) Bytes() func(line []byte) bool {
	var needles [][]byte
	if q.TaskID != "" {
		needles = append(needles, fieldNeedle("task_id", q.TaskID))
	}
	if q.Event != "" {
		needles = append(needles, fieldNeedle("event", q.Event))
	}
	if len(needles) == 0 {
		return nil
	}
	return func(line []byte) bool {
		for _, n := range needles {
			if !bytes.Contains(line, n) {
				return false
			}
		}
		return true
	}
}

// fieldNeedle is `"key":"value"` as a canonical line writes it.
func fieldNeedle(key, value string) []byte {
	n := append([]byte(`"`+key+`":"`), appendStringValue(nil, value)...)
	return append(n, '"')
}

// ScanContext streams the complete lines of the log from offset from on and
// calls yield with each line match accepts, parsed (a line that is not a
// valid entry has Line.Err set). match sees the raw bytes of a line and
// rules it out before any decoding: lines it refuses cost only the test,
// and are not checked (`vigil audit verify` and Verify do that). A nil match
// accepts every line, so every bad line is yielded too. Memory stays
// bounded by the longest line.
//
// It stops when yield returns false, or when ctx is done (then the error is
// ctx.Err()), and returns the offset after the last line it read: pass it as
// from to continue with what is appended later.
func ScanContext(ctx context.Context, path string, from int64, match func(line []byte) bool, yield func(Line) bool) (int64, error) {
	n := 0
	return eachChunk(ctx, path, from, func(chunk []byte, base int64) bool {
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			line := chunk[:i]
			if match == nil || match(line) {
				e, err := parseLineFast(line)
				if !yield(Line{Offset: base, Entry: e, Err: err}) {
					return false
				}
			}
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return false
			}
			base += int64(i) + 1
			chunk = chunk[i+1:]
		}
		return true
	})
}

// ScanQuery is ScanContext for the entries q selects, as grep would find
// them: it looks for q's needle (`"task_id":"X"`, else `"event":"E"`, as
// the log encodes the value) across whole chunks of the file and parses only
// the lines that hold it, then keeps those whose entry matches. Lines
// without the needle are never looked at one by one; a bad line is yielded
// (Line.Err set) when it holds the needle. An empty q yields every line.
func ScanQuery(ctx context.Context, path string, from int64, q Query, yield func(Line) bool) (int64, error) {
	if q.Empty() {
		return ScanContext(ctx, path, from, nil, yield)
	}
	needle := fieldNeedle("event", q.Event)
	if q.TaskID != "" { // the more selective of the two
		needle = fieldNeedle("task_id", q.TaskID)
	}
	var find *finder
	return eachChunk(ctx, path, from, func(chunk []byte, base int64) bool {
		if find == nil {
			find = newFinder(needle, chunk)
		}
		for {
			k := find.index(chunk)
			if k < 0 {
				return true
			}
			start := bytes.LastIndexByte(chunk[:k], '\n') + 1
			end := start + bytes.IndexByte(chunk[start:], '\n') // every chunk ends with a newline
			e, err := parseLineFast(chunk[start:end])
			if err != nil || q.Match(e) {
				if !yield(Line{Offset: base + int64(start), Entry: e, Err: err}) {
					return false
				}
			}
			base += int64(end) + 1
			chunk = chunk[end+1:]
		}
	})
}

// ScanRaw calls fn with the offset and bytes (without the newline) of every
// complete line from offset from on, parsing nothing: a viewer builds its
// index of offsets with it, or tests lines with its own byte filter. line is
// valid only during the call. Stops and returns as ScanContext does.
func ScanRaw(ctx context.Context, path string, from int64, fn func(offset int64, line []byte) bool) (int64, error) {
	n := 0
	return eachChunk(ctx, path, from, func(chunk []byte, base int64) bool {
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if !fn(base, chunk[:i]) {
				return false
			}
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return false
			}
			base += int64(i) + 1
			chunk = chunk[i+1:]
		}
		return true
	})
}

// ReadLinesAt parses the lines that start at the given offsets (a viewer's
// visible rows, from its index): it reads only those lines. An offset past
// the end, or a line without its newline yet, is an error.
func ReadLinesAt(path string, offsets []int64) ([]Line, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([]Line, 0, len(offsets))
	buf := make([]byte, 4096)
	for _, off := range offsets {
		line, err := lineAt(f, off, buf)
		if err != nil {
			return out, err
		}
		e, perr := parseLineFast(line)
		out = append(out, Line{Offset: off, Entry: e, Err: perr})
	}
	return out, nil
}

// lineAt reads the line starting at off, growing past buf for a long line.
func lineAt(f *os.File, off int64, buf []byte) ([]byte, error) {
	var line []byte
	for pos := off; ; {
		n, err := f.ReadAt(buf, pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append(line, buf[:i]...), nil
		}
		line = append(line, buf[:n]...)
		pos += int64(n)
		if err == io.EOF || n == 0 {
			return nil, fmt.Errorf("audit: no complete line at offset %d", off)
		}
		if err != nil {
			return nil, err
		}
	}
}

// finder looks for a needle the way grep does: it jumps with IndexByte (SIMD)
// between occurrences of the needle's rarest byte and compares only there.
// bytes.Index starts from the needle's first byte, and the quote every
// needle here starts with is among a log's commonest bytes: that made it
// four times slower than grep.
type finder struct {
	needle []byte
	rare   int // index in needle of the byte to jump by
}

// newFinder picks the needle's rarest byte as counted in sample (the first
// chunk of the log: what the rest will look like).
func newFinder(needle, sample []byte) *finder {
	var count [256]int
	for _, c := range sample {
		count[c]++
	}
	f := &finder{needle: needle}
	for i, c := range needle {
		if count[c] < count[needle[f.rare]] {
			f.rare = i
		}
	}
	return f
}

// index is bytes.Index(s, f.needle).
func (f *finder) index(s []byte) int {
	n, r, c := len(f.needle), f.rare, f.needle[f.rare]
	for i := r; i+n-r <= len(s); {
		j := bytes.IndexByte(s[i:len(s)-(n-r)+1], c)
		if j < 0 {
			return -1
		}
		start := i + j - r
		if bytes.Equal(s[start:start+n], f.needle) {
			return start
		}
		i += j + 1
	}
	return -1
}

// chunkSize is how much of the log a scan reads at a time.
const chunkSize = 1 << 20

// eachChunk calls fn with the log's complete lines from offset from on, a
// chunk of whole lines at a time (each chunk ends with a newline), and base,
// the file offset of the chunk's first byte. A line longer than a chunk
// grows the buffer to hold it; an unterminated last line is left for a
// later read. It stops when fn returns false or ctx is done (checked between
// chunks), and returns the offset after the last complete line passed on.
func eachChunk(ctx context.Context, path string, from int64, fn func(chunk []byte, base int64) bool) (int64, error) {
	f, err := open(path)
	if errors.Is(err, os.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, err
	}
	defer f.Close()
	buf := make([]byte, chunkSize)
	off := from // file offset of buf[0]
	have := 0   // bytes of buf filled
	for {
		if err := ctx.Err(); err != nil {
			return off, err
		}
		if have == len(buf) { // one line fills the buffer: make room for the rest of it
			buf = append(buf, make([]byte, len(buf))...)
		}
		n, rerr := f.ReadAt(buf[have:], off+int64(have))
		have += n
		cut := bytes.LastIndexByte(buf[:have], '\n') + 1
		if cut > 0 {
			if !fn(buf[:cut], off) {
				return off + int64(cut), ctx.Err()
			}
			off += int64(cut)
			have = copy(buf, buf[cut:have])
		}
		if rerr == io.EOF || n == 0 && rerr == nil {
			return off, ctx.Err()
		}
		if rerr != nil {
			return off, rerr
		}
	}
}

// Searcher runs one scan at a time, for a viewer whose filter changes as the
// person types: Start cancels the pass before it and waits for it to end, so
// old passes never pile up (memory stays flat) and none yields after Start
// returns.
type Searcher struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Start cancels the running pass, if any, waits for it, then runs
// ScanContext in a new goroutine. The result arrives on the channel (one
// value, then closed); a pass cancelled by a later Start or by ctx ends with
// context.Canceled. yield runs on the pass's goroutine and must not wait for
// the goroutine that calls Start (a UI loop): Start waits for the old pass.
// Let yield collect offsets under a lock, or send without blocking.
func (s *Searcher) Start(ctx context.Context, path string, from int64, match func([]byte) bool, yield func(Line) bool) <-chan ScanResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	out := make(chan ScanResult, 1)
	s.cancel, s.done = cancel, done
	go func() {
		defer close(done)
		defer close(out)
		defer cancel()
		end, err := ScanContext(ctx, path, from, match, func(l Line) bool {
			// checked per line so a cancelled pass stops yielding at once
			return ctx.Err() == nil && yield(l)
		})
		out <- ScanResult{End: end, Err: err}
	}()
	return out
}

// Stop cancels the running pass and waits for it to end.
func (s *Searcher) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

func (s *Searcher) stopLocked() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		s.cancel, s.done = nil, nil
	}
}

// ScanResult is how a Searcher pass ended: the offset after the last line it
// read, and ctx's error when it was cancelled.
type ScanResult struct {
	End int64
	Err error
}
