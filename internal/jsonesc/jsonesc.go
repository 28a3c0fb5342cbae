// Package jsonesc decodes the escapes of JSON string values, for the
// hand-written JSON readers that skip encoding/json on hot paths: the audit
// log's canonical lines (audit/canon.go) and the search backends' output
// (exec/search/parse.go). Both decode a value the way encoding/json does;
// each keeps its own rules for which escapes it accepts.
package jsonesc

import "unicode/utf8"

// HexVal is the value of the hex digit c (either case), or -1.
func HexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// Hex4 reads the four hex digits (either case) at the start of s.
func Hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		v := HexVal(c)
		if v < 0 {
			return 0, false
		}
		r = r<<4 | v
	}
	return r, true
}

// Decode decodes the escape at the start of s (s[0] is the backslash) and
// returns the rune it stands for and how many bytes it takes. A \u escape of
// a high surrogate followed by a \u escape of a low one is one rune (12
// bytes); any other surrogate is utf8.RuneError, as encoding/json decodes
// it. ok is false for an escape JSON does not have, or one cut short.
func Decode(s []byte) (r rune, n int, ok bool) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0, false
	}
	switch s[1] {
	case '"', '\\', '/':
		return rune(s[1]), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
	default:
		return 0, 0, false
	}
	r, ok = Hex4(s[2:])
	switch {
	case !ok:
		return 0, 0, false
	case r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u':
		low, ok := Hex4(s[8:])
		if !ok {
			return 0, 0, false
		}
		if low >= 0xDC00 && low < 0xE000 {
			return 0x10000 + (r-0xD800)<<10 + (low - 0xDC00), 12, true
		}
		return utf8.RuneError, 6, true
	case r >= 0xD800 && r < 0xE000:
		return utf8.RuneError, 6, true
	}
	return r, 6, true
}

// Append appends the decoded value of a string's body (the bytes between
// its quotes) to dst. Only escapes are decoded: other bytes are copied as
// they are (valid UTF-8 or not: a caller that needs valid text checks it,
// as the audit log's canonical check does). ok is false at the first escape Decode refuses; dst
// then holds what was decoded before it.
func Append(dst, s []byte) ([]byte, bool) {
	for len(s) > 0 {
		i := indexBackslash(s)
		dst = append(dst, s[:i]...)
		if i == len(s) {
			break
		}
		r, n, ok := Decode(s[i:])
		if !ok {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
		s = s[i+n:]
	}
	return dst, true
}

func indexBackslash(s []byte) int {
	for i, c := range s {
		if c == '\\' {
			return i
		}
	}
	return len(s)
}
