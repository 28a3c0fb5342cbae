package safetext

import (
	"net/url"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
)

// Host is what a person needs to see about a host name to trust it.
type Host struct {
	// Shown is the host made safe to show (hidden characters escaped).
	Shown string
	// ASCII is the punycode (A-label) form of a host that is not pure
	// ASCII; "" for an ASCII host.
	ASCII string
	// Unicode is what an ASCII host written in punycode (an xn-- label)
	// reads as once decoded, as browsers show it; "" otherwise.
	Unicode string
	// Scripts lists the scripts of the host's letters, sorted.
	Scripts []string
	// LookAlike is set when the host mixes scripts whose letters are
	// confused with each other (Latin with Cyrillic or Greek, say): a host
	// that reads as paypal.com but is not.
	LookAlike bool
}

// confusable are the scripts whose letters are drawn like Latin ones; a host
// mixing two of them is a look-alike. Lisu's letters are Latin capitals
// ("ꓲ" is an I, "ꓮ" an A), and it has no case to give them away in a
// lower-cased host.
var confusable = []string{"Latin", "Cyrillic", "Greek", "Armenian", "Cherokee", "Coptic", "Lisu"}

// InspectHost describes a host name for display.
func InspectHost(h string) Host {
	out := Host{Shown: Line(h)}
	letters := h
	if isASCII(h) {
		u := unicodeForm(h)
		if u == "" {
			return out
		}
		out.Unicode, letters = Line(u), u
	} else {
		out.ASCII = asciiForm(h)
	}
	out.Scripts, out.LookAlike = scriptsOf(letters)
	return out
}

// asciiForm is a non-ASCII host's punycode. The Punycode profile converts
// without judging: a host that breaks IDNA's rules (a zero-width space
// inside, say) still gets the ASCII form the resolver would be asked for,
// which is what the person must see.
func asciiForm(h string) string {
	a, err := idna.Punycode.ToASCII(strings.ToLower(h))
	if err != nil {
		return ""
	}
	return a
}

// unicodeForm is what an ASCII host with xn-- labels decodes to, or "" when
// it has none or decodes to ASCII: xn--pple-43d.com is "аpple.com" with a
// Cyrillic а, and its letters are what must be judged.
func unicodeForm(h string) string {
	if !strings.Contains(strings.ToLower(h), "xn--") {
		return ""
	}
	u, err := idna.Punycode.ToUnicode(strings.ToLower(h))
	if err != nil || isASCII(u) {
		return ""
	}
	return u
}

// scriptsOf lists the scripts of s's letters, sorted, and whether two of
// them are confusable with each other.
func scriptsOf(s string) ([]string, bool) {
	seen := map[string]bool{}
	for _, r := range s {
		if unicode.IsLetter(r) {
			seen[scriptOf(r)] = true
		}
	}
	var names []string
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	n := 0
	for _, name := range confusable {
		if seen[name] {
			n++
		}
	}
	return names, n > 1
}

func scriptOf(r rune) string {
	for _, name := range confusable {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for name, tab := range unicode.Scripts {
		if unicode.Is(tab, r) {
			return name
		}
	}
	return "Unknown"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// URLWarnings lists what a person must be told about a URL before trusting
// how it reads: hidden characters, a host that is not pure ASCII (with the
// punycode it really resolves as), and a look-alike host. Each warning is
// already safe to show. A URL with nothing to say gives nil.
func URLWarnings(raw string) []string {
	var out []string
	if n := Hidden(raw); n > 0 {
		out = append(out, HiddenNote(n))
	}
	if HasBidiControl(raw) {
		out = append(out, "holds right-to-left/left-to-right controls: it may read in another order than it is")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return out
	}
	h := InspectHost(u.Hostname())
	if h.ASCII != "" {
		out = append(out, "host "+h.Shown+" is "+Line(h.ASCII)+" in ASCII")
	}
	if h.Unicode != "" {
		out = append(out, "host "+h.Shown+" reads as "+h.Unicode+" in Unicode")
	}
	if h.LookAlike {
		out = append(out, "look-alike host: it mixes "+strings.Join(h.Scripts, " and ")+" letters")
	}
	return out
}
