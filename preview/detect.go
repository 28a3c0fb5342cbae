package preview

import (
	"regexp"
	"sort"
	"strings"
)

// Fixed is the mask for passwords and unrecognised secrets: fixed width, so it never reveals a length.
const Fixed = "********"

// span is one detected secret in a string: [start,end) and what replaces it.
type span struct {
	start, end int
	repl       string
	secret     string // the original text, remembered so other copies of it are scrubbed too
}

// detector finds secrets of one kind. Detectors run most specific first; a later detector never claims
// text that overlaps an earlier claim.
type detector struct {
	name string
	// quick is a cheap test; when it fails the detector cannot match, which keeps masking fast.
	quick func(s string) bool
	find  func(m *masker, s string) []span
}

var (
	pemRE     = regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)`)
	pemHeadRE = regexp.MustCompile(`^-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)
	pemTailRE = regexp.MustCompile(`-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----$`)
	jwtRE     = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{2,}\.eyJ[A-Za-z0-9_-]{2,}(?:\.[A-Za-z0-9_-]*){1,3}`)
	// URLs with a scheme; the trailing-punctuation trim happens in code.
	urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s<>"'\x60]+`)
)

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func hasDigits(s string, n int) bool {
	c := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			if c++; c >= n {
				return true
			}
		}
	}
	return false
}

// textDetectors and partDetectors list the detectors in priority order; parts of a URL are masked
// without URL detection. They are built in init because the URL detector reaches back into text.
var textDetectors, partDetectors []detector

func init() {
	head := []detector{{"pem", func(s string) bool { return strings.Contains(s, "PRIVATE KEY") }, findPEM}}
	url := []detector{
		{"url", func(s string) bool { return strings.Contains(s, "://") }, findURLs},
		{"bare-url", mayHaveBareURL, findBareURLs},
	}
	tail := []detector{
		// Percent-encoded runs first: decoded, they are masked by every detector at once, while a vendor
		// key claimed in the raw run would leave its encoded neighbour ("AKIA…%3AwJalr…") to nobody.
		percentShape,
		{"jwt", func(s string) bool { return strings.Contains(s, "eyJ") }, findJWT},
		{"vendor", func(s string) bool { return len(s) >= 14 }, findVendor},
	}
	tail = append(tail, specialShapes...)
	tail = append(tail, leakShapes...)
	tail = append(tail,
		// Cards and SSNs before name=value pairs: they are checksummed or rule-checked shapes, and a pair's
		// value ends at a space, which would leave the later groups of "password=4111 1111 …" unmasked.
		detector{"card", func(s string) bool { return hasDigits(s, 13) }, findCards},
		detector{"ssn", func(s string) bool { return hasDigits(s, 9) }, findSSN},
		detector{"kv", mayHaveSecretName, findKV},
	)
	tail = append(tail, encodedShapes...)
	tail = append(tail, detector{"email", func(s string) bool { return strings.IndexByte(s, '@') > 0 }, findEmails})
	textDetectors = append(append(append([]detector{}, head...), url...), tail...)
	partDetectors = append(append([]detector{}, head...), tail...)
}

// text masks every detected secret in s. Claimed spans never overlap; the first detector to claim wins.
func (m *masker) text(s string, withURL bool) string {
	if len(s) < 6 {
		return s // nothing shorter than "a@b.cd" is detectable
	}
	var claimed []span
	overlaps := func(sp span) bool {
		for _, c := range claimed {
			if sp.start < c.end && c.start < sp.end {
				return true
			}
		}
		return false
	}
	ds := partDetectors
	if withURL {
		ds = textDetectors
	}
	for _, d := range ds {
		if !d.quick(s) {
			continue
		}
		for _, sp := range d.find(m, s) {
			if !overlaps(sp) {
				claimed = append(claimed, sp)
			}
		}
	}
	if len(claimed) == 0 {
		return s
	}
	sort.Slice(claimed, func(i, j int) bool { return claimed[i].start < claimed[j].start })
	var b strings.Builder
	prev := 0
	for _, c := range claimed {
		b.WriteString(s[prev:c.start])
		b.WriteString(c.repl)
		m.note(c.secret)
		prev = c.end
	}
	b.WriteString(s[prev:])
	return b.String()
}

