package safetext

import (
	"net/netip"
	"net/url"
	"sort"
	"strconv"
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
	// Mapped is what resolvers that apply UTS-46 (browsers, Go's HTTP
	// client) look a non-ASCII host up as, when that mapping changes more
	// than the punycode says: ｇｏｏｇｌｅ.com is looked up as google.com,
	// not as its punycode xn--qi7cdauna.com. "" otherwise.
	Mapped string
	// Numeric is the IPv4 address a host written as a number in another
	// form reads as ("2130706433", "0x7f.1", "0177.0.0.1", "127.1" are all
	// 127.0.0.1 to inet_aton and to browsers); "" for a name or an address
	// already written as a dotted quad.
	Numeric string
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
		out.Numeric = numericForm(h)
		u := unicodeForm(h)
		if u == "" {
			return out
		}
		out.Unicode, letters = Line(u), u
	} else {
		out.ASCII = asciiForm(h)
		if m := mappedForm(h); m != "" && m != out.ASCII {
			out.Mapped = Line(m)
			// Written in other digits, even a dotted quad is not what it
			// looks like: １２７.０.０.１ is 127.0.0.1.
			if out.Numeric = numericForm(m); out.Numeric == "" {
				if ip, err := netip.ParseAddr(m); err == nil && ip.Is4() {
					out.Numeric = m
				}
			}
		}
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

// mappedForm is the name UTS-46 lookup (idna.Lookup) resolves a non-ASCII
// host as: fullwidth letters and digits become ASCII, "。" a dot, soft
// hyphens and zero-width spaces vanish. "" when the host breaks its rules.
func mappedForm(h string) string {
	m, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return ""
	}
	return m
}

// numericForm reads h as inet_aton and the WHATWG URL parser do: one to
// four dot-separated numbers, each decimal, octal (a leading 0) or hex
// (0x), the last filling the remaining bytes. It returns the dotted-quad
// address when h is such a number written otherwise, and "" for a name,
// for a dotted quad as written, or for a number out of range.
func numericForm(h string) string {
	parts := strings.Split(strings.TrimSuffix(h, "."), ".")
	if len(parts) > 4 {
		return ""
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := parseInetPart(p)
		if !ok {
			return ""
		}
		nums = append(nums, n)
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return ""
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return ""
	}
	v |= last
	a := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
	if a == h {
		return ""
	}
	return a
}

// parseInetPart parses one part of an inet_aton address.
func parseInetPart(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 32)
	return n, err == nil
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
	if h.Mapped != "" {
		out = append(out, "host "+h.Shown+" is looked up as "+h.Mapped+": resolvers map its characters (UTS-46)")
	}
	if h.ASCII != "" {
		if h.Mapped != "" {
			out = append(out, "host "+h.Shown+" is "+Line(h.ASCII)+" in punycode without that mapping")
		} else {
			out = append(out, "host "+h.Shown+" is "+Line(h.ASCII)+" in ASCII")
		}
	}
	if h.Numeric != "" {
		out = append(out, "host "+h.Shown+" is the numeric address "+h.Numeric+numericNote(h.Numeric))
	}
	if h.Unicode != "" {
		out = append(out, "host "+h.Shown+" reads as "+h.Unicode+" in Unicode")
	}
	if h.LookAlike {
		out = append(out, "look-alike host: it mixes "+strings.Join(h.Scripts, " and ")+" letters")
	}
	return out
}

// numericNote says where a numeric address points when that is not the
// public internet.
func numericNote(a string) string {
	ip, err := netip.ParseAddr(a)
	switch {
	case err != nil:
		return ""
	case ip.IsLoopback():
		return " (this machine)"
	case ip.IsPrivate(), ip.IsLinkLocalUnicast():
		return " (the local network)"
	case ip.IsUnspecified():
		return " (this machine, as 0.0.0.0)"
	}
	return ""
}
