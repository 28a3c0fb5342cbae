package preview

import (
	"encoding/base64"
	"strings"
)

// Secrets without a vendor prefix whose shape is still distinctive enough to find by value. None of them
// has a recognisable prefix to show, so each becomes the fixed mask.

// specialShapes run after the prefixed vendor keys, each behind a cheap test.
var specialShapes = []detector{
	{"telegram", func(s string) bool { return strings.IndexByte(s, ':') > 0 }, findTelegram},
	{"discord-bot", func(s string) bool { return len(s) >= 59 && strings.Count(s, ".") >= 2 }, findDiscordBot},
	{"azure-ad-secret", func(s string) bool { return strings.Contains(s, "Q~") }, findAzureSecret},
	{"mailchimp", func(s string) bool { return strings.Contains(s, "-us") }, findMailchimp},
	{"aws-secret", hasAWSKeyID, findAWSSecret},
}

// runBack and runFwd measure a run of characters of one class ending before i, or starting at i.
func runBack(s string, i int, in func(byte) bool) int {
	n := 0
	for i-n > 0 && in(s[i-n-1]) {
		n++
	}
	return n
}

func runFwd(s string, i int, in func(byte) bool) int {
	n := 0
	for i+n < len(s) && in(s[i+n]) {
		n++
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// fixedSpan masks s[a:b] with the fixed mask and remembers it for scrubbing.
func fixedSpan(s string, a, b int) span { return span{a, b, Fixed, s[a:b]} }

// findTelegram finds bot tokens, "123456789:AA…" (a numeric bot id, a colon, 35 characters), also glued to
// the "bot" of an API path (/bot123456789:AA…/sendMessage); "bot" stays readable.
func findTelegram(_ *masker, s string) []span {
	var out []span
	for i := 1; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		d := runBack(s, i, isDigit)
		t := runFwd(s, i+1, alnumUnderDash)
		if d < 5 || d > 16 || t < 30 || t > 50 {
			continue
		}
		start := i - d
		if start >= 3 && strings.EqualFold(s[start-3:start], "bot") {
			if start > 3 && isAlnum(s[start-4]) {
				continue
			}
		} else if start > 0 && isAlnum(s[start-1]) {
			continue
		}
		out = append(out, fixedSpan(s, start, i+1+t))
		i += t
	}
	return out
}

// findDiscordBot finds Discord bot tokens: three dot-separated parts, the first the base64 of the bot's
// numeric user id. Decoding the first part is what tells a token from any other dotted word.
func findDiscordBot(_ *masker, s string) []span {
	var out []span
	for i := 0; i < len(s); i++ {
		dot := strings.IndexByte(s[i:], '.')
		if dot < 0 {
			break
		}
		d1 := i + dot
		a := runBack(s, d1, alnumUnderDash)
		b := runFwd(s, d1+1, alnumUnderDash)
		i = d1
		if a < 23 || a > 28 || b < 6 || b > 7 || d1+1+b >= len(s) || s[d1+1+b] != '.' {
			continue
		}
		c := runFwd(s, d1+b+2, alnumUnderDash)
		if c < 27 || !isSnowflake(s[d1-a:d1]) {
			continue
		}
		end := d1 + b + 2 + c
		out = append(out, fixedSpan(s, d1-a, end))
		i = end
	}
	return out
}

// isSnowflake reports whether b64 is the base64 of a Discord id: 17 to 20 decimal digits.
func isSnowflake(b64 string) bool {
	dec, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(b64, "="))
	if err != nil {
		dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "="))
	}
	if err != nil || len(dec) < 17 || len(dec) > 20 {
		return false
	}
	for _, c := range dec {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// findAzureSecret finds Microsoft Entra (Azure AD) client secrets: three characters, a digit, "Q~", then
// 31 to 34 more.
func findAzureSecret(_ *masker, s string) []span {
	var out []span
	for i := 4; i+2 < len(s); i++ {
		if s[i] != 'Q' || s[i+1] != '~' || !isDigit(s[i-1]) {
			continue
		}
		head := runBack(s, i-1, azureSecretBody)
		tail := runFwd(s, i+2, azureSecretBody)
		if head < 3 || tail < 31 {
			continue
		}
		out = append(out, fixedSpan(s, i-1-head, i+2+tail))
		i += 1 + tail
	}
	return out
}

// findMailchimp finds Mailchimp API keys: 32 hex digits, "-us" and the datacenter number.
func findMailchimp(_ *masker, s string) []span {
	var out []span
	for i := 32; i+3 < len(s); i++ {
		if s[i] != '-' || s[i+1] != 'u' || s[i+2] != 's' {
			continue
		}
		h := runBack(s, i, isHex)
		d := runFwd(s, i+3, isDigit)
		if h != 32 || d < 1 || d > 2 || i+3+d < len(s) && isAlnum(s[i+3+d]) {
			continue
		}
		out = append(out, fixedSpan(s, i-h, i+3+d))
	}
	return out
}

// hasAWSKeyID is the cheap test: something in s starts like an AWS access key id.
func hasAWSKeyID(s string) bool {
	for _, p := range awsPrefixes[:4] {
		if strings.Contains(s, p) {
			return true
		}
	}
	return strings.Contains(s, "A3T")
}

func awsSecretChar(c byte) bool { return isAlnum(c) || c == '/' || c == '+' }

// findAWSSecret finds the 40-character secret access key written next to an access key id ("AKIA…
// wJalr…", "AKIA…:wJalr…", a credentials CSV row). Alone, 40 base64 characters could be anything, so
// it is only looked for when an id is in the same text; a git commit id (lowercase hex) never matches.
func findAWSSecret(_ *masker, s string) []span {
	if !hasAWSKeyIDShape(s) {
		return nil
	}
	var out []span
	for i := 0; i < len(s); i++ {
		if i > 0 && awsSecretChar(s[i-1]) || !awsSecretChar(s[i]) {
			continue
		}
		n := runFwd(s, i, awsSecretChar)
		if n == 40 && (i+n == len(s) || s[i+n] != '=') && mixedCase(s[i:i+n]) {
			out = append(out, fixedSpan(s, i, i+n))
		}
		i += n
	}
	return out
}

// hasAWSKeyIDShape reports whether a whole AWS access key id (prefix and 16 characters) is in s.
func hasAWSKeyIDShape(s string) bool {
	for p := 0; p+20 <= len(s); p++ {
		if s[p] != 'A' || p > 0 && isAlnum(s[p-1]) {
			continue
		}
		for _, pre := range awsPrefixes {
			if strings.HasPrefix(s[p:], pre) && runFwd(s, p+4, base32Upper) >= 16 {
				return true
			}
		}
	}
	return false
}

func mixedCase(s string) bool {
	var up, low bool
	for i := 0; i < len(s); i++ {
		up = up || s[i] >= 'A' && s[i] <= 'Z'
		low = low || s[i] >= 'a' && s[i] <= 'z'
	}
	return up && low
}
