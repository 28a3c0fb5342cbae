package preview

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// minScrubLen is the shortest secret whose other copies are scrubbed everywhere in the same output; shorter
// values (a 3-digit CVV) would mask unrelated numbers and words.
const minScrubLen = 6

// masker masks one output (a string, a header set, a preview) and remembers every secret it masked, so a copy
// of the same secret elsewhere in that output — in a note field, the effect text, a URL — is scrubbed too.
type masker struct {
	secrets map[string]struct{}
	// urlDepth counts the URLs being masked inside one another (a URL in a
	// query value of a URL...), which maxURLDepth bounds.
	urlDepth int
	// decodeDepth counts the encodings being decoded inside one another
	// (percent-encoding, base64), which maxDecodeDepth bounds.
	decodeDepth int
}

// maxURLDepth bounds URLs nested in URLs' parameters and path segments.
// Each level masks the rest of the text again, so a value of 60,000 nested
// "https://a.b/?x=" took hours; deeper than this, a URL is masked whole.
const maxURLDepth = 8

func newMasker() *masker { return &masker{secrets: map[string]struct{}{}} }

func (m *masker) note(secret string) {
	secret = strings.TrimSpace(secret)
	if len(secret) >= minScrubLen {
		m.secrets[secret] = struct{}{}
	}
}

// longSecret is the length from which a remembered secret is scrubbed by a
// search of its own rather than by the strings.Replacer: the Replacer's
// setup for one pattern, and its matching of several on repetitive text,
// cost the pattern's length squared (a 100 kB password took minutes).
const longSecret = 256

// scrubber replaces every remembered secret, longest first, with the fixed mask.
type scrubber struct {
	long  []string // longSecret bytes or more, longest first
	short *strings.Replacer
}

func (m *masker) scrubber() *scrubber {
	if len(m.secrets) == 0 {
		return nil
	}
	list := make([]string, 0, len(m.secrets))
	for s := range m.secrets {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool {
		if len(list[i]) != len(list[j]) {
			return len(list[i]) > len(list[j])
		}
		return list[i] < list[j]
	})
	r := &scrubber{}
	pairs := make([]string, 0, 2*len(list))
	for _, s := range list {
		if len(s) >= longSecret {
			r.long = append(r.long, s)
			continue
		}
		pairs = append(pairs, s, Fixed)
	}
	if len(pairs) > 0 {
		r.short = strings.NewReplacer(pairs...)
	}
	return r
}

// Replace scrubs s.
func (r *scrubber) Replace(s string) string {
	for _, l := range r.long {
		if len(s) >= len(l) {
			s = strings.ReplaceAll(s, l, Fixed)
		}
	}
	if r.short != nil {
		s = r.short.Replace(s)
	}
	return s
}

func scrub(r *scrubber, s string) string {
	if r == nil {
		return s
	}
	return r.Replace(s)
}

// MaskString masks every secret the value detectors recognise in free text: PEM private keys, JWTs, vendor
// API keys (shapes.go), prefixless tokens (special.go), gitleaks' structured and name-keyed rules and
// credentials after an auth scheme (gitleaks.go), URLs with and without a scheme (userinfo, secret
// query parameters, webhook paths), secret-named "name=value" pairs, Luhn-valid card numbers, valid-looking
// SSNs, email addresses, and any of these wrapped in base64 or percent-encoding (encoded.go).
func MaskString(s string) string {
	m := newMasker()
	out := m.text(s, true)
	return scrub(m.scrubber(), out)
}

// MaskField masks value by the field's name (header, JSON key, query or form key) and then by value shape.
func MaskField(name, value string) string {
	m := newMasker()
	out := m.field(name, value)
	return scrub(m.scrubber(), out)
}

// MaskURL masks userinfo, secret-named query and fragment parameters, path parameters (";jsessionid=…"),
// the path segments of webhook URLs that carry their key (paths.go), and secrets in path segments and
// parameter values. A path that merely contains a word like "token" (/media/token_ring.mp3) is left alone.
func MaskURL(raw string) string {
	m := newMasker()
	out := m.url(raw)
	return scrub(m.scrubber(), out)
}

