package search

import "bytes"

// fileRecs is one file's matching lines as the backend reported them. Texts
// and spans are packed into two arenas so that a dense file costs a few
// allocations instead of several per line.
type fileRecs struct {
	lines []recLine
	text  []byte
	spans []span
	// resolved: texts and line-relative spans are filled in. ugrep's
	// records hold file offsets until resolveLines reads the file.
	resolved bool
}

type recLine struct {
	line         uint64
	text0, text1 int // text[text0:text1] is the line without terminator (or its window: cut)
	span0, span1 int // spans[span0:span1] are its matches (see capSpans), offsets in the whole line
	cut          lineCut
}

// capSpans returns the part of spans that a line already holding have
// spans keeps: up to maxSubmatches+1 in all. One more than an event shows,
// because only once spans past the line's text are dropped (resolveLines,
// clampSpans: a match in a CRLF's line end) can it be told whether the
// line had more than maxSubmatches; those are always the last ones, so
// what remains decides it (matchEvent).
func capSpans(spans []span, have int) []span {
	if room := max(maxSubmatches+1-have, 0); len(spans) > room {
		return spans[:room]
	}
	return spans
}

// add merges records of the same line (ugrep prints one per match) and
// applies the per-file cap on matching lines (FR-LS-SRC-10). rec's slices
// may alias the backend's read buffer: they are copied.
func (f *fileRecs) add(rec record, maxPerFile int) {
	if n := len(f.lines); n > 0 && f.lines[n-1].line == rec.line {
		l := &f.lines[n-1]
		f.spans = append(f.spans, capSpans(rec.spans, l.span1-l.span0)...)
		l.span1 = len(f.spans)
		return
	}
	if maxPerFile > 0 && len(f.lines) >= maxPerFile {
		return
	}
	l := recLine{line: rec.line, text0: len(f.text), span0: len(f.spans)}
	f.text = append(f.text, rec.text...)
	f.spans = append(f.spans, capSpans(rec.spans, 0)...)
	l.text1, l.span1 = len(f.text), len(f.spans)
	f.lines = append(f.lines, l)
}

// addCut is add keeping only a window of a line longer than maxLine (when
// > 0) around its first match: rg's JSON carries whole lines, and a
// minified file's would otherwise be held, and printed, whole.
func (f *fileRecs) addCut(rec record, maxPerFile, maxLine int) {
	if maxLine <= 0 || len(rec.text) <= maxLine || (len(f.lines) > 0 && f.lines[len(f.lines)-1].line == rec.line) {
		f.add(rec, maxPerFile)
		return
	}
	if maxPerFile > 0 && len(f.lines) >= maxPerFile {
		return
	}
	first := 0
	if len(rec.spans) > 0 {
		first = rec.spans[0].start
	}
	text, cut := cutLine(rec.text, first, maxLine)
	l := recLine{line: rec.line, text0: len(f.text), span0: len(f.spans), cut: cut}
	f.text = append(f.text, text...)
	f.spans = append(f.spans, capSpans(rec.spans, 0)...)
	l.text1, l.span1 = len(f.text), len(f.spans)
	f.lines = append(f.lines, l)
}

// inOrder reports whether a record for line may follow the file's
// records so far (same line again: another match on it, from ugrep).
func (f *fileRecs) inOrder(line uint64) bool {
	return len(f.lines) == 0 || f.lines[len(f.lines)-1].line <= line
}

// A record is one matching line as the backends report it, in raw bytes.
type record struct {
	path  []byte
	line  uint64
	text  []byte // the line without its line terminator
	spans []span // byte offsets into text, in order
}

type span struct{ start, end int }

// resolveLines completes a file's ugrep records from the file's bytes:
// each line's text (without its terminator, like rg's) and its spans made
// relative to the line. It is false when the data does not fit the
// records (the file changed since ugrep read it: a line number that no
// longer holds the offset, or an offset past the end).
func resolveLines(data []byte, f *fileRecs) bool { return resolveLinesCut(data, f, 0) }

// resolveLinesCut is resolveLines keeping, of a line longer than maxLine
// (when > 0), only a window around its first match (linecut.go); spans
// stay offsets in the whole line.
func resolveLinesCut(data []byte, f *fileRecs, maxLine int) bool {
	spans := f.spans
	f.text = f.text[:0]
	line := uint64(1) // the line that starts at start
	start := 0
	for k := range f.lines {
		r := &f.lines[k]
		if r.span1 <= r.span0 {
			return false
		}
		off := spans[r.span0].start
		if off < start || spans[r.span1-1].end > len(data) {
			return false // the match would lie past the file's end
		}
		// One vectorized count for the lines in between, not a search per
		// line (Go source has a line end every 30-40 bytes: a dense
		// search's files took 1.9M searches).
		if n := bytes.Count(data[start:off], []byte{'\n'}); n > 0 {
			line += uint64(n)
			start += bytes.LastIndexByte(data[start:off], '\n') + 1
		}
		if line != r.line {
			return false
		}
		end := len(data)
		if nl := bytes.IndexByte(data[start:], '\n'); nl >= 0 {
			end = start + nl
		}
		text := trimEOL(data[start:end])
		window, cut := cutLine(text, off-start, maxLine)
		r.text0, r.cut = len(f.text), cut
		f.text = append(f.text, window...)
		r.text1 = len(f.text)
		kept := r.span0
		for _, sp := range spans[r.span0:r.span1] {
			sp = span{sp.start - start, sp.end - start}
			if sp.start < 0 || sp.start > len(text) || sp.end < sp.start {
				continue
			}
			sp.end = min(sp.end, len(text))
			spans[kept] = sp
			kept++
		}
		r.span1 = kept
	}
	f.resolved = true
	return true
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
