package search

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// searchChunk runs the backend over the chunk's files and delivers one
// fileResult per item, in item order, once the backend has finished: only
// then are all per-file errors (some of which the backend reports on
// stderr) known, so errors[] keeps the walk order.
func (p *prepared) searchChunk(ctx context.Context, c *chunk) {
	defer close(c.results)
	var args []string
	index := make(map[string]int, len(c.items))
	for i := range c.items {
		it := &c.items[i]
		if it.err != "" || it.skip {
			continue
		}
		index[it.arg] = i
		args = append(args, it.arg)
	}
	if ctx.Err() != nil {
		return
	}
	// Files are sniffed (a NUL in the first 8 KiB means binary: skipped,
	// counted) before the backend sees them, in parallel and with raw
	// system calls. Only ugrep, with a pattern that cannot match a NUL,
	// has its files sniffed after they matched (see sniffAfter): rg prints
	// a binary file's NUL-laden "lines" whole (one submatch entry per NUL
	// for "\x00"), many times the file's size, and a pattern that can
	// match a NUL does the same to ugrep's records.
	var verdict []string
	if p.sniffAfter() {
		verdict = p.statEach(c, index)
	} else {
		verdict = p.sniffAll(c, index)
	}
	args = args[:0]
	for i := range c.items {
		if _, ok := index[c.items[i].arg]; ok && verdict[i] == "" {
			args = append(args, c.items[i].arg)
		} else if ok && verdict[i] != "binary" && verdict[i] != "too large" {
			c.items[i].err = verdict[i]
		}
	}
	recs := make([]fileRecs, len(c.items))
	code, stderr := 1, ""
	if len(args) > 0 {
		code, stderr = p.runBackend(ctx, c, args, index, recs)
	} else {
		p.proof.verify() // no run here to settle the pattern; the ordered path waits for it
	}
	if ctx.Err() != nil {
		return
	}
	// Files are read for their lines (ugrep) and context on all cores, a
	// block at a time, and delivered in order after each block. Once this
	// chunk alone holds more than max_results events, the consumer stops
	// within it (FR-LS-06a): later files need no events.
	const block = 64
	built := 0
	results := make([]fileResult, block)
	for lo := 0; lo < len(c.items); lo += block {
		hi := min(lo+block, len(c.items))
		if built > p.e.maxResults && !c.whole {
			for _, it := range c.items[lo:hi] {
				c.results <- fileResult{pos: it.pos} // never read: the consumer stops before it
			}
			continue
		}
		forEachParallel(hi-lo, 8, func(k int, _ []byte) {
			results[k] = p.fileResult(c.items[lo+k], verdict[lo+k], &recs[lo+k])
		})
		for k := range hi - lo {
			built += len(results[k].events)
			c.results <- results[k] // buffered: never blocks
			results[k] = fileResult{}
		}
	}
	c.results <- fileResult{last: true, code: code, stderr: stderr}
}

// fileResult is one file's answer once the backend has finished: its
// events, or its per-file error, or nothing (no match, or skipped without
// error but counted: FR-LS-SRC-08, 05e). The file's records are let go.
func (p *prepared) fileResult(it item, verdict string, recs *fileRecs) fileResult {
	fr := fileResult{pos: it.pos}
	if it.err != "" {
		fr.err = &FileError{Path: it.rel, Error: it.err}
	}
	switch {
	case len(recs.lines) == 0, verdict == "binary", verdict == "too large":
	case verdict != "":
		if fr.err == nil {
			fr.err = &FileError{Path: it.rel, Error: verdict}
		}
	default:
		var why string
		fr.events, why = p.fileEvents(it, recs)
		*recs = fileRecs{}
		if why == whyBinary || why == whyTooLarge {
			fr.events = nil
		} else if why != "" && fr.err == nil {
			fr.err = &FileError{Path: it.rel, Error: why}
		}
	}
	return fr
}