func findPEM(_ *masker, s string) []span {
	var out []span
	for _, loc := range pemRE.FindAllStringIndex(s, -1) {
		block := s[loc[0]:loc[1]]
		head := pemHeadRE.FindString(block)
		tail := pemTailRE.FindString(block)
		if tail == "" {
			tail = strings.Replace(head, "BEGIN", "END", 1)
		}
		out = append(out, span{loc[0], loc[1], head + Fixed + tail, block})
	}
	return out
}

func findJWT(_ *masker, s string) []span {
	var out []span
	for _, loc := range jwtRE.FindAllStringIndex(s, -1) {
		tok := s[loc[0]:loc[1]]
		out = append(out, span{loc[0], loc[1], apiKeyShape("eyJ", tok), tok})
	}
	return out
}

func findVendor(_ *masker, s string) []span {
	var out []span
	for p := 0; p < len(s); p++ {
		// The left boundary: "task_test_…" must not read as a Stripe "sk_test_…" key.
		if vendorIndex[s[p]] == nil || p > 0 && isAlnum(s[p-1]) {
			continue
		}
		if n, shown := vendorAt(s[p:]); n > 0 {
			key := s[p : p+n]
			out = append(out, span{p, p + n, apiKeyShape(shown, key), key})
			p += n - 1
		}
	}
	return out
}

// findURLs masks whole URLs through MaskURL's rules, so userinfo, secret query parameters and fragments
// are handled structurally rather than by value shape alone.
func findURLs(m *masker, s string) []span {
	var out []span
	for _, loc := range urlRE.FindAllStringIndex(s, -1) {
		end := loc[1]
		for end > loc[0] && strings.IndexByte(".,;:!?)]'\"", s[end-1]) >= 0 {
			end--
		}
		raw := s[loc[0]:end]
		if masked := m.url(raw); masked != raw {
			out = append(out, span{loc[0], end, masked, ""})
		}
	}
	return out
}

// mayHaveBareURL is the cheap test: a host's dot must come before some '/' ("/media/track.mp3" has none).
func mayHaveBareURL(s string) bool {
	dot := strings.IndexByte(s, '.')
	return dot >= 0 && dot < strings.LastIndexByte(s, '/')
}

func hostChar(c byte) bool { return isAlnum(c) || c == '.' || c == '-' || c == ':' }

func urlChar(c byte) bool {
	return c > ' ' && c != '<' && c != '>' && c != '"' && c != '\'' && c != '`' && c != 0x7f
}

// findBareURLs masks "host.tld/path" written without a scheme, as webhook URLs often are in chat and notes,
// through MaskURL's rules, so "hooks.slack.com/services/…" is masked like its https form. A host glued
// to a scheme ("https://"), an e-mail address or a longer name is not a bare URL.
func findBareURLs(m *masker, s string) []span {
	var out []span
	for i := 0; i < len(s); i++ {
		slash := strings.IndexByte(s[i:], '/')
		if slash < 0 {
			break
		}
		i += slash
		start := i - runBack(s, i, hostChar)
		host := s[start:i]
		if host == "" || !isAlnum(host[0]) || !strings.Contains(strings.Trim(host, "."), ".") ||
			start > 0 && strings.IndexByte("/@_", s[start-1]) >= 0 {
			continue
		}
		end := i + runFwd(s, i, urlChar)
		for end > i && strings.IndexByte(".,;:!?)]", s[end-1]) >= 0 {
			end--
		}
		raw := s[start:end]
		if masked := m.url("https://" + raw); masked != "https://"+raw {
			out = append(out, span{start, end, strings.TrimPrefix(masked, "https://"), ""})
		}
		i = end
	}
	return out
}

// errorWords start the rest of an error message after "name: "; no secret is one of them.
var errorWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`illegal invalid no not none nil null missing empty expired revoked required
		unknown unexpected expected malformed bad cannot can't could couldn't failed unable permission
		connect connection dial lookup read write open is was does did must too unsupported undefined unset`) {
		errorWords[w] = true
	}
}

