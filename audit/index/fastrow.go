package index

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// The filter scans raw bytes first. A line in the log's canonical shape whose
// shown fields are plain ASCII is read here without decoding JSON: its row is
// then exactly one of two, the valid one or the damaged one (the same fields
// with event "(damaged)" and outcome "damaged"), and a query that cannot match
// either rejects the line without parsing it. Every other line is parsed.

// headFields are the columns of a line in canonical shape, sliced from it.
type headFields struct {
	time, actor, event, task, target, errorCode []byte
	success                                     bool
	rest                                        int // where "content_hash_before" starts
}

// canonical key order (audit.Entry's field order): the line must follow it
// byte for byte for the slices to be the decoded values.
var (
	kSeq        = []byte(`{"seq":`)
	kTime       = []byte(`,"time":"`)
	kActor      = []byte(`","actor":"`)
	kEvent      = []byte(`","event":"`)
	kTask       = []byte(`","task_id":"`)
	kCapability = []byte(`","capability":"`)
	kTarget     = []byte(`","target":"`)
	kJTI        = []byte(`","token_jti":"`)
	kSuccess    = []byte(`","success":`)
	kTrue       = []byte(`true`)
	kFalse      = []byte(`false`)
	kErrorCode  = []byte(`,"error_code":"`)
	kBefore     = []byte(`","content_hash_before":"`)
	kAfter      = []byte(`","content_hash_after":"`)
	kDetails    = []byte(`","details":`)
	kPrev       = []byte(`,"prev":"`)
	kNoDetails  = []byte(`{},"prev":"`)
	kHash       = []byte(`","hash":"`)
)

// cursor walks a line in canonical shape.
type cursor struct {
	b  []byte
	at int
	ok bool
}

func (c *cursor) lit(k []byte) {
	if c.ok && bytes.HasPrefix(c.b[c.at:], k) {
		c.at += len(k)
		return
	}
	c.ok = false
}

// str reads a string value up to its closing quote; plain means printable
// ASCII without a backslash, so the bytes are the decoded value and shown()
// leaves them unchanged.
func (c *cursor) str() []byte {
	if !c.ok {
		return nil
	}
	return c.strAt(indexFolded(c.b[c.at:], '"')) // values are short: inline beats a call
}

// hash is str for a value usually 64 bytes long (a SHA-256 in hex).
func (c *cursor) hash() []byte {
	if !c.ok {
		return nil
	}
	return c.strAt(bytes.IndexByte(c.b[c.at:], '"'))
}

// strAt reads a string value whose closing quote is n bytes on.
func (c *cursor) strAt(n int) []byte {
	if n < 0 || !plainHead(c.b[c.at:c.at+n]) {
		c.ok = false
		return nil
	}
	v := c.b[c.at : c.at+n]
	c.at += n
	return v
}

func (c *cursor) digits() {
	if !c.ok {
		return
	}
	i := c.at
	if i < len(c.b) && c.b[i] == '-' {
		i++
	}
	j := i
	for j < len(c.b) && c.b[j] >= '0' && c.b[j] <= '9' {
		j++
	}
	if j == i {
		c.ok = false
	}
	c.at = j
}

func plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}

// readHead slices the shown columns of a line in canonical shape (up to
// error_code); ok is false for any other line.
func readHead(line []byte) (h headFields, ok bool) {
	c := cursor{b: line, ok: true}
	c.lit(kSeq)
	c.digits()
	c.lit(kTime)
	h.time = c.str()
	c.lit(kActor)
	h.actor = c.str()
	c.lit(kEvent)
	h.event = c.str()
	c.lit(kTask)
	h.task = c.str()
	c.lit(kCapability)
	c.str()
	c.lit(kTarget)
	h.target = c.str()
	c.lit(kJTI)
	c.str()
	c.lit(kSuccess)
	switch {
	case !c.ok:
	case bytes.HasPrefix(c.b[c.at:], kTrue):
		h.success = true
		c.at += len(kTrue)
	default:
		c.lit(kFalse)
	}
	c.lit(kErrorCode)
	h.errorCode = c.str()
	h.rest = c.at
	return h, c.ok
}