// sniffAfter reports whether the chunk's files are sniffed only once they
// matched, which saves opening every file beforehand (a third of a
// selective search's time). It is for ugrep, whose records are a few bytes
// per match whatever the file holds (see ugrepFormat), and only when the
// pattern cannot match a NUL: a binary file's output then stays like a
// text file's. Sizes are still checked first, by stat, so a file over
// max_file_size_bytes is never read.
func (p *prepared) sniffAfter() bool {
	return p.be.Name == "ugrep" && !p.mayMatchNUL()
}

// statEach checks the size and kind of every file the backend would be
// given whose size the walk did not learn: "" to search it, "too large"
// (skipped, counted), or the error.
func (p *prepared) statEach(c *chunk, index map[string]int) []string {
	verdict := make([]string, len(c.items))
	todo := make([]int, 0, len(index))
	for i := range c.items {
		if _, ok := index[c.items[i].arg]; ok && c.items[i].size < 0 {
			todo = append(todo, i)
		}
	}
	forEachParallel(len(todo), 64, func(k int, _ []byte) {
		i := todo[k]
		var st syscall.Stat_t
		switch err := syscall.Stat(c.items[i].abs, &st); {
		case err != nil:
			verdict[i] = errText(err)
		case st.Mode&syscall.S_IFMT != syscall.S_IFREG:
			verdict[i] = "not a regular file"
		case p.e.maxSize > 0 && st.Size > p.e.maxSize:
			verdict[i] = "too large"
		}
	})
	return verdict
}

// forEachParallel calls fn for 0..n-1 on four goroutines (one when n is
// below serialBelow, where starting them costs more than the work), each
// with its own sniff-sized scratch buffer.
func forEachParallel(n, serialBelow int, fn func(k int, buf []byte)) {
	var next atomic.Int64
	work := func() {
		buf := make([]byte, sniffBytes)
		for {
			k := int(next.Add(1)) - 1
			if k >= n {
				return
			}
			fn(k, buf)
		}
	}
	if n < serialBelow {
		work()
		return
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(work)
	}
	wg.Wait()
}

// sniffAll sniffs every file the backend would be given.
func (p *prepared) sniffAll(c *chunk, index map[string]int) []string {
	todo := make([]int, 0, len(index))
	for i := range c.items {
		if _, ok := index[c.items[i].arg]; ok {
			todo = append(todo, i)
		}
	}
	return p.sniffEach(c, todo)
}

// sniffEach sniffs the items at the todo indices, a few at a time, and
// returns a verdict per item ("" for text and for items not sniffed).
func (p *prepared) sniffEach(c *chunk, todo []int) []string {
	verdict := make([]string, len(c.items))
	forEachParallel(len(todo), 8, func(k int, buf []byte) {
		i := todo[k]
		limit := p.e.maxSize
		if c.items[i].size >= 0 {
			limit = 0 // already checked against the cap: save the fstat
		}
		verdict[i] = sniff(c.items[i].abs, limit, buf)
	})
	return verdict
}

// sniff opens a file the way the backend does and reads its start: "" for
// text, "binary" when it has a NUL byte, "too large" over maxSize, else the
// error. Raw system calls: os.File's poller registration and bookkeeping
// cost more than the read itself.
func sniff(path string, maxSize int64, buf []byte) string {
	var fd int
	var err error
	for {
		// O_NONBLOCK: a file swapped for a FIFO since the walk must not hang.
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return errText(err)
	}
	defer syscall.Close(fd)
	if maxSize > 0 {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return errText(err)
		}
		if st.Size > maxSize {
			return "too large"
		}
	}
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return errText(err)
		}
		if m <= 0 {
			break
		}
		n += m
	}
	if bytes.IndexByte(buf[:n], 0) >= 0 {
		return "binary"
	}
	return ""
}

// longLine is the length from which a line of rg's output is cut down to
// the spans Vigil keeps (cutRGMatch); below it, lines are read whole.
const longLine = 1 << 20

