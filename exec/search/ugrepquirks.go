package search

import (
	"regexp"
	"strconv"
	"strings"
)

// ugrepPattern adapts a pattern, as backendPattern made it, to two quirks
// of ugrep 3.11 that would otherwise give a wrong answer without a word: a
// counted repeat over its limit (BadArgs instead) and a carriage return in
// the pattern (spelled as an escape).
func ugrepPattern(pat string, fixed bool) (string, bool, error) {
	if !fixed {
		if count, over := ugrepRepeatOver(pat); over {
			return "", false, badArgs("pattern: repetition count %s is over ugrep's limit of %d (FR-LS-SRC-02)", count, ugrepRepeatMax)
		}
	}
	if strings.IndexByte(pat, '\r') >= 0 {
		if fixed {
			pat, fixed = regexp.QuoteMeta(pat), false
		}
		pat = ugrepCarriageReturns(pat)
	}
	return pat, fixed, nil
}

// ugrepCarriageReturns spells each carriage return in a regex as the
// escape `\r`: ugrep reads the byte itself as a line end between two
// patterns (`a`, CR, `b` found "a" and "b"), where rg reads a CR. Inside a
// quote (`\Q...\E`) the escape would be literal text, so the quote is left
// around it; an escaped CR (backslash, CR) is the CR too.
func ugrepCarriageReturns(pattern string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case quoted && c == '\\' && i+1 < len(pattern) && pattern[i+1] == 'E':
			quoted = false
			b.WriteString(`\E`)
			i++
		case quoted && c == '\r':
			b.WriteString(`\E\r\Q`)
		case quoted:
			b.WriteByte(c)
		case c == '\\' && i+1 < len(pattern):
			i++
			switch pattern[i] {
			case 'Q':
				quoted = true
				b.WriteString(`\Q`)
			case '\r':
				b.WriteString(`\r`)
			default:
				b.WriteByte(c)
				b.WriteByte(pattern[i])
			}
		case c == '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ugrepRepeatMax is the largest count ugrep 3.11 takes in a counted
// repeat. It refuses larger lower bounds ("exceeds complexity limits") but
// keeps a larger upper bound modulo 65536: `a{2,70000}` matched runs of
// 4,464 a's, `a{0,131073}` single a's, where rg matches what was asked.
const ugrepRepeatMax = 65535

// ugrepRepeatOver returns the first count in a counted repeat (`{n}`,
// `{n,}`, `{n,m}`) of a regex that is over ugrepRepeatMax. Braces are not
// repeats inside bracket classes (POSIX names included), quotes
// (`\Q...\E`), comment groups (`(?#...)`) or an escape's argument
// (`\x{...}`, `\p{...}`); an escaped character (`\.`, `\{`) can be
// repeated. A `#` comment under (?x) is read as pattern: a count there is
// refused rather than risk a wrapped one going through.
func ugrepRepeatOver(pattern string) (string, bool) {
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
			if i >= len(pattern) {
				break
			}
			switch {
			case pattern[i] == 'Q':
				k := strings.Index(pattern[i:], `\E`)
				if k < 0 {
					return "", false
				}
				i += k + 1
			case strings.IndexByte("xpPuUoNgk", pattern[i]) >= 0 && i+1 < len(pattern) && pattern[i+1] == '{':
				if k := strings.IndexByte(pattern[i:], '}'); k >= 0 {
					i += k // the braced argument
				}
			}
		case '[':
			i = classEnd(pattern, i)
			if i < 0 {
				return "", false
			}
		case '(':
			if strings.HasPrefix(pattern[i:], "(?#") {
				k := strings.IndexByte(pattern[i:], ')')
				if k < 0 {
					return "", false
				}
				i += k
			}
		case '{':
			end := strings.IndexByte(pattern[i:], '}')
			if end < 0 {
				return "", false
			}
			for _, count := range strings.SplitN(pattern[i+1:i+end], ",", 2) {
				if count != "" && strings.Trim(count, "0123456789") == "" {
					// Digits only: over the limit when longer than it
					// once leading zeros are gone, or larger.
					digits := strings.TrimLeft(count, "0")
					if len(digits) > 5 || len(digits) == 5 && digits > strconv.Itoa(ugrepRepeatMax) {
						return count, true
					}
				}
			}
			i += end
		}
	}
	return "", false
}

// classEnd returns the index of the `]` that closes the bracket class
// opening at i, or -1. A `]` first in the class (after any `^`) is a
// member; escapes and POSIX names (`[:alpha:]`) are skipped whole.
func classEnd(pattern string, i int) int {
	j := i + 1
	if j < len(pattern) && pattern[j] == '^' {
		j++
	}
	if j < len(pattern) && pattern[j] == ']' {
		j++
	}
	for ; j < len(pattern); j++ {
		switch {
		case pattern[j] == '\\':
			j++
		case strings.HasPrefix(pattern[j:], "[:"):
			if k := strings.Index(pattern[j:], ":]"); k >= 0 {
				j += k + 1
			}
		case pattern[j] == ']':
			return j
		}
	}
	return -1
}
