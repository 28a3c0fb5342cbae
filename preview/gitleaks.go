package preview

import (
	"encoding/base64"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Shapes taken from gitleaks' default rule table (config/gitleaks.toml) that
// the prefix table in shapes.go cannot express: keys whose prefix is a common
// word ("pat."), secrets recognisable only next to their vendor's name (the
// table's "semi-generic" rules), and credentials behind an HTTP auth scheme
// under a field name that says nothing. Each rule keeps gitleaks' keywords as
// its cheap test and its entropy threshold where it has one.

// leakRule is one regex rule: a keyword (lowercase) must occur before the
// regex runs; group 1 of the regex is the secret.
type leakRule struct {
	name     string
	keywords []string
	re       *regexp.Regexp
	entropy  float64 // minimum Shannon entropy of the secret, 0 for none
	prefix   string  // shown in prefix...last4; "" masks with the fixed mask
}

// assign is gitleaks' operator between a name and its value ("=", ":",
// "=>", ":=", "||", ",", ">" ...), with the quotes and spaces around it.
const assign = `[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}`

// valueEnd is what may follow a value: a quote, a space, ";", an escaped
// line break, or the end.
const valueEnd = `(?:[\x60'"\s;&,]|\\[nr]|$)`

// semiGeneric is a value of shape value assigned to a name containing one of
// the keywords (gitleaks' GenerateSemiGenericRegex, written afresh).
func semiGeneric(keywords []string, value string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)[\w.-]{0,50}?(?:` + strings.Join(keywords, "|") + `)(?:[ \t\w.-]{0,20})` +
		assign + `(` + value + `)` + valueEnd)
}

var newRelicNames = []string{"new-relic", "newrelic", "new_relic"}

var leakRules = []leakRule{
	{"harness-api-key", []string{"pat.", "sat."},
		regexp.MustCompile(`(?:^|[^\w.])((?:pat|sat)\.[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})(?:[^\w]|$)`), 0, ""},
	{"airtable-personnal-access-token", []string{"pat"},
		regexp.MustCompile(`(?:^|\W)(pat[[:alnum:]]{14}\.[a-f0-9]{64})(?:\W|$)`), 0, "pat"},
	{"new-relic-user-api-id", newRelicNames, semiGeneric(newRelicNames, `[a-z0-9]{64}`), 0, ""},
	{"contentful-delivery-api-token", []string{"contentful"}, semiGeneric([]string{"contentful"}, `[a-z0-9=_\-]{43}`), 0, ""},
	{"airtable-api-key", []string{"airtable"}, semiGeneric([]string{"airtable"}, `[a-z0-9]{17}`), 0, ""},
	{"discord-api-token", []string{"discord"}, semiGeneric([]string{"discord"}, `[a-f0-9]{64}`), 0, ""},
	{"discord-client-secret", []string{"discord"}, semiGeneric([]string{"discord"}, `[a-z0-9=_\-]{32}`), 2, ""},
	{"mapbox-api-token", []string{"mapbox"}, semiGeneric([]string{"mapbox"}, `pk\.[a-z0-9]{60}\.[a-z0-9]{22}`), 0, ""},
}

// leakShapes are the detectors of this file, run after the vendor table.
var leakShapes = []detector{
	{"gitleaks", mayHaveLeakKeyword, findLeakRules},
	{"auth-scheme", mayHaveAuthScheme, findAuthScheme},
}

func mayHaveLeakKeyword(s string) bool {
	l := strings.ToLower(s)
	for _, r := range leakRules {
		for _, k := range r.keywords {
			if strings.Contains(l, k) {
				return true
			}
		}
	}
	return false
}

func findLeakRules(_ *masker, s string) []span {
	var out []span
	l := strings.ToLower(s)
	for _, r := range leakRules {
		if !containsAny(l, r.keywords) {
			continue
		}
		for _, loc := range r.re.FindAllStringSubmatchIndex(s, -1) {
			a, b := loc[2], loc[3]
			if r.entropy > 0 && shannon(s[a:b]) < r.entropy {
				continue
			}
			if r.prefix != "" {
				out = append(out, span{a, b, apiKeyShape(r.prefix, s[a:b]), s[a:b]})
			} else {
				out = append(out, fixedSpan(s, a, b))
			}
		}
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, k := range subs {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// shannon is the Shannon entropy of s in bits per byte, as gitleaks
// computes it for its thresholds.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

func mayHaveAuthScheme(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "basic") || strings.Contains(l, "bearer")
}

// bearerChar is a character of a bearer credential (gitleaks' [\w=~@.+/-]).
func bearerChar(c byte) bool { return isAlnum(c) || strings.IndexByte("_=~@.+/-", c) >= 0 }

// findAuthScheme finds credentials written after an HTTP auth scheme under
// any name or none ("header": "Basic dXNl…", value=Bearer abc…): gitleaks'
// curl-auth-header rule without the curl. A Basic credential must decode to
// "user:password"; a Bearer one must have gitleaks' entropy (2.75) and not
// read as a word, so "Basic authentication" and "Bearer token required"
// stay as written. The scheme stays readable.
func findAuthScheme(_ *masker, s string) []span {
	var out []span
	for i := 0; i < len(s); i++ {
		// ASCII folding on s itself: strings.ToLower may change a string's
		// length ("İ"), and the offsets must be s's.
		var word int
		switch {
		case asciiPrefixFold(s[i:], "basic"):
			word = 5
		case asciiPrefixFold(s[i:], "bearer"):
			word = 6
		default:
			continue
		}
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		k := i + word
		sp := runFwd(s, k, func(c byte) bool { return c == ' ' || c == '\t' })
		if sp == 0 {
			continue
		}
		a := k + sp
		n := runFwd(s, a, bearerChar)
		for n > 0 && s[a+n-1] == '.' {
			n--
		}
		v := s[a : a+n]
		if word == 5 && basicPair(v) || word == 6 && bearerToken(v) {
			out = append(out, fixedSpan(s, a, a+n))
		}
		if n > 0 {
			i = a + n - 1
		}
	}
	return out
}

// asciiPrefixFold reports whether s starts with the lowercase ASCII word w,
// in any case.
func asciiPrefixFold(s, w string) bool {
	if len(s) < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		c := s[j]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[j] {
			return false
		}
	}
	return true
}

// basicPair reports whether v is the base64 of "user:password".
func basicPair(v string) bool {
	if len(v) < 8 {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	}
	if err != nil || !utf8.Valid(dec) {
		return false
	}
	user, pass, ok := strings.Cut(string(dec), ":")
	if !ok || user == "" || pass == "" {
		return false
	}
	for _, r := range string(dec) {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

// bearerToken reports whether v reads as a credential rather than a word.
func bearerToken(v string) bool {
	if len(v) < 8 || shannon(v) < 2.75 {
		return false
	}
	letters := true
	for i := 0; i < len(v); i++ {
		if !(v[i] >= 'a' && v[i] <= 'z' || v[i] >= 'A' && v[i] <= 'Z') {
			letters = false
			break
		}
	}
	// A word ("authentication", "Authorization") is all letters; a
	// letters-only token is long and changes case inside.
	return !letters || len(v) >= 20 && mixedCase(v[1:])
}
