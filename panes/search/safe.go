package searchpane

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// Everything this pane shows from outside — file names, matched and
// context lines, the preview, scoped hits and documents, backend messages —
// goes through safetext: controls, escapes and invisible characters show
// as marked escapes (the warning style), never as themselves. A line is
// first cut to the bytes that can be visible (a window around its first
// match), then escaped, then cut to cells, then styled, so that a 2 MB
// line costs what a short one does.

// tabWidth is where file contents' tabs stop.
const tabWidth = 4

// rowOpts say how a row is drawn.
type rowOpts struct {
	tabs      int  // tab stop for contents; 0 shows a tab as \t (names, fields)
	cutBefore bool // the text is a window that starts inside a longer line
	cutAfter  bool // ...or stops before its end
	base, hl  lipgloss.Style
	warn      lipgloss.Style
}

type cell struct {
	s     string
	w     int
	hl    bool
	esc   bool
	first bool // part of the first match (which adjacent matches do not extend)
}

// cellsOf escapes raw (which starts at byte base of the line the spans'
// offsets refer to) through safetext and returns its cells: a plain
// character each, or a whole escape (never cut in two). Runs in and out of
// the spans are escaped separately, each from the column it starts at (for
// tabs).
func cellsOf(raw string, spans []search.Span, base int, tabs int, out []cell) []cell {
	col := 0
	firstDone := false
	k := 0 // spans before k end at or before from
	for from := 0; from < len(raw); {
		for k < len(spans) && spans[k].End <= base+from {
			k++
		}
		// The next run of bytes that is all in or all out of the spans
		// (they come in order).
		in := k < len(spans) && spans[k].Start <= base+from
		to := len(raw)
		if in {
			to = min(to, spans[k].End-base)
		} else if k < len(spans) {
			to = min(to, max(spans[k].Start-base, from+1))
		}
		// Whole characters: a span is never split inside one (at most a
		// character's length on: bytes that start none are invalid UTF-8,
		// each a character of its own).
		for n := 0; n < utf8.UTFMax-1 && to < len(raw) && !utf8.RuneStart(raw[to]); n++ {
			to++
		}
		seg := raw[from:to]
		pad := 0
		if tabs > 0 {
			pad = col % tabs // so that the run's tab stops are the line's
		}
		t := safetext.InspectWith(strings.Repeat(" ", pad)+seg, safetext.Options{TabWidth: tabs})
		skip := pad
		first := in && !firstDone
		for _, sp := range t.Spans {
			if sp.Escaped {
				out = append(out, cell{s: sp.Text, w: len(sp.Text), hl: in, esc: true, first: first})
				col += len(sp.Text)
				continue
			}
			text := sp.Text
			if skip > 0 {
				n := min(skip, len(text))
				text, skip = text[n:], skip-n
			}
			// One cell per grapheme, not per rune: "☺" is one cell wide
			// but "☺\ufe0f" two, and a row's width must be what the
			// terminal draws.
			for text != "" {
				g, w := string(text[0]), 1
				if text[0] >= utf8.RuneSelf || len(text) > 1 && text[1] >= utf8.RuneSelf {
					g, w = ansi.FirstGraphemeCluster(text, ansi.GraphemeWidth)
					if g == "" {
						break
					}
				}
				out = append(out, cell{s: g, w: w, hl: in, first: first})
				col += w
				text = text[len(g):]
			}
		}
		if first && (to == len(raw) || base+to >= spans[k].End) {
			firstDone = true
		}
		from = to
	}
	return out
}

// visibleWindow is the part of line [lo, hi) that can reach a row of width
// cells: the bytes around the first match (or from the start), a few
// bytes per cell. Zero-width characters beyond it are not shown.
func visibleWindow(line string, spans []search.Span, width int) (lo, hi int) {
	budget := 8*width + 64
	var first search.Span
	hasFirst := false
	for _, sp := range spans {
		if sp.Start >= 0 && sp.Start <= len(line) && sp.End >= sp.Start {
			first, hasFirst = sp, true
			break
		}
	}
	if hasFirst && first.Start > budget {
		lo = first.Start - budget/2
		// Back onto a character's start, at most a character's length:
		// bytes that start none (invalid UTF-8) are shown one by one.
		for k := 0; k < utf8.UTFMax-1 && lo > 0 && !utf8.RuneStart(line[lo]); k++ {
			lo--
		}
	}
	end := lo
	if hasFirst {
		end = max(lo, min(first.End, first.Start+budget))
	}
	hi = min(len(line), end+budget)
	for k := 0; k < utf8.UTFMax-1 && hi < len(line) && hi > lo && !utf8.RuneStart(line[hi]); k++ {
		hi--
	}
	return lo, hi
}

