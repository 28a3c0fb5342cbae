package search

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// patternRefused turns a backend's refusal of pat into an error about the
// person's own pattern. Vigil rewrites patterns (case folding, ugrep's
// quirks, ugrep's own "(?m)" prefix), and the backend's report points into
// the rewritten one, which the person never typed; so when pat is not
// e.pattern, the backend is asked again with e.pattern as given. If only
// the rewrite is refused, the reason is told without an offset.
func patternRefused(ctx context.Context, be BackendInfo, e effective, pat, refusal string, env []string) error {
	own := refusal
	if pat != e.pattern {
		again, err := compilePattern(ctx, be, e, e.pattern, e.fixed, env)
		if err != nil {
			return err
		}
		own = again
	}
	re := &RegexError{Backend: be.Name, Offset: -1}
	if own == "" {
		re.Reason, _ = readRefusal(be.Name, refusal, "")
	} else {
		re.Reason, re.Offset = readRefusal(be.Name, own, e.pattern)
	}
	return fieldError(BadArgs, FieldPattern, re, "invalid regular expression %q for %s: %v", e.pattern, be.Name, re)
}

// readRefusal reads a backend's compile error: the reason in words and
// the byte offset in pattern it points at (-1 when it points at nothing
// that can be placed in pattern).
func readRefusal(backend, stderr, pattern string) (string, int) {
	if backend == "rg" {
		return readRgRefusal(stderr, pattern)
	}
	return readUgrepRefusal(stderr, pattern)
}

// readRgRefusal reads ripgrep 13's report:
//
//	regex parse error:
//	    a(b
//	     ^
//	error: unclosed group
//
// A pattern of several lines is echoed with line numbers ("2: (c") between
// rules of '~'. The carets count characters, not bytes.
func readRgRefusal(stderr, pattern string) (string, int) {
	lines := strings.Split(stderr, "\n")
	reason := strings.TrimSpace(stderr)
	for _, l := range lines {
		if r, ok := strings.CutPrefix(l, "error: "); ok {
			reason = r
		}
	}
	for i := 1; i < len(lines); i++ {
		col := strings.IndexByte(lines[i], '^')
		if col < 0 || strings.TrimLeft(lines[i][:col], " ") != "" {
			continue
		}
		return reason, rgCaretOffset(lines[i-1], col, pattern)
	}
	return reason, -1
}

var rgNumbered = regexp.MustCompile(`^ *([0-9]+): `)

// rgCaretOffset places a caret at column col under echo (one line of
// ripgrep's echo of pattern) as a byte offset into pattern.
func rgCaretOffset(echo string, col int, pattern string) int {
	patLines := strings.Split(pattern, "\n")
	prefix, line := 4, 0 // a one-line pattern is indented by four spaces
	if len(patLines) > 1 {
		m := rgNumbered.FindStringSubmatch(echo)
		if m == nil {
			return -1
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 || n > len(patLines) {
			return -1
		}
		prefix, line = len(m[0]), n-1
	}
	if len(echo) < prefix || echo[prefix:] != patLines[line] || col < prefix {
		return -1
	}
	off := 0
	for _, l := range patLines[:line] {
		off += len(l) + 1
	}
	return off + byteOfRune(patLines[line], col-prefix)
}

// byteOfRune is the byte offset of the n-th character of s (len(s) past
// its end).
func byteOfRune(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// readUgrepRefusal reads ugrep 3.11's report:
//
//	ugrep: error: error at position 7
//	(?m)a(b
//	       \___mismatched ( )
//
// The position is a byte offset into the regex ugrep compiled, which wraps
// the pattern ("(?m)", and `\<(...)\>` for -w) and spells its newlines '|'.
func readUgrepRefusal(stderr, pattern string) (string, int) {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	head := strings.TrimPrefix(lines[0], "ugrep: error: ")
	posText, positioned := strings.CutPrefix(head, "error at position ")
	if !positioned || len(lines) < 3 {
		return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(stderr), "ugrep: error: ")), -1
	}
	reason := head
	if _, r, ok := strings.Cut(lines[2], `\___`); ok {
		reason = strings.TrimSpace(r)
	}
	pos, err := strconv.Atoi(strings.TrimSpace(posText))
	if pattern == "" || err != nil {
		return reason, -1
	}
	at := strings.Index(lines[1], strings.ReplaceAll(pattern, "\n", "|"))
	if at < 0 {
		return reason, -1
	}
	off := min(max(pos-at, 0), len(pattern))
	for off > 0 && off < len(pattern) && !utf8.RuneStart(pattern[off]) {
		off-- // the start of the character it points into
	}
	return reason, off
}
