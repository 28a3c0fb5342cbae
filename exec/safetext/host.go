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
	if isASCII(h) {
		return out
	}
	// The Punycode profile converts without judging: a host that breaks
	// IDNA's rules (a zero-width space inside, say) still gets the ASCII form
	// the resolver would be asked for, which is what the person must see.
	if a, err := idna.Punycode.ToASCII(strings.ToLower(h)); err == nil {
		out.ASCII = a
	}
	seen := map[string]bool{}
	for _, r := range h {
		if !unicode.IsLetter(r) {
			continue
		}
		seen[scriptOf(r)] = true
	}
	for s := range seen {
		out.Scripts = append(out.Scripts, s)
	}
	sort.Strings(out.Scripts)
	n := 0
	for _, s := range confusable {
		if seen[s] {
			n++
		}
	}
	out.LookAlike = n > 1
	return out
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
	if h.LookAlike {
		out = append(out, "look-alike host: it mixes "+strings.Join(h.Scripts, " and ")+" letters")
	}
	return out
}
