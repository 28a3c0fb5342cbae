package preview

import (
	"strings"
	"unicode/utf8"
)

// Snippet makes an outside body (an error answer, a reply line, a server's
// message) fit to show in a one-line error: every secret masked, then cut to
// at most max bytes at a rune boundary, marked "…". known are secrets the
// caller holds (the API key it sent, a token it read); every copy of them is
// masked whatever its shape.
//
// The order is the point: masking first sees every secret whole, while a
// cut made first can split a key so that the part left no longer matches any
// shape (an echoed bearer key cut at 200 characters showed 48 of its 50).
// The cut also never ends inside a run of token characters, so no leading
// part of an unrecognised token is left at the edge either.
func Snippet(body string, max int, known ...string) string {
	s := strings.ToValidUTF8(body, "\ufffd")
	for _, k := range known {
		if k = strings.TrimSpace(k); k != "" {
			s = strings.ReplaceAll(s, k, Fixed)
		}
	}
	s = MaskString(s)
	s = strings.Join(strings.Fields(s), " ")
	return cutSnippet(s, max)
}

// cutSnippet cuts s to at most max bytes, at a rune boundary and never
// inside a run of token characters that goes on past the cut.
func cutSnippet(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return "…"
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if tokenChar(s[cut]) {
		// The cut falls inside a word: drop the word's start rather than
		// show a fragment of what may be a secret (all of it, when the
		// window is one word).
		back := cut
		for back > 0 && tokenChar(s[back-1]) {
			back--
		}
		cut = back
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}

// tokenChar is a byte that can be part of a token or key.
func tokenChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("-_.~+/=:$%", c) >= 0
}