// MaskHeaders returns a masked copy of a header set; the input is not modified.
func MaskHeaders[H map[string]string | http.Header](h H) H {
	m := newMasker()
	switch v := any(h).(type) {
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, val := range v {
			out[m.text(k, false)] = m.field(k, val)
		}
		r := m.scrubber()
		for k, val := range out {
			out[k] = scrub(r, val)
		}
		return any(out).(H)
	case http.Header:
		out := make(http.Header, len(v))
		for k, vals := range v {
			mk := m.text(k, false)
			for _, val := range vals {
				out[mk] = append(out[mk], m.field(k, val))
			}
		}
		r := m.scrubber()
		for _, vals := range out {
			for i := range vals {
				vals[i] = scrub(r, vals[i])
			}
		}
		return any(out).(H)
	}
	return h
}

// MaskForm masks an application/x-www-form-urlencoded body by key name and by value shape, keeping the
// order of the pairs and the encoding of unchanged ones.
func MaskForm(body string) string {
	m := newMasker()
	out := m.form(body, nil)
	return scrub(m.scrubber(), out)
}

// field masks one named value.
func (m *masker) field(name, value string) string {
	switch classifyName(name) {
	case kindPassword:
		m.note(value)
		return Fixed
	case kindSecret:
		m.note(value)
		return m.secretValue(value)
	case kindAuthorization:
		return m.authorization(value)
	case kindCookie:
		return m.cookies(value, false)
	case kindSetCookie:
		return m.cookies(value, true)
	case kindCard:
		m.note(value)
		if d := digitsOf(value); len(d) >= 13 && len(d) <= 19 {
			return cardShape(d)
		}
		return Fixed
	case kindGrant:
		if grantLike(value) {
			m.note(value)
			return Fixed
		}
	case kindSSN:
		m.note(value)
		if d := digitsOf(value); len(d) == 9 {
			return "***-**-" + string(d[5:])
		}
		return Fixed
	}
	return m.text(value, true)
}

// grantLike reports whether a value under a "code" name reads as an OAuth
// code (GitHub's 20 hex, Google's "4/0A…", random URL-safe runs) rather
// than a status, country or zip code: ten characters or more, letters and
// digits both, and gitleaks' generic entropy.
func grantLike(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) < 10 || strings.ContainsAny(v, " \t") || shannon(v) < 3 {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		letter = letter || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		digit = digit || c >= '0' && c <= '9'
	}
	return letter && digit
}

// secretValue shows a recognised key as prefix...last4 (the spec's API key shape); anything else, including
// an opaque bearer token, becomes the fixed mask, since its prefix and tail are not known to be harmless.
func (m *masker) secretValue(v string) string {
	if shape, ok := vendorKey(strings.TrimSpace(v)); ok {
		return shape
	}
	return Fixed
}

// authorization keeps the scheme ("Bearer", "Basic", "token") and masks the credentials.
func (m *masker) authorization(v string) string {
	t := strings.TrimSpace(v)
	scheme, cred, ok := strings.Cut(t, " ")
	if !ok || strings.ContainsAny(scheme, "=:.") || len(scheme) > 20 {
		m.note(t)
		return m.secretValue(t)
	}
	cred = strings.TrimSpace(cred)
	m.note(cred)
	return scheme + " " + m.secretValue(cred)
}

// cookies masks every cookie value ("a=1; b=2" → "a=********; b=********"); for Set-Cookie only the first
// pair is the cookie, the rest are attributes (Path, Expires, HttpOnly) that stay readable.
func (m *masker) cookies(v string, set bool) string {
	parts := strings.Split(v, ";")
	for i, p := range parts {
		if set && i > 0 {
			parts[i] = m.text(p, true)
			continue
		}
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			m.note(p)
			parts[i] = Fixed
			continue
		}
		m.note(val)
		parts[i] = name + "=" + Fixed
	}
	return strings.Join(parts, ";")
}

