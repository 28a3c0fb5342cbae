package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/internal/jsonesc"
)

// This file reads a line in the log's canonical form without the JSON
// decoder. A line is canonical when it is exactly what marshal writes for
// the entry it decodes to: parseLine proves that by decoding and encoding
// again, which costs most of a verification. The layout is fixed (the fields
// of Entry in order, Go's string escapes, compact details), so a scan that
// walks the bytes once can prove the same thing.
//
// scanCanonical is a proof, not a judge: it accepts only lines it can show
// are canonical and returns false for anything else (a malformed line, a
// tolerated-but-odd form, or just a rare shape such as a missing hash). The
// caller then falls back to parseLine, which gives the exact error. So the
// fast path never accepts what parseLine would refuse, and never names a
// different reason for a refusal.

// Indexes of the string fields of a raw line, in the order they appear.
const (
	rawTime = iota
	rawActor
	rawEvent
	rawTaskID
	rawCapability
	rawTarget
	rawTokenJTI
	rawErrorCode
	rawHashBefore
	rawHashAfter
	rawPrev
	rawHash
	rawFields
)

// rawLine is a canonical line cut into its fields, each still a slice of the
// line (string values as written, escapes and all): reading it allocates
// nothing, so a verifier or a filter pays only for the lines it keeps.
type rawLine struct {
	seq     int64
	success bool
	str     [rawFields][]byte
	escaped uint16 // bit i: str[i] holds a backslash escape
	details []byte
	// body is where `,"hash":"` starts: the hashed bytes are line[:body]+"}"
	body int
}

// The fixed text between values. Each string value's closing quote is part
// of the key text that follows it.
var (
	keySeq        = []byte(`{"seq":`)
	keyTime       = []byte(`,"time":"`)
	keyActor      = []byte(`","actor":"`)
	keyEvent      = []byte(`","event":"`)
	keyTaskID     = []byte(`","task_id":"`)
	keyCapability = []byte(`","capability":"`)
	keyTarget     = []byte(`","target":"`)
	keyTokenJTI   = []byte(`","token_jti":"`)
	keySuccess    = []byte(`","success":`)
	keyErrorCode  = []byte(`,"error_code":"`)
	keyHashBefore = []byte(`","content_hash_before":"`)
	keyHashAfter  = []byte(`","content_hash_after":"`)
	keyDetails    = []byte(`","details":`)
	keyPrev       = []byte(`,"prev":"`)
	keyHash       = []byte(`","hash":"`)
	keyEnd        = []byte(`"}`)

	// keysAfter[i] is the key text that follows string field i, up to the
	// next value (a string field's own opening quote included).
	keysAfter = [rawFields][]byte{
		rawTime: keyActor, rawActor: keyEvent, rawEvent: keyTaskID, rawTaskID: keyCapability,
		rawCapability: keyTarget, rawTarget: keyTokenJTI, rawTokenJTI: keySuccess,
		rawErrorCode: keyHashBefore, rawHashBefore: keyHashAfter, rawHashAfter: keyDetails,
		rawPrev: keyHash, rawHash: keyEnd,
	}
)

// scanCanonical fills r from line and reports whether line is canonical
// (see the file comment); false means "ask parseLine".
func scanCanonical(line []byte, r *rawLine) bool {
	if !bytes.HasPrefix(line, keySeq) {
		return false
	}
	// most lines are plain: every string can then be cut at its next quote
	plain := plainLine(line)
	i := len(keySeq)
	j := i
	if j < len(line) && line[j] == '-' {
		j++
	}
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	seq, ok := canonicalInt(line[i:j])
	if !ok {
		return false
	}
	r.seq, i = seq, j
	if !bytes.HasPrefix(line[i:], keyTime) {
		return false
	}
	i += len(keyTime)
	r.escaped = 0
	strs := func(from, to int) bool { // string fields from..to, each followed by its key text
		for f := from; f <= to; f++ {
			end, esc, ok := canonicalString(line, i, plain)
			if !ok || !bytes.HasPrefix(line[end:], keysAfter[f]) {
				return false
			}
			r.str[f] = line[i:end]
			if esc {
				r.escaped |= 1 << f
			}
			i = end + len(keysAfter[f])
		}
		return true
	}
	if !strs(rawTime, rawTokenJTI) {
		return false
	}
	switch {
	case bytes.HasPrefix(line[i:], []byte("true")):
		r.success, i = true, i+4
	case bytes.HasPrefix(line[i:], []byte("false")):
		r.success, i = false, i+5
	default:
		return false
	}
	if !bytes.HasPrefix(line[i:], keyErrorCode) {
		return false
	}
	i += len(keyErrorCode)
	if !strs(rawErrorCode, rawHashAfter) {
		return false
	}
	end, ok := jsonValue(line, i, 0, plain)
	if !ok || !bytes.HasPrefix(line[end:], keyPrev) {
		return false
	}
	r.details = line[i:end]
	i = end + len(keyPrev)
	r.body = -1
	if !strs(rawPrev, rawPrev) {
		return false
	}
	r.body = i - len(keyHash) + 1 // keyHash starts with the prev value's closing quote
	if !strs(rawHash, rawHash) {
		return false
	}
	// an empty hash is left out of a canonical line (omitempty): parseLine decides
	return i == len(line) && len(r.str[rawHash]) > 0
}

