package search

import (
	"bytes"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/vigil-dev/vigil/safetext"
)

// The response can hold hundreds of thousands of events, so it is encoded
// by hand: encoding/json's reflection was several times slower than the
// backends themselves. Output is plain JSON with no HTML escaping.

const hexDigits = "0123456789abcdef"

// plainASCII marks the bytes copied as they are: one table load per byte
// on the hot loop instead of four comparisons.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ { // DEL is written \u007f
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends s's JSON string body (no quotes).
func appendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainASCII[c] {
			i++
			for i < len(s) && plainASCII[s[i]] {
				i++
			}
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i++
				start = i
				continue
			}
			if _, hide := safetext.Escape(r); hide {
				// C1 controls, format and bidi characters, line and
				// paragraph separators, unusual spaces: written as JSON
				// escapes (the same string once decoded), so that the
				// JSON itself, read in a terminal, cannot steer it.
				b = append(b, s[start:i]...)
				b = appendUnicodeEscape(b, r)
				i += n
				start = i
				continue
			}
			i += n
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	return append(b, s[start:]...)
}

// appendUnicodeEscape appends r as \uXXXX (a surrogate pair past U+FFFF).
func appendUnicodeEscape(b []byte, r rune) []byte {
	if r > 0xFFFF {
		hi, lo := utf16.EncodeRune(r)
		return appendUnicodeEscape(appendUnicodeEscape(b, hi), lo)
	}
	return append(b, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// AppendJSON appends the event as FR-LS-04 shapes it.
func (ev *Event) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, ev.Type)
	b = append(b, `,"data":{"path":{"text":`...)
	b = appendString(b, ev.Path)
	b = append(b, `},"line_number":`...)
	b = strconv.AppendUint(b, ev.LineNumber, 10)
	if ev.Type == "match" {
		b = append(b, `,"column":`...)
		b = strconv.AppendUint(b, ev.Column, 10)
	}
	b = append(b, `,"lines":{"text":`...)
	b = appendString(b, ev.Line)
	b = append(b, '}')
	if ev.LineBytes > 0 {
		// Only for a cut line, so that the usual shape stays as it was.
		b = append(b, `,"text_truncated":{"offset":`...)
		b = strconv.AppendInt(b, int64(ev.TextOffset), 10)
		b = append(b, `,"line_bytes":`...)
		b = strconv.AppendInt(b, int64(ev.LineBytes), 10)
		b = append(b, '}')
	}
	if ev.Type == "match" {
		b = append(b, `,"match_text":`...)
		b = appendString(b, ev.MatchText)
		b = append(b, `,"submatches":[`...)
		for i, s := range ev.Submatches {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"start":`...)
			b = strconv.AppendInt(b, int64(s.Start), 10)
			b = append(b, `,"end":`...)
			b = strconv.AppendInt(b, int64(s.End), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
		if ev.SubmatchesTruncated {
			// Only when true, so that the usual shape stays as it was.
			b = append(b, `,"submatches_truncated":true`...)
		}
		if ev.MatchTextTruncated {
			b = append(b, `,"match_text_truncated":true`...)
		}
	}
	return append(b, "}}"...)
}

// MarshalJSON implements json.Marshaler.
func (ev Event) MarshalJSON() ([]byte, error) { return ev.AppendJSON(nil), nil }

// jsonSize estimates the encoded size, so that a large response is
// encoded into one allocation instead of a doubling series of copies.
func (r *Response) jsonSize() int {
	n := 256 + len(r.Pattern) + len(r.Path) + len(r.Stderr) + len(r.Content) + len(r.Content)/16
	for i := range r.Matches {
		ev := &r.Matches[i]
		n += 112 + len(ev.Path) + len(ev.Line) + len(ev.Line)/16 + len(ev.MatchText) + 32*len(ev.Submatches)
		if ev.LineBytes > 0 {
			n += 96
		}
	}
	for _, e := range r.Errors {
		n += 32 + len(e.Path) + len(e.Error)
	}
	return n
}

// AppendJSON appends the response object (FR-LS-05) with a stable key order.
func (r *Response) AppendJSON(b []byte) []byte {
	return r.appendJSON(slices.Grow(b, r.jsonSize()), nil)
}

// writeChunk is how much WriteJSON buffers before writing.
const writeChunk = 256 << 10

// WriteJSON writes exactly what AppendJSON appends, through a small
// buffer: a response with a million events need not also exist as one
// 50 MB byte slice (allocating and faulting it in cost more than encoding).
func (r *Response) WriteJSON(w io.Writer) error {
	if len(r.Matches) >= 2*segmentEvents || len(r.Content) >= 2*writeChunk {
		return r.writeParallel(w)
	}
	var werr error
	flush := func(b []byte) []byte {
		if werr == nil {
			_, werr = w.Write(b)
		}
		return b[:0]
	}
	b := r.appendJSON(make([]byte, 0, writeChunk+writeChunk/4), flush)
	flush(b)
	return werr
}

// appendHead appends the response object up to the opening of matches[].
func (r *Response) appendHead(b []byte) []byte {
	b = append(b, `{"pattern":`...)
	b = appendString(b, r.Pattern)
	b = append(b, `,"path":`...)
	b = appendString(b, r.Path)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(r.Count), 10)
	return append(b, `,"matches":[`...)
}

// appendJSON encodes r; flush (when not nil) is called whenever the
// buffer holds more than writeChunk bytes and returns the buffer to reuse.
func (r *Response) appendJSON(b []byte, flush func([]byte) []byte) []byte {
	full := func() bool { return flush != nil && len(b) >= writeChunk }
	b = r.appendHead(b)
	for i := range r.Matches {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.Matches[i].AppendJSON(b)
		if full() {
			b = flush(b)
		}
	}
	b = append(b, `],"truncated":`...)
	b = strconv.AppendBool(b, r.Truncated)
	b = append(b, `,"timed_out":`...)
	b = strconv.AppendBool(b, r.TimedOut)
	b = append(b, `,"files_scanned":`...)
	b = strconv.AppendInt(b, r.FilesScanned, 10)
	b = append(b, `,"errors":[`...)
	for i, e := range r.Errors {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = appendString(b, e.Path)
		b = append(b, `,"error":`...)
		b = appendString(b, e.Error)
		b = append(b, '}')
	}
	b = append(b, ']')
	if r.ExitCode != nil {
		b = append(b, `,"exit_code":`...)
		b = strconv.AppendInt(b, int64(*r.ExitCode), 10)
	}
	if r.Stderr != "" {
		b = append(b, `,"stderr":`...)
		b = appendString(b, r.Stderr)
	}
	b = append(b, `,"content":"`...)
	for rest := r.Content; rest != ""; {
		k := contentCut(rest)
		b = appendEscaped(b, rest[:k])
		rest = rest[k:]
		if full() {
			b = flush(b)
		}
	}
	return append(b, '"', '}')
}

// segmentEvents is how many events one piece of a parallel write encodes
// (about 0.5 MiB of JSON).
const segmentEvents = 2048

// writeParallel is WriteJSON for large responses: the events and the
// content are cut into pieces that all cores encode at once, written in
// order, byte for byte what appendJSON produces.
func (r *Response) writeParallel(w io.Writer) error {
	var pieces []func([]byte) []byte
	pieces = append(pieces, r.appendHead)
	for from := 0; from < len(r.Matches); from += segmentEvents {
		to := min(from+segmentEvents, len(r.Matches))
		pieces = append(pieces, func(b []byte) []byte {
			for i := from; i < to; i++ {
				if i > 0 {
					b = append(b, ',')
				}
				b = r.Matches[i].AppendJSON(b)
			}
			return b
		})
	}
	pieces = append(pieces, func(b []byte) []byte {
		// Everything between matches[] and the content's text.
		tail := Response{Truncated: r.Truncated, TimedOut: r.TimedOut, FilesScanned: r.FilesScanned,
			Errors: r.Errors, ExitCode: r.ExitCode, Stderr: r.Stderr}
		b = tail.appendJSON(b, nil)
		b = b[bytes.Index(b, []byte(`],"truncated":`)):]
		return b[:len(b)-2] // without the empty content's closing `"}`
	})
	for rest := r.Content; rest != ""; {
		k := contentCut(rest)
		piece := rest[:k]
		pieces = append(pieces, func(b []byte) []byte { return appendEscaped(b, piece) })
		rest = rest[k:]
	}
	pieces = append(pieces, func(b []byte) []byte { return append(b, '"', '}') })
	return writeOrdered(w, pieces)
}

// contentCut is where to cut the content for the next piece: at most
// writeChunk bytes, and only before a byte that starts a UTF-8 sequence
// (or is invalid on its own), so the escaping is the same as in one go.
func contentCut(rest string) int {
	k := min(len(rest), writeChunk)
	for k < len(rest) && k > 0 && rest[k]&0xC0 == 0x80 {
		k--
	}
	if k == 0 {
		k = min(len(rest), writeChunk)
	}
	return k
}

// writeOrdered runs the pieces on all cores and writes their output in
// order; at most a few pieces are encoded ahead of the writer, so memory
// stays bounded. After a write error the rest is encoded but not written.
func writeOrdered(w io.Writer, pieces []func([]byte) []byte) error {
	ahead := 2 * max(runtime.GOMAXPROCS(0), 1)
	type result struct {
		buf  []byte
		done chan struct{}
	}
	results := make([]result, len(pieces))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	slots := make(chan struct{}, ahead)
	free := make(chan []byte, ahead)
	go func() {
		for i := range pieces {
			slots <- struct{}{}
			go func() {
				var b []byte
				select {
				case b = <-free:
				default:
				}
				results[i].buf = pieces[i](b[:0])
				close(results[i].done)
			}()
		}
	}()
	var werr error
	for i := range results {
		<-results[i].done
		if werr == nil {
			_, werr = w.Write(results[i].buf)
		}
		select {
		case free <- results[i].buf:
		default:
		}
		results[i].buf = nil
		<-slots
	}
	return werr
}

// MarshalJSON implements json.Marshaler.
func (r Response) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// contentLines is content's grep-like lines for some events.
func contentLines(evs []Event) string {
	b := make([]byte, 0, contentSize(evs))
	for i := range evs {
		b = appendContentLine(b, &evs[i])
	}
	return string(b)
}

// appendContentLine appends one event's line of the content view.
func appendContentLine(b []byte, ev *Event) []byte {
	b = append(b, contentPath(ev.Path)...)
	if ev.Type == "match" {
		b = append(b, ':')
		b = strconv.AppendUint(b, ev.LineNumber, 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, ev.Column, 10)
		b = append(b, ':')
	} else {
		b = append(b, '-')
		b = strconv.AppendUint(b, ev.LineNumber, 10)
		b = append(b, '-')
	}
	b = append(b, ev.Line...)
	if ev.LineBytes > 0 {
		b = appendCutNote(b, ev)
	}
	return append(b, '\n')
}

// appendCutNote appends what follows a cut line's text in the content:
// " [cut: line of 2000000 bytes, shown from byte 1024]".
func appendCutNote(b []byte, ev *Event) []byte {
	b = append(b, " [cut: line of "...)
	b = strconv.AppendInt(b, int64(ev.LineBytes), 10)
	b = append(b, " bytes, shown from byte "...)
	b = strconv.AppendInt(b, int64(ev.TextOffset), 10)
	return append(b, ']')
}

// contentPath is a file's name as the content view writes it. content is
// grep-like text an agent reads line by line: a name holding a line end (or
// another control or invisible character) would forge match lines of its
// own, so such a name is written as safetext shows it; any other name is
// written as it is (the JSON fields keep every name exact).
func contentPath(p string) string {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f {
			return safetext.Line(p)
		}
	}
	return p
}

// cutNoteLen is the length appendCutNote appends.
func cutNoteLen(ev *Event) int {
	return len(" [cut: line of  bytes, shown from byte ]") + decimalLen(uint64(ev.LineBytes)) + decimalLen(uint64(ev.TextOffset))
}

// contentSize is the exact length of the events' content lines.
func contentSize(evs []Event) int {
	n := 0
	for i := range evs {
		ev := &evs[i]
		n += len(contentPath(ev.Path)) + len(ev.Line) + 3 + decimalLen(ev.LineNumber)
		if ev.LineBytes > 0 {
			n += cutNoteLen(ev)
		}
		if ev.Type == "match" {
			n += 1 + decimalLen(ev.Column)
		}
	}
	return n
}

func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

func content(r *Response, e effective) string {
	var b strings.Builder
	if n := len(r.Matches); n >= 2*segmentEvents {
		// Large: segments written on all cores straight into one buffer
		// at their known offsets, which becomes the string without a copy.
		segs := (n + segmentEvents - 1) / segmentEvents
		offs := make([]int, segs+1)
		for k := range segs {
			offs[k+1] = offs[k] + contentSize(r.Matches[k*segmentEvents:min((k+1)*segmentEvents, n)])
		}
		buf := make([]byte, offs[segs], offs[segs]+256)
		var wg sync.WaitGroup
		sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
		for k := range segs {
			sem <- struct{}{}
			wg.Go(func() {
				out := buf[offs[k]:offs[k]:offs[k+1]]
				for i := k * segmentEvents; i < min((k+1)*segmentEvents, n); i++ {
					out = appendContentLine(out, &r.Matches[i])
				}
				<-sem
			})
		}
		wg.Wait()
		buf = append(buf, contentNotes(r, e)...)
		return unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is never written again
	}
	b.WriteString(contentLines(r.Matches))
	b.WriteString(contentNotes(r, e))
	return b.String()
}

// contentNotes is what follows the lines: why the list is short, or that
// there is nothing.
func contentNotes(r *Response, e effective) string {
	var b strings.Builder
	if r.Truncated {
		b.WriteString("[truncated: more than " + strconv.Itoa(e.maxResults) + " results; narrow the pattern or raise max_results]\n")
	}
	if r.TimedOut {
		b.WriteString("[timed out after " + strconv.FormatInt(e.timeoutMS, 10) + " ms; results are partial]\n")
	}
	if r.Count == 0 && !r.TimedOut {
		b.WriteString("no matches\n")
	}
	return b.String()
}