func isNameChar(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

// authSchemes may precede a credential in "Authorization: Bearer xyz"; the credential is masked with it.
var authSchemes = []string{"bearer", "basic", "token", "digest", "negotiate"}

// findKV masks the value of secret-named "name=value" and "name: value" pairs in free text (log lines,
// error messages, JSON or headers quoted inside a string). Quoted values lose only their inside.
func findKV(m *masker, s string) []span {
	var out []span
	next := 0
	for i := 0; i < len(s); i++ {
		if (s[i] != '=' && s[i] != ':') || i < next {
			continue
		}
		j := i
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
			j--
		}
		ne := j
		for j > 0 && isNameChar(s[j-1]) {
			j--
		}
		for j < ne && !(s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		if j == ne || j > 0 && (s[j-1] == '/' || s[j-1] == '\\') {
			// A name that ends a file path ("dial unix /etc/passwd: connect: …") is not a field.
			continue
		}
		name := s[j:ne]
		kind := classifyName(kvName(name))
		if kind == kindNone {
			continue
		}
		k := i + 1
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if k >= len(s) {
			continue
		}
		vs, ve := k, k
		if q := s[k]; q == '"' || q == '\'' {
			e := k + 1
			for e < len(s) && s[e] != q && s[e] != '\n' {
				e++
			}
			vs, ve = k+1, e
		} else {
			for _, sc := range authSchemes {
				if len(s)-k > len(sc) && strings.EqualFold(s[k:k+len(sc)], sc) && (s[k+len(sc)] == ' ' || s[k+len(sc)] == '\t') {
					ve = k + len(sc)
					for ve < len(s) && (s[ve] == ' ' || s[ve] == '\t') {
						ve++
					}
					break
				}
			}
			for ve < len(s) && !isSpace(s[ve]) && strings.IndexByte("&,;\"'<>)}]", s[ve]) < 0 {
				ve++
			}
			if kind == kindCard || kind == kindSSN {
				// Card numbers and SSNs are often written in space-separated groups: take all of them.
				e := ve
				for e < len(s) && (s[e] >= '0' && s[e] <= '9' || s[e] == ' ' || s[e] == '-') {
					e++
				}
				for e > ve && (s[e-1] == ' ' || s[e-1] == '-') {
					e--
				}
				ve = e
			}
		}
		val := s[vs:ve]
		if prose := s[i] == ':' && k > i+1 && vs == k; prose && errorWords[strings.ToLower(strings.TrimRight(val, ".!"))] {
			// "failed to decode key: illegal base64 data", "secret: not found": an error message goes on
			// after the colon, and its next word is no credential.
			continue
		}
		if strings.TrimSpace(val) != "" {
			out = append(out, span{vs, ve, m.field(kvName(name), val), ""})
		}
		next = ve
	}
	return out
}

// kvName is the part of a dotted name in free text that says what the value is: "db.password" is a
// password, but "token.example.com" (in "lookup token.example.com: no such host") is a host name.
func kvName(name string) string {
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i+1 < len(name) {
		return name[i+1:]
	}
	return name
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// luhn reports whether the digits pass the Luhn checksum.
func luhn(digits []byte) bool {
	sum := 0
	double := false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

func digitsOf(s string) []byte {
	var d []byte
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			d = append(d, s[i])
		}
	}
	return d
}

func cardShape(digits []byte) string { return "****-****-****-" + string(digits[len(digits)-4:]) }

// findCards looks at runs of digit groups joined by single spaces or dashes and masks any consecutive
// groups holding 13–19 digits with a valid Luhn sum, so a card next to a date ("2024 4111…") is still found.
// A group glued to letters (part of an identifier or a hex hash) cannot be part of a card.
func findCards(_ *masker, s string) []span {
	var out []span
	i := 0
	for i < len(s) {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		var groups []group
		for {
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			groups = append(groups, group{i, j})
			if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && s[j+1] >= '0' && s[j+1] <= '9' {
				i = j + 1
				continue
			}
			i = j
			break
		}
		if g := groups[0]; g.start > 0 && isAlnum(s[g.start-1]) {
			groups = groups[1:]
		}
		if n := len(groups); n > 0 && groups[n-1].end < len(s) && isAlnum(s[groups[n-1].end]) {
			groups = groups[:n-1]
		}
		for a := 0; a < len(groups); {
			found := false
			// Every group holds a digit, so more than 19 groups hold more
			// than a card's 19 digits: a long run of groups ("4111 4111 …",
			// a list of SSNs) is not tried end to end from every group.
			for b := min(len(groups)-1, a+18); b >= a; b-- {
				if b > a && !cardGroups(groups[a:b+1]) {
					continue
				}
				txt := s[groups[a].start:groups[b].end]
				d := digitsOf(txt)
				if len(d) >= 13 && len(d) <= 19 && luhn(d) {
					out = append(out, span{groups[a].start, groups[b].end, cardShape(d), txt})
					a = b + 1
					found = true
					break
				}
			}
			if !found {
				a++
			}
		}
	}
	return out
}

type group struct{ start, end int }

// cardGroups accepts the groupings cards are written in (4-4-4-4, 4-4-4-4-3, 4-6-5, 4-6-4): groups of at
// most 6 digits, all but the last at least 3. A UUID's "5127-299212506518" tail has the digits and the
// checksum of a card but not its grouping.
func cardGroups(gs []group) bool {
	for i, g := range gs {
		n := g.end - g.start
		if n > 6 || n < 3 && i < len(gs)-1 {
			return false
		}
	}
	return true
}

// validSSN applies the notes' rejection rules: area 000, 666 or 9xx, group 00, serial 0000, all one digit.
func validSSN(area, group, serial string) bool {
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return false
	}
	all := area + group + serial
	return strings.Count(all, all[:1]) != len(all)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// findSSN finds ddd-dd-dddd (or with spaces or dots, never mixed) standing on its own.
func findSSN(_ *masker, s string) []span {
	var out []span
	for i := 0; i+11 <= len(s); i++ {
		if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '-' || s[i-1] == '.') {
			continue
		}
		c := s[i : i+11]
		d := c[3]
		if (d != '-' && d != ' ' && d != '.') || c[6] != d || !allDigits(c[:3]) || !allDigits(c[4:6]) || !allDigits(c[7:]) {
			continue
		}
		e := i + 11
		if e < len(s) && (isAlnum(s[e]) || (s[e] == '-' || s[e] == '.') && e+1 < len(s) && isAlnum(s[e+1])) {
			continue
		}
		if !validSSN(c[:3], c[4:6], c[7:]) {
			continue
		}
		out = append(out, span{i, e, "***-**-" + c[7:], c})
		i = e - 1
	}
	return out
}

