package search

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The response can hold hundreds of thousands of events, so it is encoded
// by hand: encoding/json's reflection was several times slower than the
// backends themselves. Output is plain JSON with no HTML escaping.

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
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
			if r == '\u2028' || r == '\u2029' {
				b = append(b, s[start:i]...)
				b = append(b, `\u202`...)
				b = append(b, hexDigits[r&0xF])
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
	b = append(b, s[start:]...)
	return append(b, '"')
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
	}
	return append(b, "}}"...)
}

// MarshalJSON implements json.Marshaler.
func (ev Event) MarshalJSON() ([]byte, error) { return ev.AppendJSON(nil), nil }

// AppendJSON appends the response object (FR-LS-05) with a stable key order.
func (r *Response) AppendJSON(b []byte) []byte {
	b = append(b, `{"pattern":`...)
	b = appendString(b, r.Pattern)
	b = append(b, `,"path":`...)
	b = appendString(b, r.Path)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(r.Count), 10)
	b = append(b, `,"matches":[`...)
	for i := range r.Matches {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.Matches[i].AppendJSON(b)
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
	b = append(b, `,"content":`...)
	b = appendString(b, r.Content)
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler.
func (r Response) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// content is FR-LS-05c's human-readable view: grep-like lines
// ("path:line:col:text" for matches, "path-line-text" for context), then a
// note when the list is cut short.
func content(r *Response, e effective) string {
	var b strings.Builder
	for i := range r.Matches {
		ev := &r.Matches[i]
		b.WriteString(ev.Path)
		if ev.Type == "match" {
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(ev.LineNumber, 10))
			b.WriteByte(':')
			b.WriteString(strconv.FormatUint(ev.Column, 10))
			b.WriteByte(':')
		} else {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(ev.LineNumber, 10))
			b.WriteByte('-')
		}
		b.WriteString(ev.Line)
		b.WriteByte('\n')
	}
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
