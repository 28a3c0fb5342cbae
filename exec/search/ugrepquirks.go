package search

import (
	"regexp"
	"strconv"
	"strings"
)

// ugrepPattern adapts a pattern, as backendPattern made it, to quirks of
// ugrep 3.11 that would otherwise give a wrong answer without a word: a
// counted repeat over its limit (BadArgs instead), and syntax ugrep reads
// otherwise than rg (rewritten by ugrepRewrite).
func ugrepPattern(pat string, fixed bool) (string, bool, error) {
	if fixed {
		if strings.IndexByte(pat, '\r') < 0 {
			return pat, true, nil
		}
		pat = regexp.QuoteMeta(pat)
	} else if count, over := ugrepRepeatOver(pat); over {
		return "", false, badField(FieldPattern, "repetition count %s is over ugrep's limit of %d", count, ugrepRepeatMax)
	}
	return ugrepRewrite(pat), false, nil
}

// ugrepRewrite spells things in a regex so that ugrep reads them as rg
// does (differential fuzzing against rg found each):
//   - a carriage return becomes the escape `\r`: ugrep reads the byte itself
//     as a line end between two patterns (`a`, CR, `b` found "a" and "b");
//     an escaped CR (backslash, CR) is the CR too, and a quote (`\Q...\E`)
//     holding one is split around the escape, in a group (ugrepQuote);
//   - `\$` becomes `[$]`: with -w, ugrep refuses a pattern ending in `\$`
//     ("mismatched ( )"), so the fixed string `X$` folded for case or quoted
//     for a CR was BadArgs;
//   - `.` becomes `[^\n]`: ugrep's `.` also takes any single byte, so `..`
//     matched one `é` and `x.y` matched x, a byte of invalid UTF-8, y, where
//     rg's `.` (like ugrep's `[^\n]`) takes one valid UTF-8 character. It
//     also keeps `(?s)` from letting a match run into the next line, which
//     rg never does. The price is compile time: `func .+Context\(` takes
//     ugrep 23 ms to compile against 9 ms;
//   - classes that take the newline in ugrep (`\W`, `\D`, `\P{L}`, `\p{Cc}`,
//     `[[:space:]]`, `[\x00-\x7f]`; rg's never do) are spelled without it;
//   - a non-ASCII code point escape (`\x{e9}`, `\xe9`, `\u{e9}`, `\o{351}`) is
//     put in a group, so a repeat after it takes the whole character.
//
// Bracket classes are otherwise copied as they are (`.` and `$` are
// members there), and so are quotes, comments (`(?#...)`) and the argument
// of `\cX`.
func ugrepRewrite(pattern string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i = ugrepEscape(&b, pattern, i+1)
		case c == '(' && strings.HasPrefix(pattern[i:], "(?#"):
			// A comment is copied as it is, up to its first `)`.
			k := strings.IndexByte(pattern[i:], ')')
			if k < 0 {
				b.WriteString(pattern[i:])
				return b.String()
			}
			b.WriteString(pattern[i : i+k+1])
			i += k
		case c == '[':
			end := classEnd(pattern, i)
			if end < 0 {
				// Unclosed: ugrep will refuse it; pass it on unchanged.
				b.WriteString(ugrepCarriageReturnsOnly(pattern[i:]))
				return b.String()
			}
			class := ugrepCarriageReturnsOnly(pattern[i : end+1])
			if classMayDropNewline(class) {
				// A class such as [[:space:]], [\P{L}] or [\x00-\x7f]
				// takes the newline in ugrep (negated ones do not):
				// intersect it with [^\n].
				class = class[:len(class)-1] + `&&[^\n]]`
			}
			b.WriteString(class)
			i = end
		case c == '\r':
			b.WriteString(`\r`)
		case c == '.':
			b.WriteString(`[^\n]`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ugrepEscape rewrites the escape whose letter is pattern[i] (just after
// its backslash) as ugrepRewrite says, and returns the index of its last
// byte.
func ugrepEscape(b *strings.Builder, pattern string, i int) int {
	switch pattern[i] {
	case 'Q':
		return ugrepQuote(b, pattern, i+1)
	case 'c':
		// \cX: the byte after it is its argument, not pattern.
		b.WriteString(`\c`)
		if i+1 < len(pattern) {
			i++
			b.WriteByte(pattern[i])
		}
	case '\r':
		b.WriteString(`\r`)
	case '$':
		b.WriteString(`[$]`)
	case 'W', 'D':
		// ugrep's \W and \D take the newline, so `a\Wb` matched
		// "a" at the end of one line and "b" on the next.
		b.WriteString(`[^\` + strings.ToLower(pattern[i:i+1]) + `\n]`)
	case 'p', 'P':
		// So do Unicode classes (\P{L}, \p{Cc}): spelled as the
		// negated class of their complement, which leaves the
		// newline out (`[^\P{L}\n]`), at the same compile time.
		arg, ok := unicodeClassArg(pattern[i+1:])
		if !ok {
			b.WriteByte('\\')
			b.WriteByte(pattern[i])
			break
		}
		other := "P"
		if pattern[i] == 'P' {
			other = "p"
		}
		b.WriteString(`[^\` + other + arg + `\n]`)
		i += len(arg)
	case 'x', 'u', 'o':
		// ugrep repeats only the last UTF-8 byte of a non-ASCII
		// code point escape (`\x{e9}*a` did not match "a", and
		// `\u{e9}+` took "é" and then bytes 0xa9); a group makes
		// the repeat take the whole character.
		arg, code := codePointEscapeArg(pattern[i], pattern[i+1:])
		if code < 0x80 {
			b.WriteByte('\\')
			b.WriteByte(pattern[i])
			break
		}
		b.WriteString(`(?:\` + pattern[i:i+1] + arg + `)`)
		i += len(arg)
	default:
		b.WriteByte('\\')
		b.WriteByte(pattern[i])
	}
	return i
}

// ugrepQuote copies the quote whose text starts at pattern[i] (just after
// `\Q`) and returns the index of its last byte (the `E` of `\E`, or the
// pattern's end). Its text is literal, so nothing in it is rewritten,
// except a carriage return: that is spelled `\r` outside the quote, and
// the pieces go in one group so that a repeat after `\E` still takes the
// whole quote.
func ugrepQuote(b *strings.Builder, pattern string, i int) int {
	text, last := pattern[i:], len(pattern)-1
	if k := strings.Index(text, `\E`); k >= 0 {
		text, last = text[:k], i+k+1
	}
	if strings.IndexByte(text, '\r') < 0 {
		b.WriteString(`\Q` + text + `\E`)
		return last
	}
	b.WriteString(`(?:\Q` + strings.ReplaceAll(text, "\r", `\E\r\Q`) + `\E)`)
	return last
}

// unicodeClassArg returns the argument of a \p or \P escape at the start
// of rest: one letter (`L`) or a braced name (`{Greek}`). ugrep's own
// negated form `{^Greek}` is not taken (ok false), and neither is anything
// unclosed.
func unicodeClassArg(rest string) (string, bool) {
	if rest == "" {
		return "", false
	}
	if rest[0] != '{' {
		c := rest[0]
		return rest[:1], c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	end := strings.IndexByte(rest, '}')
	if end < 2 || rest[1] == '^' {
		return "", false
	}
	return rest[:end+1], true
}

// codePointEscapeArg returns the argument of a code point escape at the
// start of rest, after its letter kind (x, u or o): a braced number
// (`{e9}`, `{351}` in octal for o) or, for x only, two hex digits; and the
// code point it names, or -1 when it is none of these (ugrep then decides
// what it means).
func codePointEscapeArg(kind byte, rest string) (string, int64) {
	base := 16
	if kind == 'o' {
		base = 8
	}
	var arg, digits string
	switch {
	case strings.HasPrefix(rest, "{"):
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", -1
		}
		arg, digits = rest[:end+1], rest[1:end]
	case kind == 'x' && len(rest) >= 2:
		arg, digits = rest[:2], rest[:2]
	default:
		return "", -1
	}
	if digits == "" || strings.Trim(digits, "0123456789abcdefABCDEF") != "" {
		return "", -1
	}
	code, err := strconv.ParseInt(digits, base, 32)
	if err != nil {
		return "", -1
	}
	return arg, code
}

// classMayDropNewline reports whether a bracket class may take the
// newline in ugrep and can be intersected with [^\n] without changing
// anything else. It may take it when it has an escape, a POSIX name or a
// range (a class of plain characters such as the folded `[aA]` cannot).
// It can be intersected when it is not negated, has no set operation
// (`&&`, `--`, `~~`) or nested class of its own, and does not end in a
// character that would join the `&&` after it (`-`, `&`, `~`).
func classMayDropNewline(class string) bool {
	body := class[1 : len(class)-1]
	if body == "" || body[0] == '^' || strings.ContainsAny(body[len(body)-1:], "-&~") {
		return false
	}
	mayTake := strings.IndexByte(body[1:], '-') >= 0
	for j := 0; j < len(body); j++ {
		switch {
		case body[j] == '\\':
			mayTake = true
			j++
		case strings.HasPrefix(body[j:], "[:"):
			k := strings.Index(body[j:], ":]")
			if k < 0 {
				return false
			}
			mayTake = true
			j += k + 1
		case body[j] == '[',
			strings.HasPrefix(body[j:], "&&"),
			strings.HasPrefix(body[j:], "--"),
			strings.HasPrefix(body[j:], "~~"):
			return false
		}
	}
	return mayTake
}

// ugrepCarriageReturnsOnly spells each carriage return in (part of) a
// bracket class, raw or escaped, as `\r`, which ugrep reads as a CR there
// too; everything else is copied.
func ugrepCarriageReturnsOnly(class string) string {
	if strings.IndexByte(class, '\r') < 0 {
		return class
	}
	var b strings.Builder
	for i := 0; i < len(class); i++ {
		switch {
		case class[i] == '\\' && i+1 < len(class) && class[i+1] == '\r':
			b.WriteString(`\r`)
			i++
		case class[i] == '\\' && i+1 < len(class):
			b.WriteString(class[i : i+2])
			i++
		case class[i] == '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(class[i])
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
