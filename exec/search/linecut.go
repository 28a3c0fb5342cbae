package search

import (
	"unicode/utf8"

	"github.com/vigil-dev/vigil/config"
)

// Long lines. A minified bundle or a hostile file is one line of megabytes:
// thirty-one 2 MB lines of "a" searched for "aaaa" printed 125 MB of JSON
// (each event carried its whole line, and content repeated it) and held
// 600 MB. So what one line contributes is capped ([tools.search]
// max_line_bytes, 4 KiB by default): a longer line's text is cut to a
// window around its first match, and only that window is ever copied out
// of the file or the backend's output. The event says where the window
// lies (Event.TextOffset, Event.LineBytes: "text_truncated" in JSON).

// DefaultMaxLineBytes is [tools.search] max_line_bytes when Options leave
// it zero; a value under config.MinMaxLineBytes counts as that.
const DefaultMaxLineBytes = 4096

// maxLineOf is the cap a config asks for (see DefaultMaxLineBytes).
func maxLineOf(cfg config.SearchConfig) int {
	switch {
	case cfg.MaxLineBytes <= 0:
		return DefaultMaxLineBytes
	case cfg.MaxLineBytes < config.MinMaxLineBytes:
		return config.MinMaxLineBytes
	case cfg.MaxLineBytes > 1<<40:
		return 1 << 40
	}
	return int(cfg.MaxLineBytes)
}

// lineCut says where a cut line's stored text lies in the line: full is
// the line's length in bytes, 0 when the text is the whole line.
type lineCut struct{ off, full int }

// lineWindow is the part [lo, hi) of a line of n bytes that is kept when n
// exceeds limit: limit bytes at most, starting a quarter of the window
// before the first match (which starts at first), so that what leads up to
// it shows too, and moved left when the line ends sooner. Both ends are
// moved back onto the start of a UTF-8 sequence; the first match's start
// always lies within [lo, hi).
func lineWindow(text []byte, first, limit int) (lo, hi int) {
	n := len(text)
	first = min(max(first, 0), n)
	lo = max(first-limit/4, 0)
	lo = min(lo, max(n-limit, 0))
	// Off the inside of a character: forward when that stays at or before
	// the match (the window then still reaches the line's end when it did),
	// else back. Invalid bytes are characters of their own (shown one by
	// one as \xff), so a window may start or end among them: moving back
	// over them could leave a match at the line's end out of the window.
	if s, e, inside := inRune(text, lo); inside {
		if e <= first {
			lo = e
		} else {
			lo = s
		}
	}
	hi = min(lo+limit, n)
	if s, _, inside := inRune(text, hi); inside && s > lo {
		hi = s
	}
	return lo, hi
}

// inRune reports whether byte i of text lies inside (not at the start of) a
// valid UTF-8 sequence, and where that sequence starts and ends.
func inRune(text []byte, i int) (start, end int, inside bool) {
	if i <= 0 || i >= len(text) || utf8.RuneStart(text[i]) {
		return 0, 0, false
	}
	for s := i - 1; s >= 0 && s >= i-(utf8.UTFMax-1); s-- {
		if utf8.RuneStart(text[s]) {
			r, size := utf8.DecodeRune(text[s:])
			if (r != utf8.RuneError || size > 1) && s+size > i {
				return s, s + size, true
			}
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// cutLine returns the part of text to keep and where it lies, given the
// line's first match start (0 for a context line) and the cap (0: none).
func cutLine(text []byte, first, limit int) ([]byte, lineCut) {
	if limit <= 0 || len(text) <= limit {
		return text, lineCut{}
	}
	lo, hi := lineWindow(text, first, limit)
	return text[lo:hi], lineCut{off: lo, full: len(text)}
}

// windowSpans moves a cut line's spans (offsets in the whole line) onto
// its window of n bytes at off: spans that start outside it are dropped,
// one that runs past its end is cut there. dropped reports whether any
// was dropped; firstCut whether the first span was cut.
func windowSpans(spans []Span, off, n int) (out []Span, dropped, firstCut bool) {
	out = make([]Span, 0, min(len(spans), maxSubmatches+1))
	for i, s := range spans {
		if s.Start < off || s.Start > off+n || s.End < s.Start {
			dropped = true
			continue
		}
		if s.End > off+n {
			s.End = off + n
			firstCut = firstCut || i == 0
		}
		out = append(out, Span{s.Start - off, s.End - off})
	}
	return out, dropped, firstCut
}
