package search

import (
	"bytes"
	"encoding/base64"
	"errors"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/internal/jsonesc"
)

var errSyntax = errors.New("malformed backend output")

// jscan is a small, allocation-light JSON reader for the two backends'
// output. It is lenient where ugrep is sloppy (raw control characters and
// invalid UTF-8 inside strings) and never panics on bad input.
type jscan struct {
	b   []byte
	i   int
	err error
	sb  *[]byte // when set, str(nil) decodes escaped strings into it (reused)
}

// parseBuf is scratch space reused across lines: a record's text and spans
// may live here until the next line is parsed (fileRecs.add copies them).
type parseBuf struct {
	text  []byte
	spans []span
}

func (s *jscan) fail() {
	if s.err == nil {
		s.err = errSyntax
	}
	s.i = len(s.b)
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jscan) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string and appends its raw bytes to dst. Fast path: no
// escapes means a subslice of the input (no copy) when dst is nil.
func (s *jscan) str(dst []byte) []byte {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.fail()
		return dst
	}
	s.i++
	start := s.i
	// Fast path: find the closing quote with a vectorized scan and check
	// the span for escapes the same way.
	qpos := -1
	sb := false // decoding into *s.sb
	if q := bytes.IndexByte(s.b[s.i:], '"'); q >= 0 {
		qpos = s.i + q
		if bytes.IndexByte(s.b[s.i:qpos], '\\') < 0 {
			s.i = qpos
		}
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			if dst == nil {
				out := s.b[start:s.i]
				s.i++
				return out
			}
			dst = append(dst, s.b[start:s.i]...)
			s.i++
			if sb {
				*s.sb = dst[:0] // keep the grown buffer for the next line
			}
			return dst
		}
		if c != '\\' {
			// Jump to the next backslash or the closing quote (vectorized;
			// the quote's position is remembered, so this stays linear).
			if qpos < s.i {
				if q := bytes.IndexByte(s.b[s.i:], '"'); q >= 0 {
					qpos = s.i + q
				} else {
					qpos = len(s.b)
				}
			}
			if e := bytes.IndexByte(s.b[s.i:qpos], '\\'); e >= 0 {
				s.i += e
			} else {
				s.i = qpos
			}
			continue
		}
		if dst == nil && s.sb != nil {
			dst = (*s.sb)[:0]
			sb = true
		}
		dst = append(dst, s.b[start:s.i]...)
		if dst == nil {
			dst = []byte{}
		}
		// the escape, lone surrogates decoded as U+FFFD as encoding/json does
		r, n, ok := jsonesc.Decode(s.b[s.i:])
		if !ok {
			s.fail()
			return dst
		}
		s.i += n
		dst = utf8.AppendRune(dst, r)
		start = s.i
	}
	s.fail()
	return dst
}

func (s *jscan) uint() uint64 {
	s.ws()
	var v uint64
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if v > (1<<63)/10 {
			s.fail()
			return 0
		}
		v = v*10 + uint64(s.b[s.i]-'0')
		s.i++
		n++
	}
	if n == 0 {
		s.fail()
	}
	return v
}

// skip skips any JSON value.
func (s *jscan) skip(depth int) {
	s.ws()
	if s.i >= len(s.b) || depth > 64 {
		s.fail()
		return
	}
	switch c := s.b[s.i]; {
	case c == '"':
		s.str(nil)
	case c == '{':
		s.object(depth+1, func(_ []byte) { s.skip(depth + 1) })
	case c == '[':
		s.array(depth+1, func() { s.skip(depth + 1) })
	default:
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
				break
			}
			s.i++
		}
	}
}

// object calls fn for each key; fn must consume the value.
func (s *jscan) object(depth int, fn func(key []byte)) {
	if depth > 64 || !s.eat('{') {
		s.fail()
		return
	}
	if s.eat('}') {
		return
	}
	for s.err == nil {
		k := s.str(nil)
		if !s.eat(':') {
			s.fail()
			return
		}
		fn(k)
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			s.fail()
		}
		return
	}
}