// url masks a URL without re-serialising it, so what is shown is byte-for-byte the request except the masks.
func (m *masker) url(raw string) string {
	if m.urlDepth >= maxURLDepth {
		m.note(raw)
		return Fixed
	}
	m.urlDepth++
	defer func() { m.urlDepth-- }()
	rest := raw
	host := ""
	var b strings.Builder
	if i := strings.Index(rest, "://"); i > 0 && isScheme(rest[:i]) {
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		authority := rest[:end]
		host = hostOf(authority)
		rest = rest[end:]
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			userinfo := authority[:at]
			if user, pass, ok := strings.Cut(userinfo, ":"); ok {
				m.note(pass)
				m.note(unescape(pass))
				b.WriteString(m.segment(user) + ":" + Fixed)
			} else {
				// A lone userinfo is usually a token (https://ghp_…@github.com).
				m.note(userinfo)
				m.note(unescape(userinfo))
				b.WriteString(Fixed)
			}
			authority = authority[at:]
		}
		b.WriteString(authority)
	}
	path, query, frag := rest, "", ""
	hasQ, hasF := false, false
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path, frag, hasF = path[:i], path[i+1:], true
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query, hasQ = path[:i], path[i+1:], true
	}
	segs := strings.Split(path, "/")
	keep, secret := pathSecrets(host, segs)
	for i, s := range segs {
		if secret != nil && secret[i] {
			m.note(s)
			m.note(unescape(s))
			segs[i] = keep[i] + Fixed
			continue
		}
		segs[i] = m.segment(s)
	}
	b.WriteString(strings.Join(segs, "/"))
	if hasQ {
		b.WriteByte('?')
		b.WriteString(m.form(query, nil))
	}
	if hasF {
		b.WriteByte('#')
		if strings.Contains(frag, "=") {
			// OAuth implicit flow puts access_token in the fragment.
			b.WriteString(m.form(frag, nil))
		} else {
			b.WriteString(m.segment(frag))
		}
	}
	return b.String()
}

func isScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '+' && s[i] != '-' && s[i] != '.' {
			return false
		}
	}
	return true
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

func unescapeQuery(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// segment masks one path segment by value, looking at both its raw and its percent-decoded form.
func (m *masker) segment(s string) string {
	if s == "" {
		return s
	}
	dec := unescape(s)
	if dec == s {
		// Nothing was escaped, so the masked text needs no escaping either: ";jsessionid=********" keeps
		// its separators rather than turning into "%3Bjsessionid%3D********".
		return m.text(s, false)
	}
	if out := m.text(dec, false); out != dec {
		return escapePathMask(out)
	}
	return m.text(s, false)
}

// escapePathMask percent-encodes a masked path segment, leaving the mask shapes and the delimiters a
// segment may hold (";", "=", ",") readable.
func escapePathMask(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; strings.IndexByte(";=,!$&'()+", c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteString(escapeMask(s[i : i+1]))
		}
	}
	return b.String()
}

// escapeMask percent-encodes a masked value for a URL, leaving the characters of the mask shapes readable.
func escapeMask(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || strings.IndexByte("*-._~@:", c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}

// formPair is one decoded key/value of a form or query, as the preview lists it.
type formPair struct {
	name, value string
	masked      bool
}

// form masks "a=1&b=2" pairs; when pairs is non-nil each decoded (masked) pair is appended to it.
func (m *masker) form(body string, pairs *[]formPair) string {
	if body == "" {
		return body
	}
	parts := strings.Split(body, "&")
	for i, p := range parts {
		rawName, rawVal, hasVal := strings.Cut(p, "=")
		name := unescapeQuery(rawName)
		mname := m.text(name, false)
		if mname != name {
			rawName = escapeMask(mname)
		}
		val := unescapeQuery(rawVal)
		mval := m.field(name, val)
		changed := mval != val
		if !changed && rawVal != val {
			// The decoded form was clean; check the raw form too (a secret may hide behind an escape).
			if mraw := m.text(rawVal, false); mraw != rawVal {
				mval, changed = mraw, true
			}
		}
		if changed {
			rawVal = escapeMask(mval)
		}
		if hasVal || changed {
			parts[i] = rawName + "=" + rawVal
		} else {
			parts[i] = rawName
		}
		if pairs != nil {
			*pairs = append(*pairs, formPair{mname, mval, changed || mname != name})
		}
	}
	return strings.Join(parts, "&")
}

// MaskIdentifier masks a name an agent or a remote party chose — a task id,
// a lease's sub or jti, an agent name — before a screen or a command shows
// it: a secret-shaped id (a pasted API key used as a task id, a sub that is a
// bearer token) is masked like any other text, and an ordinary id (a UUID, a
// ULID, "claude-desktop") comes back unchanged. Callers that show ids:
// `vigil pending`, `vigil preview`'s task line, the Approvals pane's rows and
// lease line, `audit tail`.
func MaskIdentifier(id string) string { return MaskString(id) }