// runBackend streams one backend process's output into per-file records.
func (p *prepared) runBackend(ctx context.Context, c *chunk, args []string, index map[string]int, recs []fileRecs) (int, string) {
	cmd := command(ctx, p.be, p.pl.orderRoot, p.env, backendArgs(p.be, p.e, p.pat, p.fixed, args))
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	started := time.Now()
	stdout, wait, err := startFollowed(cmd, p.e.maxSize)
	if err != nil {
		p.proof.verify()
		return 2, p.be.Name + ": " + err.Error()
	}
	malformed := p.readRecords(ctx, stdout, index, recs)
	werr := wait()
	code := exitCode(werr)
	if ctx.Err() != nil {
		return 0, ""
	}
	p.learnFromRun(code, len(args), started)
	unexplained := p.explainStderr(c, stderr.String(), index)
	if malformed {
		unexplained = strings.TrimSpace(unexplained + "\n" + p.be.Name + ": output could not be parsed")
		code = max(code, 2)
	}
	if unexplained == "" && code >= 2 {
		code = 0
	}
	return code, unexplained
}

// readRecords reads the backend's output lines into recs (index maps a
// chunk argument to its item) and reports whether any line was malformed.
// Lines longer than the reader's buffer are gathered; a long rg line is cut
// down to the spans kept (cutRGMatch) as it grows.
func (p *prepared) readRecords(ctx context.Context, stdout io.Reader, index map[string]int, recs []fileRecs) (malformed bool) {
	rg := p.be.Name == "rg"
	br := bufio.NewReaderSize(stdout, 256<<10)
	var pendingLine []byte
	var cutLine []byte // a long rg line, cut (cutRGMatch): the rest of it is skipped
	nextCut := longLine
	var pb parseBuf
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if cutLine != nil {
				continue
			}
			pendingLine = append(pendingLine, line...)
			if rg && len(pendingLine) >= nextCut {
				nextCut = 2 * len(pendingLine) // tried at doubling sizes: linear in all
				if l, ok := cutRGMatch(pendingLine); ok {
					cutLine, pendingLine = l, nil
				}
			}
			continue
		}
		nextCut = longLine // a line ended: the next one starts afresh
		if cutLine != nil {
			if err == nil {
				line = cutLine // its end has come
			} else {
				malformed = malformed || ctx.Err() == nil // it never ended
				line = nil
			}
			cutLine = nil
		} else if len(pendingLine) > 0 {
			pendingLine = append(pendingLine, line...)
			line = pendingLine
		}
		if len(line) > 0 {
			more, bad := p.addLine(line, rg, err == nil, &pb, index, recs)
			if more {
				// A raw newline inside a file name: read on.
				pendingLine = append(pendingLine[:0:0], line...)
				continue
			}
			pendingLine = pendingLine[:0]
			malformed = malformed || bad
		}
		if err != nil {
			return malformed
		}
	}
}

// addLine parses one output line into its file's records. more says the
// line (a ugrep one that ended, ended true, inside a JSON string) is not
// complete yet; bad that it is malformed or out of order.
func (p *prepared) addLine(line []byte, rg, ended bool, pb *parseBuf, index map[string]int, recs []fileRecs) (more, bad bool) {
	var rec record
	var ok bool
	var perr error
	if rg {
		rec, ok, perr = parseRGLineBuf(bytes.TrimRight(line, "\n"), pb)
	} else {
		rec, perr = parseUgrepLineBuf(line, pb)
		ok = perr == nil
		if perr != nil && ended && endsInString(line) {
			return true, false
		}
	}
	if perr != nil {
		return false, true
	}
	if !ok {
		return false, false
	}
	// Files come in any order, but each file's lines in order.
	i, known := index[string(rec.path)]
	if !known || !recs[i].inOrder(rec.line) {
		return false, true
	}
	recs[i].addCut(rec, p.e.lineCap(), p.e.maxLine)
	return false, false
}

// learnFromRun settles the pattern (a run that exits 0 or 1 compiled it)
// and records the backend's start-up cost for chunkLimit.
func (p *prepared) learnFromRun(code, files int, started time.Time) {
	if code == 0 || code == 1 {
		p.proof.accepted()
	} else {
		p.proof.verify()
	}
	if files <= 128 && time.Since(started) > heavyStartup {
		p.heavyStart.Store(true)
	}
	p.startKnown.Store(true)
}