// canonicalString checks the string value that starts at line[i] (after its
// opening quote) and returns the offset of its closing quote and whether it
// holds escapes. Canonical means: exactly what Go's encoder writes for the
// decoded value with HTML escaping off (see encoding/json appendString).
func canonicalString(line []byte, i int, plain bool) (end int, escaped, ok bool) {
	if plain {
		j := bytes.IndexByte(line[i:], '"')
		return i + j, false, j >= 0
	}
	for i < len(line) {
		i += plainRun(line[i:])
		if i >= len(line) {
			break
		}
		c := line[i]
		switch {
		case c == '"':
			return i, escaped, true
		case c == '\\':
			n, ok := canonicalEscape(line[i:])
			if !ok {
				return 0, false, false
			}
			escaped = true
			i += n
		case c < 0x20:
			return 0, false, false // a raw control character is not JSON
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(line[i:])
			// invalid UTF-8 decodes to U+FFFD (not these bytes); U+2028 and
			// U+2029 are always written escaped
			if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
				return 0, false, false
			}
			i += n
		}
	}
	return 0, false, false
}

// canonicalEscape checks the escape at the start of s and returns its length.
func canonicalEscape(s []byte) (int, bool) {
	if len(s) < 2 {
		return 0, false
	}
	switch s[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		if len(s) < 6 {
			return 0, false
		}
		v, ok := lowerHex4(s[2:6])
		switch {
		case !ok:
			return 0, false
		case v < 0x20:
			// the encoder writes these five short and the rest as \u00xx
			switch v {
			case '\b', '\f', '\n', '\r', '\t':
				return 0, false
			}
			return 6, true
		case v == 0x2028 || v == 0x2029:
			return 6, true
		}
	}
	return 0, false
}