func emailShape(addr string) string {
	at := strings.LastIndexByte(addr, '@')
	return addr[:1] + "***" + addr[at:]
}

func isLocalChar(c byte) bool { return isAlnum(c) || strings.IndexByte("._%+-", c) >= 0 }

// findEmails expands around each '@' over the address characters and checks the domain has a dotted name
// ending in a letters-only TLD. A local part already masked ("j***") has no address characters next to '@'.
func findEmails(_ *masker, s string) []span {
	var out []span
	next := 0
	for i := 1; i < len(s); i++ {
		if s[i] != '@' || i < next {
			continue
		}
		j := i
		for j > next && isLocalChar(s[j-1]) {
			j--
		}
		for j < i && !isAlnum(s[j]) {
			j++ // "._%+-" may not start the shape we print
		}
		if j == i {
			continue
		}
		k := i + 1
		for k < len(s) && (isAlnum(s[k]) || s[k] == '-' || s[k] == '.') {
			k++
		}
		end := validDomainEnd(s[i+1 : k])
		if end == 0 {
			continue
		}
		e := i + 1 + end
		addr := s[j:e]
		out = append(out, span{j, e, emailShape(addr), addr})
		next = e
	}
	return out
}

// validDomainEnd returns the length of the longest prefix of d that is a dotted domain name whose last
// label starts with at least two letters (what follows them is not part of the address), or 0.
func validDomainEnd(d string) int {
	for {
		dot := strings.LastIndexByte(d, '.')
		if dot <= 0 {
			return 0
		}
		head, tld := d[:dot], d[dot+1:]
		n := 0
		for n < len(tld) && (tld[n] >= 'a' && tld[n] <= 'z' || tld[n] >= 'A' && tld[n] <= 'Z') {
			n++
		}
		if n >= 2 && validLabels(head) {
			return dot + 1 + n
		}
		d = head
	}
}

func validLabels(head string) bool {
	for _, l := range strings.Split(head, ".") {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	return true
}

// secretNameHints are lowercase fragments every secret field name contains; text without any of them can
// hold no secret "name=value" pair.
var secretNameHints = []string{"pass", "pwd", "token", "secret", "key", "auth", "cookie", "session", "ssn",
	"card", "cvv", "cvc", "otp", "pin", "sig", "credential", "social", "ccnumber", "cc_number", "cc-number",
	"sessid", "sid", "cfid", "hdnts", "hmac", "code"}

func mayHaveSecretName(s string) bool {
	if !strings.ContainsAny(s, "=:") {
		return false
	}
	l := strings.ToLower(s)
	for _, h := range secretNameHints {
		if strings.Contains(l, h) {
			return true
		}
	}
	return false
}