// tailShaped says whether the rest of a line read by readHead is in the
// canonical shape too (two plain hashes, a details object that is one valid
// JSON value, prev and an optional hash): the line is then one JSON object
// with exactly the entry's keys, each once, so a decoder can only see the
// fields readHead sliced. Without this a duplicate key hidden after them
// could make a damaged row show other values.
func tailShaped(line []byte, h headFields) bool {
	c := cursor{b: line, at: h.rest, ok: true}
	c.lit(kBefore)
	c.hash()
	c.lit(kAfter)
	c.hash()
	c.lit(kDetails)
	if !c.ok {
		return false
	}
	if bytes.HasPrefix(line[c.at:], kNoDetails) {
		// most entries: read forward, no search from the end, no JSON scanner
		// (a details longer than "{}" but starting so is not one JSON value)
		c.at += len(kNoDetails)
		c.hash()
		if c.ok && c.at < len(line)-2 {
			c.lit(kHash)
			c.hash()
		}
		return c.ok && c.at == len(line)-2 && line[c.at+1] == '}'
	}
	rest := line[c.at:]
	// from the end: `,"prev":"P"}` or `,"prev":"P","hash":"H"}`, values plain
	if !bytes.HasSuffix(rest, []byte(`"}`)) {
		return false
	}
	body := rest[:len(rest)-2]
	q := bytes.LastIndexByte(body, '"')
	if q < 0 || !plain(body[q+1:]) {
		return false
	}
	if bytes.HasSuffix(body[:q+1], kHash) {
		body = body[:q+1-len(kHash)]
		if q = bytes.LastIndexByte(body, '"'); q < 0 || !plain(body[q+1:]) {
			return false
		}
	}
	if !bytes.HasSuffix(body[:q+1], kPrev) {
		return false
	}
	details := body[:q+1-len(kPrev)]
	if bytes.Equal(details, []byte("{}")) {
		return true // most entries: no need for a JSON scanner
	}
	return len(details) > 0 && details[0] == '{' && json.Valid(details)
}

// outcome is Entry.Outcome() of the sliced fields (plain ASCII).
func (h headFields) outcome(buf []byte) []byte {
	switch {
	case h.success:
		return append(buf, "ok"...)
	case len(h.errorCode) > 0:
		for _, c := range h.errorCode {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
		}
		return buf
	default:
		return append(buf, "fail"...)
	}
}

// hay appends the row's filter text (Row.Hay) for the valid or damaged row.
func (h headFields) hay(buf []byte, damaged bool) []byte {
	buf = append(buf, h.time...)
	buf = append(buf, ' ')
	buf = append(buf, h.actor...)
	buf = append(buf, ' ')
	if damaged {
		buf = append(buf, DamagedEvent...)
	} else {
		buf = append(buf, h.event...)
	}
	buf = append(buf, ' ')
	buf = append(buf, h.task...)
	buf = append(buf, ' ')
	buf = append(buf, h.target...)
	buf = append(buf, ' ')
	if damaged {
		return append(buf, DamagedOutcome...)
	}
	return h.outcome(buf)
}

// pattern is a fuzzy query folded for matching plain ASCII text: a byte
// subsequence test that every fuzzy match passes (fuzzy matches the query's
// characters in order, case-folded).
type pattern struct {
	folded []byte
	// ascii is false when some character of the query folds to no ASCII
	// character: no plain line can match it
	ascii bool
}

func newPattern(q string) pattern {
	p := pattern{ascii: true}
	for _, r := range q {
		b, ok := asciiFold(r)
		if !ok {
			p.ascii = false
			return p
		}
		p.folded = append(p.folded, b)
	}
	return p
}

// asciiFold is the lower-case ASCII letter r folds to (as the fuzzy
// matcher's equalFold does, through unicode.SimpleFold: the Kelvin sign folds
// to k), or false.
func asciiFold(r rune) (byte, bool) {
	if r == utf8.RuneError {
		return 0, false
	}
	for f := r; ; {
		if f < utf8.RuneSelf {
			b := byte(f)
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			return b, true
		}
		if f = unicode.SimpleFold(f); f == r {
			return 0, false
		}
	}
}

// within says whether the folded query is a subsequence of hay, ignoring
// ASCII case.
func (p pattern) within(hay []byte) bool {
	if !p.ascii {
		return false
	}
	k := 0
	for _, c := range hay {
		if k == len(p.folded) {
			break
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c == p.folded[k] {
			k++
		}
	}
	return k == len(p.folded)
}