func (s *jscan) array(depth int, fn func()) {
	if depth > 64 || !s.eat('[') {
		s.fail()
		return
	}
	if s.eat(']') {
		return
	}
	for s.err == nil {
		fn()
		if s.eat(',') {
			continue
		}
		if !s.eat(']') {
			s.fail()
		}
		return
	}
}

// textOrBytes reads rg's {"text": ...} or {"bytes": base64} object.
func (s *jscan) textOrBytes(depth int) []byte {
	var out []byte
	s.object(depth+1, func(k []byte) {
		switch string(k) {
		case "text":
			out = s.str(nil)
		case "bytes":
			raw := s.str(nil)
			dec := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
			n, err := base64.StdEncoding.Decode(dec, raw)
			if err != nil {
				s.fail()
				return
			}
			out = dec[:n]
		default:
			s.skip(depth + 1)
		}
	})
	return out
}

var rgMatchPrefix = []byte(`{"type":"match"`)

// parseRGLine parses one line of `rg --json`. ok is false for the message
// types Vigil does not need (begin, end, summary, context); err is set for
// malformed input.
func parseRGLine(line []byte) (rec record, ok bool, err error) {
	return parseRGLineBuf(line, nil)
}

// parseRGLineBuf is parseRGLine with reusable scratch space (pb may be nil).
func parseRGLineBuf(line []byte, pb *parseBuf) (rec record, ok bool, err error) {
	if len(line) < len(rgMatchPrefix) || string(line[:len(rgMatchPrefix)]) != string(rgMatchPrefix) {
		// rg always writes "type" first; anything else that is not JSON
		// at all is a malformed stream.
		if len(line) == 0 || line[0] != '{' {
			return rec, false, errSyntax
		}
		return rec, false, nil
	}
	if rec, ok := parseRGMatchFast(line, pb); ok {
		return rec, true, nil
	}
	return parseRGGeneric(line)
}

// parseRGGeneric reads any key order and the {"bytes": …} form.
func parseRGGeneric(line []byte) (rec record, ok bool, err error) {
	s := jscan{b: line}
	var isMatch bool
	s.object(0, func(k []byte) {
		switch string(k) {
		case "type":
			isMatch = string(s.str(nil)) == "match"
		case "data":
			s.object(1, func(k []byte) {
				switch string(k) {
				case "path":
					rec.path = s.textOrBytes(2)
				case "lines":
					rec.text = s.textOrBytes(2)
				case "line_number":
					s.ws()
					if s.i < len(s.b) && s.b[s.i] == 'n' {
						s.skip(2)
					} else {
						rec.line = s.uint()
					}
				case "submatches":
					s.array(2, func() {
						var sp span
						s.object(3, func(k []byte) {
							switch string(k) {
							case "start":
								sp.start = int(s.uint())
							case "end":
								sp.end = int(s.uint())
							default:
								s.skip(3)
							}
						})
						rec.spans = appendSpan(rec.spans, sp)
					})
				default:
					s.skip(2)
				}
			})
		default:
			s.skip(0)
		}
	})
	if s.err != nil {
		return record{}, false, s.err
	}
	if !isMatch || rec.line == 0 {
		return record{}, false, errSyntax
	}
	rec.text = trimEOL(rec.text)
	rec.spans = clampSpans(rec.spans, len(rec.text))
	return rec, true, nil
}

// rgSubmatchesKey starts the list of a match message's spans. It cannot
// occur inside a JSON string, where every quote is escaped, so its first
// occurrence is the key.
var rgSubmatchesKey = []byte(`,"submatches":[`)