// lowerHex4 reads four lowercase hex digits (the encoder never writes upper case).
func lowerHex4(s []byte) (rune, bool) {
	var v rune
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// jsonValue returns the end of the compact JSON value at v[i]: details must
// be valid JSON that the encoder writes unchanged (a RawMessage goes through
// json.Compact, no HTML escaping), so with no space outside strings.
//
// Hand-written rather than json.Compact because it runs on every line of a
// verification, where Compact's byte-at-a-time state machine and its buffer
// cost more than the rest of the line. It follows the grammar
// encoding/json's scanner accepts (strings: any byte from 0x20 up, the
// escapes \" \\ \/ \b \f \n \r \t \uXXXX in either case), and when in doubt
// (deep nesting) says false, which only sends the line to parseLine.
// plain: v holds no backslash, control character or byte from 0x80 up.
func jsonValue(v []byte, i, depth int, plain bool) (int, bool) {
	if i >= len(v) || depth > 512 {
		return 0, false
	}
	switch c := v[i]; {
	case c == '{' || c == '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i++
		if i < len(v) && v[i] == closing {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(v) || v[i] != '"' {
					return 0, false
				}
				if i, ok = jsonString(v, i+1, plain); !ok || i >= len(v) || v[i] != ':' {
					return 0, false
				}
				i++
			}
			if i, ok = jsonValue(v, i, depth+1, plain); !ok || i >= len(v) {
				return 0, false
			}
			switch v[i] {
			case ',':
				i++
			case closing:
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '"':
		return jsonString(v, i+1, plain)
	case c == 't':
		return jsonLiteral(v, i, "true")
	case c == 'f':
		return jsonLiteral(v, i, "false")
	case c == 'n':
		return jsonLiteral(v, i, "null")
	default:
		return jsonNumber(v, i)
	}
}

// jsonString returns the end of the string whose content starts at v[i]
// (after the closing quote).
func jsonString(v []byte, i int, plain bool) (int, bool) {
	if plain {
		j := bytes.IndexByte(v[i:], '"')
		return i + j + 1, j >= 0
	}
	for i < len(v) {
		i += plainRun(v[i:])
		if i >= len(v) {
			break
		}
		switch c := v[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(v) {
				return 0, false
			}
			switch v[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := jsonesc.Hex4(v[i+2:]); !ok {
					return 0, false
				}
				i += 6
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		default: // any other byte, UTF-8 or not, as the scanner allows
			i++
		}
	}
	return 0, false
}

func jsonLiteral(v []byte, i int, lit string) (int, bool) {
	if !bytes.HasPrefix(v[i:], []byte(lit)) {
		return 0, false
	}
	return i + len(lit), true
}

// jsonNumber: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(v []byte, i int) (int, bool) {
	digits := func() int {
		n := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case digits() == 0:
		return 0, false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	return i, true
}

// canonicalInt reads an integer as the encoder writes an int64: no sign but
// a minus, no leading zero, no "-0".
func canonicalInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || len(d) > 19 || d[0] == '0' && (len(d) > 1 || neg) {
		return 0, false
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= 1<<63:
		return int64(-u), true // -1<<63 included: -u wraps to it
	}
	return 0, false
}

// plainLine reports whether line holds only printable ASCII and no
// backslash: then no string in it has an escape or a byte to check, and
// each ends at its next quote. The test is branch-free over eight bytes at
// a time (a byte below 0x20 borrows into its high bit, one from 0x80 up has
// it set; with no such byte there is no borrow), then one IndexByte.
func plainLine(line []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	var a, b, c, d uint64
	i := 0
	for ; len(line)-i >= 32; i += 32 {
		w0 := binary.LittleEndian.Uint64(line[i:])
		w1 := binary.LittleEndian.Uint64(line[i+8:])
		w2 := binary.LittleEndian.Uint64(line[i+16:])
		w3 := binary.LittleEndian.Uint64(line[i+24:])
		a |= w0 | (w0 - ones*0x20)
		b |= w1 | (w1 - ones*0x20)
		c |= w2 | (w2 - ones*0x20)
		d |= w3 | (w3 - ones*0x20)
	}
	if (a|b|c|d)&highs != 0 {
		return false
	}
	for _, ch := range line[i:] {
		if ch < 0x20 || ch >= 0x80 {
			return false
		}
	}
	return bytes.IndexByte(line, '\\') < 0
}

// plainRun is how many bytes at the start of b need no second look inside a
// string: printable ASCII other than the quote and the backslash. It tests
// eight bytes at a time (SWAR), since most of a line is such bytes.
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	n := 0
	for len(b)-n >= 8 {
		x := binary.LittleEndian.Uint64(b[n:])
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		// a byte is flagged when it is below 0x20, at or above 0x80, or zero
		// after the xor (the quote or the backslash); borrows only flag bytes
		// after a flagged one, so the first flag is exact
		special := ((x - ones*0x20) | x | (q-ones)&^q | (s-ones)&^s) & highs
		if special != 0 {
			return n + bits.TrailingZeros64(special)/8
		}
		n += 8
	}
	for n < len(b) {
		c := b[n]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			break
		}
		n++
	}
	return n
}

// entry builds the Entry a canonical raw line decodes to.
func (r *rawLine) entry() Entry {
	s := func(f int) string {
		if r.escaped&(1<<f) == 0 {
			return string(r.str[f])
		}
		return unescape(r.str[f])
	}
	return Entry{
		Seq: r.seq, Time: s(rawTime), Actor: s(rawActor), Event: s(rawEvent), TaskID: s(rawTaskID),
		Capability: s(rawCapability), Target: s(rawTarget), TokenJTI: s(rawTokenJTI), Success: r.success,
		ErrorCode: s(rawErrorCode), ContentHashBefore: s(rawHashBefore), ContentHashAfter: s(rawHashAfter),
		Details: json.RawMessage(bytes.Clone(r.details)), Prev: s(rawPrev), Hash: s(rawHash),
	}
}

// unescape decodes a string value canonicalString accepted (so only the
// escapes it allows occur, and Append cannot refuse one).
func unescape(s []byte) string {
	out, _ := jsonesc.Append(make([]byte, 0, len(s)), s)
	return string(out)
}

// parseLineFast is parseLine, taking the allocation-light path for a
// canonical line.
func parseLineFast(line []byte) (Entry, error) {
	var r rawLine
	if scanCanonical(line, &r) {
		return r.entry(), nil
	}
	return parseLine(line)
}

// appendStringValue appends s as the log's encoder writes it between
// quotes: what a needle for a field's value must match.
func appendStringValue(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return append(dst, b[1:len(b)-1]...)
}