// stderrFile finds the longest chunk argument named in the backend warning
// that starts at text[0] and whose first line ends at lineEnd. Arguments
// all start with "./" and are followed by ":" in both backends' messages,
// so names with spaces, colons or even newlines are found; end is where
// the name stops.
func stderrFile(text string, lineEnd int, index map[string]int, maxLen int) (i, end int, ok bool) {
	best := -1
	for s := 0; s < lineEnd; {
		k := strings.Index(text[s:lineEnd], "./")
		if k < 0 {
			break
		}
		s += k
		for e := s + 2; e <= min(len(text), s+maxLen); e++ {
			if e < len(text) && text[e] != ':' {
				continue
			}
			if j, found := index[text[s:e]]; found && e-s > best {
				best, i, end = e-s, j, e
			}
		}
		s += 2
	}
	return i, end, best >= 0
}

// explainStderr turns backend warnings that name one of the chunk's files
// into per-file errors; the rest is returned as unexplained stderr. The
// message is Vigil's own (from opening the file again) so that both
// backends report the same text; the backend's wording is the fallback.
func (p *prepared) explainStderr(c *chunk, stderr string, index map[string]int) string {
	if stderr == "" {
		return ""
	}
	var rest []string
	var buf [sniffBytes]byte
	text := strings.TrimSpace(lossy(stderr))
	maxLen := 0 // no name is longer: bounds the search for one
	for arg := range index {
		maxLen = max(maxLen, len(arg))
	}
	for len(text) > 0 {
		lineEnd := strings.IndexByte(text, '\n')
		if lineEnd < 0 {
			lineEnd = len(text)
		}
		i, nameEnd, ok := stderrFile(text, lineEnd, index, maxLen)
		if !ok {
			rest = append(rest, text[:lineEnd])
			text = text[min(lineEnd+1, len(text)):]
			continue
		}
		// The warning ends with the line its file name ends on.
		msgEnd := len(text)
		if k := strings.IndexByte(text[nameEnd:], '\n'); k >= 0 {
			msgEnd = nameEnd + k
		}
		line := text[:msgEnd]
		text = text[min(msgEnd+1, len(text)):]
		it := &c.items[i]
		if it.err != "" {
			continue
		}
		if v := sniff(it.abs, 0, buf[:]); v != "" && v != "binary" {
			it.err = v
			continue
		}
		msg := line[nameEnd:]
		if k := strings.LastIndex(msg, ": "); k >= 0 {
			msg = msg[k+2:]
		}
		msg = strings.TrimSpace(msg)
		if k := strings.Index(msg, " (os error"); k >= 0 {
			msg = msg[:k]
		}
		it.err = strings.ToLower(strings.TrimSuffix(msg, "."))
	}
	return strings.Join(rest, "\n")
}

// fileEvents builds a file's events in order: context lines (read from the
// file, for both backends, so they agree) before and after each match.
// Event strings are substrings of one conversion of the file's arena. On
// failure it returns the per-file error instead.
func (p *prepared) fileEvents(it item, f *fileRecs) ([]Event, string) {
	if len(f.lines) == 0 {
		return []Event{}, ""
	}
	return p.appendFileEventsWhy(make([]Event, 0, len(f.lines)), it, f)
}

// appendFileEventsWhy appends a file's events to out; on failure it
// returns out as it was and the per-file error, or whyBinary/whyTooLarge
// for a file to skip without one.
func (p *prepared) appendFileEventsWhy(out []Event, it item, f *fileRecs) ([]Event, string) {
	if len(f.lines) == 0 {
		return out, ""
	}
	var lines [][]byte
	// ugrep's records carry offsets only: the lines come from the file.
	if resolve := p.be.Name == "ugrep" && !f.resolved; p.e.context > 0 || resolve {
		bp := fileBufs.Get().(*[]byte)
		defer fileBufs.Put(bp) // lines point into it until the events are built
		var why string
		if lines, why = p.matchedLines(it, f, resolve, bp); why != "" {
			return out, why
		}
	}
	return p.appendEvents(out, it, f, lines), ""
}