// cutRGMatch shortens a long rg match message of which prefix has been
// read (a minified line: the text, then tens of bytes per match) to a
// complete message with the first maxSubmatches+1 spans, all that
// appendSpan would keep, so that the rest of the line need not be held.
// ok is false until prefix holds that many, and for any shape but rg's
// (the rest of the line is then read as usual).
func cutRGMatch(prefix []byte) (line []byte, ok bool) {
	if !bytes.HasPrefix(prefix, rgMatchPrefix) {
		return nil, false
	}
	k := bytes.Index(prefix, rgSubmatchesKey)
	if k < 0 {
		return nil, false
	}
	s := jscan{b: prefix, i: k + len(rgSubmatchesKey)}
	for n := 0; n <= maxSubmatches; n++ {
		if (n > 0 && !s.expect(`,`)) || !s.expect(`{"match":{"`) {
			return nil, false
		}
		if !s.expect(`text":`) && !s.expect(`bytes":`) { // bytes: base64, for a match that is not UTF-8
			return nil, false
		}
		s.str(nil)
		// Each number must be followed by what follows it in rg's shape,
		// so a number cut off by the end of prefix is never taken.
		if s.err != nil || !s.expect(`},"start":`) {
			return nil, false
		}
		s.uint()
		if s.err != nil || !s.expect(`,"end":`) {
			return nil, false
		}
		s.uint()
		if s.err != nil || !s.expect(`}`) {
			return nil, false
		}
	}
	return append(prefix[:s.i:s.i], "]}}"...), true
}

// appendSpan keeps a line's first maxSubmatches+1 spans from rg's list,
// as capSpans does (which says why one more), and no more of a minified
// line's millions.
func appendSpan(spans []span, sp span) []span {
	if len(spans) > maxSubmatches {
		return spans
	}
	return append(spans, sp)
}

// clampSpans drops spans that start past the line's end (or are
// malformed) and cuts those that run past it.
func clampSpans(sp []span, n int) []span {
	out := sp[:0]
	for _, x := range sp {
		if x.start < 0 || x.start > n || x.end < x.start {
			continue
		}
		if x.end > n {
			x.end = n
		}
		out = append(out, x)
	}
	return out
}

// parseUgrepLine parses one record of ugrepFormat. Each record is one
// match; the caller merges records of the same line. The record has no
// text: its one span is the match's absolute byte range in the file, which
// resolveLines turns into the line and line-relative offsets.
func parseUgrepLine(line []byte) (rec record, err error) {
	return parseUgrepLineBuf(line, nil)
}

// parseUgrepLineBuf is parseUgrepLine with reusable scratch space (pb may
// be nil).
func parseUgrepLineBuf(line []byte, pb *parseBuf) (rec record, err error) {
	if rec, ok := parseUgrepFast(line, pb); ok {
		return rec, nil
	}
	return parseUgrepGeneric(line, pb)
}

// parseUgrepGeneric reads any JSON object with ugrepFormat's keys.
func parseUgrepGeneric(line []byte, pb *parseBuf) (rec record, err error) {
	s := jscan{b: line}
	var off, length uint64
	var haveOff, haveLen bool
	s.object(0, func(k []byte) {
		switch string(k) {
		case "f":
			rec.path = s.str(nil)
		case "n":
			rec.line = s.uint()
		case "b":
			off, haveOff = s.uint(), true
		case "d":
			length, haveLen = s.uint(), true
		default:
			s.skip(1)
		}
	})
	if s.err != nil {
		return record{}, s.err
	}
	// Offsets beyond any file Vigil would read (the size cap is far below)
	// are malformed, which also keeps int conversions safe.
	const maxOffset = 1 << 50
	if rec.line == 0 || !haveOff || !haveLen || off > maxOffset || length > maxOffset {
		return record{}, errSyntax
	}
	rec.spans = ugrepSpan(off, length, pb)
	return rec, nil
}

// ugrepSpan is a record's one span, in pb's scratch space when given.
func ugrepSpan(off, length uint64, pb *parseBuf) []span {
	sp := span{int(off), int(off + length)}
	if pb == nil {
		return []span{sp}
	}
	pb.spans = append(pb.spans[:0], sp)
	return pb.spans
}

