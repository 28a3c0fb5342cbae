package audit

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
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
	i := len(keySeq)
	j := i
	if j < len(line) && line[j] == '-' {
		j++
	}
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	seq, err := strconv.ParseInt(string(line[i:j]), 10, 64)
	// canonical integers: no leading zero, no "-0", no "+"
	if err != nil || strconv.FormatInt(seq, 10) != string(line[i:j]) {
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
			end, esc, ok := canonicalString(line, i)
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
	end, ok := skipValue(line, i)
	if !ok || !compactJSON(line[i:end]) || !bytes.HasPrefix(line[end:], keyPrev) {
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
func canonicalString(line []byte, i int) (end int, escaped, ok bool) {
	for i < len(line) {
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

// skipValue returns the end of the JSON value starting at line[i], following
// strings and nesting only far enough to find where it ends; compactJSON
// then checks it properly.
func skipValue(line []byte, i int) (int, bool) {
	depth := 0
	for i < len(line) {
		switch c := line[i]; c {
		case '"':
			i++
			for i < len(line) && line[i] != '"' {
				if line[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(line) {
				return 0, false
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return i, true // the end of the enclosing line: a scalar ran to here
			}
			if depth == 0 {
				return i + 1, true
			}
		case ',':
			if depth == 0 {
				return i, true
			}
		}
		i++
	}
	return 0, false
}

// compactJSON reports whether v is valid JSON that the encoder would write
// unchanged: a RawMessage is written through json.Compact (no HTML
// escaping), so it must already be compact.
func compactJSON(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	buf := bytes.NewBuffer(make([]byte, 0, len(v)))
	if err := json.Compact(buf, v); err != nil {
		return false
	}
	return bytes.Equal(buf.Bytes(), v)
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
// escapes it allows occur).
func unescape(s []byte) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			v, _ := lowerHex4(s[i+1 : i+5])
			out = utf8.AppendRune(out, v)
			i += 4
		default: // '"' or '\\'
			out = append(out, s[i])
		}
	}
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
