package preview

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// Secrets wrapped in a standard encoding: the base64 of a key or of "user:token" (Basic credentials, a
// Kubernetes secret, a docker config), or a percent-encoded value outside a URL we parse. The encoded text
// is decoded and masked like any other text; when that masks anything, the encoded run is masked too.

// encodedShapes run after the plain detectors, so a run they already claimed is not decoded again.
var encodedShapes = []detector{
	{"base64", func(s string) bool { return len(s) >= minBase64 }, findBase64},
	{"base64-lines", func(s string) bool { return len(s) > 2*minBase64 && strings.IndexByte(s, '\n') >= 0 }, findWrappedBase64},
}

// percentShape runs before the plain detectors; see textDetectors.
var percentShape = detector{"percent", func(s string) bool { return strings.IndexByte(s, '%') >= 0 }, findPercent}

// minBase64 is the shortest run worth decoding: 12 bytes, less than any secret shape we know.
const minBase64 = 16

func b64Body(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-' }

// findBase64 decodes runs of base64 characters; a run that contains '/' is also tried piece by piece,
// since in free text a path and a base64 token run together ("/tmp/QUtJQ…").
func findBase64(m *masker, s string) []span {
	var out []span
	for i := 0; i < len(s); {
		n := runFwd(s, i, b64Body)
		if n == 0 {
			i++
			continue
		}
		end := i + n
		if p := runFwd(s, end, func(c byte) bool { return c == '=' }); p <= 2 && (end+p == len(s) || !b64Body(s[end+p])) {
			end += p
		}
		if n >= minBase64 {
			out = append(out, m.base64Spans(s, i, end)...)
		}
		i = end
	}
	return out
}

// findWrappedBase64 decodes base64 wrapped over lines (MIME's 76 columns, an
// indented YAML block): two or more lines, each only base64 after its
// indentation, all of one length (a multiple of 4, at least minBase64) but
// the last, which is no longer. Each line alone decodes to a piece of the
// secret that no detector knows; together they are masked whole.
func findWrappedBase64(m *masker, s string) []span {
	type line struct{ a, b int } // the base64 of a line: s[a:b]
	var out []span
	var block []line
	flush := func() {
		if len(block) >= 2 {
			var joined strings.Builder
			for _, l := range block {
				joined.WriteString(s[l.a:l.b])
			}
			if _, masked := m.maskDecoded(joined.String()); masked {
				out = append(out, fixedSpan(s, block[0].a, block[len(block)-1].b))
			}
		}
		block = block[:0]
	}
	for i := 0; i <= len(s); {
		e := strings.IndexByte(s[i:], '\n')
		if e < 0 {
			e = len(s)
		} else {
			e += i
		}
		a := i + runFwd(s, i, func(c byte) bool { return c == ' ' || c == '\t' })
		b := strings.TrimSuffix(s[a:e], "\r")
		n := runFwd(b, 0, b64Body)
		pad := runFwd(b, n, func(c byte) bool { return c == '=' })
		ok := n > 0 && n+pad == len(b) && pad <= 2
		switch {
		case !ok:
			flush()
		case len(block) > 0 && len(b) <= block[0].b-block[0].a:
			block = append(block, line{a, a + len(b)})
			if pad > 0 || len(b) < block[0].b-block[0].a {
				flush() // the last line
			}
		default:
			flush()
			if pad == 0 && len(b) >= minBase64 && len(b)%4 == 0 {
				block = append(block, line{a, a + len(b)})
			}
		}
		i = e + 1
	}
	flush()
	return out
}

// base64Spans checks s[a:b] whole, then each '/'-separated piece if the whole did not decode to text.
func (m *masker) base64Spans(s string, a, b int) []span {
	decoded, masked := m.maskDecoded(s[a:b])
	if masked {
		return []span{fixedSpan(s, a, b)}
	}
	if decoded || strings.IndexByte(s[a:b], '/') < 0 {
		return nil
	}
	var out []span
	for p := a; p < b; {
		q := p + runFwd(s, p, func(c byte) bool { return c != '/' })
		if q > b {
			q = b
		}
		if q-p >= minBase64 {
			if _, masked := m.maskDecoded(s[p:q]); masked {
				out = append(out, fixedSpan(s, p, q))
			}
		}
		p = q + 1
	}
	return out
}

// maskDecoded reports whether run decodes to text, and whether that text holds a secret.
func (m *masker) maskDecoded(run string) (decoded, masked bool) {
	body := strings.TrimRight(run, "=")
	if allHex(body) {
		return false, false // a hash or an id, not base64
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(body, "-_") {
		if strings.ContainsAny(body, "+/") {
			return false, false
		}
		enc = base64.RawURLEncoding
	}
	if len(body)%4 == 1 {
		return false, false
	}
	b, err := enc.DecodeString(body)
	if err != nil || !printable(b) {
		return false, false
	}
	txt := string(b)
	return true, m.decodedText(txt) != txt
}

// maxDecodeDepth bounds encodings inside encodings. Each level masks its
// decoded text again, and "%252525…41" loses one level per 2 bytes: 256 kB
// of it took minutes. Deeper than this, decoded text is masked whole.
const maxDecodeDepth = 8

// decodedText masks text decoded from a run of s, one level deeper.
func (m *masker) decodedText(txt string) string {
	if m.decodeDepth >= maxDecodeDepth {
		m.note(txt)
		return Fixed
	}
	m.decodeDepth++
	defer func() { m.decodeDepth-- }()
	return m.text(txt, true)
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// printable reports whether b is UTF-8 text without control characters other than tab and line ends;
// random bytes almost never are, so binary data is not mistaken for encoded text.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return true
}

func pctRunChar(c byte) bool {
	return c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '<' && c != '>' && c != '`'
}

// findPercent decodes runs holding percent escapes (a double-encoded query value, an encoded token in a
// log line) and masks the run when its decoded text holds a secret. The masked run is shown decoded,
// with only the characters that cannot stand in a URL escaped again.
func findPercent(m *masker, s string) []span {
	var out []span
	for i := 0; i < len(s); {
		n := runFwd(s, i, pctRunChar)
		if n == 0 {
			i++
			continue
		}
		run := s[i : i+n]
		if strings.Contains(run, "://") {
			// A URL: the URL detector decodes its parts one by one, and claims the run before this one could.
			i += n
			continue
		}
		// A query string writes spaces as '+'; a path keeps '+' literal (and base64 uses it). Try both,
		// the query reading first when the run looks like one.
		order := []bool{false, true}
		if strings.IndexByte(run, '=') >= 0 {
			order = []bool{true, false}
		}
		for _, plus := range order {
			if plus && strings.IndexByte(run, '+') < 0 {
				continue
			}
			if dec := percentDecode(run, plus); dec != run {
				if masked := m.decodedText(dec); masked != dec {
					out = append(out, span{i, i + n, escapeLoose(masked), ""})
					break
				}
			}
		}
		i += n
	}
	return out
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// percentDecode decodes every valid %XX (and '+' as a space when plus is set) and leaves anything else as
// it is, unlike url.PathUnescape, which gives up on the whole string at the first stray '%'.
func percentDecode(s string, plus bool) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case plus && s[i] == '+':
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// escapeLoose percent-encodes what cannot stand in a URL (spaces, controls, quotes, '%', non-ASCII).
func escapeLoose(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; pctRunChar(c) && c != '%' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}
