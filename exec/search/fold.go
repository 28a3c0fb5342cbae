package search

import "strings"

// backendPattern returns the pattern and -F flag to hand the backend.
// Case-insensitive searches are rewritten so that only ASCII letters fold
// (FR-LS-SRC-04): each letter becomes a two-letter class. Both backends
// would otherwise fold Unicode (Kelvin sign, long s, é/É).
func (e effective) backendPattern(backend string) (string, bool) {
	if !e.insensitive {
		return e.pattern, e.fixed
	}
	if e.fixed {
		return foldLiteral(e.pattern), false
	}
	// rg reads a '[' inside a class as a nested class; ugrep as a member
	// (but after a set operator, where both nest).
	return foldRegex(e.pattern, backend == "rg"), false
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func other(c byte) byte    { return c ^ 0x20 }

// foldLiteral escapes a literal into a regex with ASCII letters folded.
func foldLiteral(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isLetter(c):
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(other(c))
			b.WriteByte(']')
		case strings.IndexByte(`\.+*?()|[]{}^$`, c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// foldRegex rewrites letters outside escapes, group headers and POSIX
// classes; inside bracket classes letters and letter ranges get their
// other-case twin appended. nested says a '[' inside a class opens a
// nested class (rg), rather than being a member (ugrep).
func foldRegex(s string, nested bool) string {
	var b strings.Builder
	n := len(s)
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < n && s[i+1] == 'Q':
			i = foldQuote(&b, s, i)
		case c == '\\':
			i = copyEscape(&b, s, i)
		case c == '(' && i+1 < n && s[i+1] == '?':
			j := i + 2
			if j < n && (s[j] == '<' || s[j] == 'P') && !(j+1 < n && (s[j+1] == '=' || s[j+1] == '!')) {
				for j < n && s[j] != '>' {
					j++
				}
			} else {
				for j < n && s[j] != ':' && s[j] != ')' {
					j++
				}
			}
			if j >= n {
				j = n - 1
			}
			b.WriteString(s[i : j+1])
			i = j
		case c == '[':
			i = foldClass(&b, s, i, nested)
		case isLetter(c):
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(other(c))
			b.WriteByte(']')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// copyEscape copies an escape verbatim: `\c`, and with their arguments
// `\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\pL`, `\PL` and the braced forms
// `\x{...}`, `\u{...}`, `\U{...}`, `\p{...}`, `\P{...}` (folding their hex
// digits or class names would break them). Returns the last index
// consumed.
func copyEscape(b *strings.Builder, s string, i int) int {
	if i+1 >= len(s) {
		b.WriteByte('\\')
		return i
	}
	j := i + 1
	end := j // last index of the escape
	switch s[j] {
	case 'c': // \cX, a control character: X is not a letter to fold
		end = min(j+1, len(s)-1)
	case 'p', 'P', 'x', 'u', 'U':
		if j+1 < len(s) && s[j+1] == '{' {
			if k := strings.IndexByte(s[j:], '}'); k >= 0 {
				end = j + k
			}
			break
		}
		digits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[j]]
		if digits == 0 { // \pL: a one-letter class name
			end = min(j+1, len(s)-1)
			break
		}
		for end < j+digits && end+1 < len(s) && isHex(s[end+1]) {
			end++
		}
	}
	b.WriteString(s[i : end+1])
	return end
}

// foldQuote rewrites a quoted run `\Q...\E` (ugrep's; rg refuses it)
// starting at i: each ASCII letter in it steps out of the quote as a
// two-letter class, and the whole stays one group, since ugrep repeats a
// quote as a unit (`\Qab\E{2}` is abab): `\Qa.\E+` becomes
// `(?:\Q\E[aA]\Q.\E)+`. Returns the last index consumed (the `E`, or the
// end of a quote left open).
func foldQuote(b *strings.Builder, s string, i int) int {
	end := len(s)
	if k := strings.Index(s[i+2:], `\E`); k >= 0 {
		end = i + 2 + k
	}
	b.WriteString(`(?:\Q`)
	for j := i + 2; j < end; j++ {
		if isLetter(s[j]) {
			b.WriteString(`\E[`)
			b.WriteByte(s[j])
			b.WriteByte(other(s[j]))
			b.WriteString(`]\Q`)
			continue
		}
		b.WriteByte(s[j])
	}
	b.WriteString(`\E)`)
	if end == len(s) {
		return end - 1
	}
	return end + 1
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// foldClass rewrites the bracket class opening at i, appending each
// letter's other case to the class. The twins go in before each set
// operator (`&&` intersection, `--` difference, `~~` symmetric difference)
// as well as at the end, and a class right after an operator is folded on
// its own, so that each operand is folded: `[a-z&&[^aeiou]]` becomes
// `[a-zA-Z&&[^aeiouAEIOU]]`, not `[a-z&&[^aeiouAEIOU]A-Z]` (where the
// intersection left out every capital). Any other `[` in a class opens a
// nested class when nested is set (rg), else it is a member (ugrep).
// Returns the index of the closing bracket.
func foldClass(b *strings.Builder, s string, i int, nested bool) int {
	n := len(s)
	j := i + 1
	var extra []byte
	b.WriteByte('[')
	if j < n && s[j] == '^' {
		b.WriteByte('^')
		j++
	}
	if j < n && s[j] == ']' {
		b.WriteByte(']')
		j++
	}
	for j < n && s[j] != ']' {
		c := s[j]
		switch {
		case c == '\\':
			j = copyEscape(b, s, j) + 1
			continue
		case c == '[' && j+1 < n && s[j+1] == ':':
			k := strings.Index(s[j:], ":]")
			if k >= 0 {
				b.WriteString(s[j : j+k+2])
				j += k + 2
				continue
			}
		case (c == '&' || c == '-' || c == '~') && j+1 < n && s[j+1] == c:
			b.Write(extra)
			extra = extra[:0]
			b.WriteString(s[j : j+2])
			j += 2
			if j+1 < n && s[j] == '[' && s[j+1] != ':' {
				j = foldClass(b, s, j, nested) + 1
			}
			continue
		case c == '[' && nested:
			j = foldClass(b, s, j, nested) + 1
			continue
		case isLetter(c) && j+2 < n && s[j+1] == '-' && isLetter(s[j+2]) &&
			(c >= 'a') == (s[j+2] >= 'a'):
			b.WriteString(s[j : j+3])
			extra = append(extra, other(c), '-', other(s[j+2]))
			j += 3
			continue
		case isLetter(c):
			b.WriteByte(c)
			extra = append(extra, other(c))
			j++
			continue
		}
		b.WriteByte(c)
		j++
	}
	b.Write(extra)
	if j < n {
		b.WriteByte(']')
	}
	return j
}