// expect consumes lit at the cursor.
func (s *jscan) expect(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// parseRGMatchFast reads a match message in the exact shape rg 13 writes
// (keys in this order, UTF-8 text, no whitespace) without the generic
// reader's per-key dispatch: this is the hot path for dense results.
// Anything else returns ok == false and goes to the generic reader.
func parseRGMatchFast(line []byte, pb *parseBuf) (rec record, ok bool) {
	s := jscan{b: line}
	if pb != nil {
		rec.spans = pb.spans[:0]
		defer func() { pb.spans = rec.spans[:0] }()
	}
	if !s.expect(`{"type":"match","data":{"path":{"text":`) {
		return rec, false
	}
	rec.path = s.str(nil)
	if !s.expect(`},"lines":{"text":`) {
		return rec, false
	}
	if pb != nil {
		s.sb = &pb.text
	}
	rec.text = s.str(nil)
	s.sb = nil
	if !s.expect(`},"line_number":`) {
		return rec, false
	}
	rec.line = s.uint()
	if !s.expect(`,"absolute_offset":`) {
		return rec, false
	}
	s.uint()
	if !s.expect(`,"submatches":[`) {
		return rec, false
	}
	if !s.expect(`]`) {
		for {
			if !s.expect(`{"match":{"text":`) {
				return rec, false
			}
			s.str(nil)
			var sp span
			if !s.expect(`},"start":`) {
				return rec, false
			}
			sp.start = int(s.uint())
			if !s.expect(`,"end":`) {
				return rec, false
			}
			sp.end = int(s.uint())
			if !s.expect(`}`) {
				return rec, false
			}
			rec.spans = appendSpan(rec.spans, sp)
			if s.expect(`,`) {
				continue
			}
			if s.expect(`]`) {
				break
			}
			return rec, false
		}
	}
	if !s.expect(`}}`) || s.i != len(s.b) || s.err != nil || rec.line == 0 {
		return record{}, false
	}
	rec.text = trimEOL(rec.text)
	rec.spans = clampSpans(rec.spans, len(rec.text))
	return rec, true
}

// parseUgrepFast reads a record in the exact shape ugrepFormat gives,
// with no escape in the path, without the generic reader's per-key
// dispatch: the hot path for dense results (a record per match). Anything
// else returns ok == false and goes to the generic reader.
func parseUgrepFast(line []byte, pb *parseBuf) (rec record, ok bool) {
	const head = `{"f":"`
	if !bytes.HasPrefix(line, []byte(head)) {
		return rec, false
	}
	i := len(head)
	q := bytes.IndexByte(line[i:], '"')
	if q < 0 || bytes.IndexByte(line[i:i+q], '\\') >= 0 {
		return rec, false
	}
	rec.path = line[i : i+q]
	i += q + 1
	// num reads key and at most 15 digits (below the generic reader's
	// 1<<50 bound on offsets).
	num := func(key string) (uint64, bool) {
		if !bytes.HasPrefix(line[i:], []byte(key)) {
			return 0, false
		}
		i += len(key)
		start := i
		var n uint64
		for i < len(line) && i-start < 16 && line[i] >= '0' && line[i] <= '9' {
			n = n*10 + uint64(line[i]-'0')
			i++
		}
		return n, i > start && i-start < 16
	}
	var off, length uint64
	ok1, ok2, ok3 := false, false, false
	if rec.line, ok1 = num(`,"n":`); !ok1 || rec.line == 0 {
		return record{}, false
	}
	if off, ok2 = num(`,"b":`); !ok2 {
		return record{}, false
	}
	if length, ok3 = num(`,"d":`); !ok3 {
		return record{}, false
	}
	if rest := line[i:]; string(rest) != "}" && string(rest) != "}\n" {
		return record{}, false
	}
	rec.spans = ugrepSpan(off, length, pb)
	return rec, true
}