// orderedSpans is spans without those out of order or overlapping the one
// before (a scoped hit's single span, an event's submatches: already so).
func orderedSpans(spans []search.Span) []search.Span {
	out := spans[:0:0]
	end := -1
	for _, sp := range spans {
		if sp.Start < end || sp.End < sp.Start {
			continue
		}
		if sp.End == sp.Start {
			continue // an empty match highlights nothing
		}
		out = append(out, sp)
		end = sp.End
	}
	return out
}

// renderLine draws line (untrusted) in at most width cells with the spans
// (byte offsets into line) highlighted. A line too long is cut with an
// ellipsis, and when the first match would fall off the end the window
// slides so it shows.
func renderLine(line string, spans []search.Span, width int, o rowOpts) string {
	if width <= 0 {
		return ""
	}
	lo, hi := visibleWindow(line, spans, width)
	cells := cellsOf(line[lo:hi], orderedSpans(spans), lo, o.tabs, make([]cell, 0, min(hi-lo, 4*width+16)))
	cutBefore := o.cutBefore || lo > 0
	cutAfter := o.cutAfter || hi < len(line)
	total, firstHL, firstEnd := 0, -1, -1
	for _, c := range cells {
		if c.hl && firstHL < 0 {
			firstHL = total
		}
		total += c.w
	}
	if firstHL >= 0 {
		pos := 0
		firstEnd = firstHL
		for _, c := range cells {
			pos += c.w
			if c.first {
				firstEnd = pos
			}
		}
	}
	start := 0
	lead := ""
	switch {
	case firstHL >= 0 && (lo > 0 || (total > width && firstEnd > width-1)):
		// slide: show some context before the match, and the match itself
		start = max(0, firstHL-width/3)
		if firstEnd-start > width-2 {
			start = firstEnd - (width - 2) // a match wider than the window: show its end
		}
		if start > 0 || cutBefore {
			lead = "…"
		}
	case cutBefore:
		lead = "…"
	}
	var b strings.Builder
	used := 0
	if lead != "" {
		b.WriteString(o.base.Render(lead))
		used = 1
	}
	pos := 0
	var run strings.Builder
	runHL := false
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if runHL {
			b.WriteString(o.hl.Render(run.String()))
		} else {
			b.WriteString(o.base.Render(run.String()))
		}
		run.Reset()
	}
	cut := false
	prevBS, shown := false, false
	for _, c := range cells {
		before := pos
		pos += c.w
		// A slid row never starts inside a run of backslashes: the data's
		// doubled `\\u202e` shown from its second backslash would read as
		// Vigil's own mark under NO_COLOR.
		bs := !c.esc && c.s == `\`
		if before < start || !shown && bs && prevBS {
			prevBS = bs
			continue
		}
		shown = true
		// everything left fits: no ellipsis needed; otherwise keep a cell
		// for it
		if (cutAfter || total-before > width-used) && used+c.w > width-1 {
			cut = true
			break
		}
		if c.esc {
			flush()
			b.WriteString(o.warn.Render(c.s))
			used += c.w
			continue
		}
		if c.hl != runHL {
			flush()
			runHL = c.hl
		}
		run.WriteString(c.s)
		used += c.w
	}
	flush()
	if cut || (cutAfter && used < width) {
		b.WriteString(o.base.Render("…"))
	}
	return b.String()
}

// safeField draws a name or a field (untrusted, one line: tabs and line
// ends shown as escapes) in at most width cells, in style base with its
// escapes marked.
func (p *Pane) safeField(s string, width int, base lipgloss.Style) string {
	return safeField(p.styles, s, width, base)
}

// safeField is Pane.safeField for a child drawing with styles st.
func safeField(st *themes.Styles, s string, width int, base lipgloss.Style) string {
	return renderLine(s, nil, width, rowOpts{base: base, hl: base, warn: st.Warning})
}