// matchedLines reads the matched file into *bp, resolves ugrep's records
// against it (resolve), and splits it into lines when context is wanted;
// or it says why the file is skipped or failed.
func (p *prepared) matchedLines(it item, f *fileRecs, resolve bool, bp *[]byte) ([][]byte, string) {
	// Sniffed here when the chunk left it for after the match.
	data, why := p.readMatched(it.abs, bp, resolve && p.sniffAfter())
	switch {
	case why == whyTooLarge || why == whyBinary:
		return nil, why // (too large: grew past the cap since it was checked)
	case why != "" && !resolve:
		return nil, "cannot read file for context lines"
	case why != "":
		return nil, why // as when the file is gone before the backend runs
	}
	var unresolved *fileRecs
	if resolve {
		unresolved = f
	}
	data = decodeLikeBackend(data, unresolved)
	if resolve && !resolveLinesCut(data, f, p.e.maxLine) {
		return nil, "file changed while it was searched"
	}
	if p.e.context == 0 {
		return nil, ""
	}
	lines := bytes.Split(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	return lines, ""
}

// appendEvents appends each match of f with the context lines around it
// (from lines, the file's lines), each line once and in order.
func (p *prepared) appendEvents(out []Event, it item, f *fileRecs, lines [][]byte) []Event {
	recs := f.lines
	// The arena is complete and never written again: share it instead of
	// copying it (strings.Builder's idiom).
	all := unsafe.String(unsafe.SliceData(f.text), len(f.text))
	spans := make([]Span, len(f.spans))
	for i, s := range f.spans {
		spans[i] = Span{s.start, s.end}
	}
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
					out = append(out, contextEvent(it.rel, ln, trimEOL(lines[ln-1]), p.e.maxLine))
				}
			}
		}
		out = append(out, matchEvent(it.rel, r.line, all[r.text0:r.text1], spans[r.span0:r.span1:r.span1], r.cut))
		emitted = max(emitted, r.line)
		if p.e.context > 0 {
			limit := r.line + uint64(p.e.context)
			if k+1 < len(recs) && recs[k+1].line <= limit {
				limit = recs[k+1].line - 1
			}
			for ln := r.line + 1; ln <= limit && ln-1 < uint64(len(lines)); ln++ {
				out = append(out, contextEvent(it.rel, ln, trimEOL(lines[ln-1]), p.e.maxLine))
				emitted = ln
			}
		}
	}
	return out
}

// endsInString reports whether a line of backend output stops inside a
// JSON string: a file name with a raw newline in it (ugrep's %h escapes
// only quotes and backslashes), so the record goes on on the next line.
func endsInString(line []byte) bool {
	in := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		}
	}
	return in
}

// mayMatchNUL reports whether the pattern might match text that contains
// a NUL byte (sniffAfter says why that matters). Conservative: "." or a
// negated class will do.
func (p *prepared) mayMatchNUL() bool {
	if p.fixed {
		return strings.IndexByte(p.pat, 0) >= 0
	}
	if strings.IndexByte(p.pat, 0) >= 0 || strings.Contains(p.pat, ".") || strings.Contains(p.pat, "[^") ||
		strings.Contains(p.pat, "[:") || strings.Contains(p.pat, "(?") {
		return true
	}
	for _, esc := range []string{`\W`, `\D`, `\S`, `\x`, `\0`, `\u`, `\U`, `\p`, `\P`, `\C`, `\B`, `\H`, `\N`} {
		if strings.Contains(p.pat, esc) {
			return true
		}
	}
	return false
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
)

// readMatched reads a file the backend matched in, whole, and decides its
// fate as the ordered path does: whyTooLarge (over max_file_size_bytes:
// dropped, counted), whyBinary when sniff is set (a NUL byte in the first
// sniffBytes: dropped, counted), or a read error's text (a per-file
// error); or "" and the file's bytes. bp is the read buffer, kept for the
// next file (the bytes are valid until then).
func (p *prepared) readMatched(path string, bp *[]byte, sniff bool) ([]byte, string) {
	data, err := readRegularInto(path, (*bp)[:0], p.e.maxSize)
	*bp = data[:0]
	switch {
	case err == errTooLarge:
		return nil, whyTooLarge
	case err != nil:
		return nil, errText(err)
	case sniff && bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0:
		return nil, whyBinary
	}
	return data, ""
}
