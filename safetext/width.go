package safetext

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Ellipsis ends a value Truncate had to cut.
const Ellipsis = "…"

// Width is the number of terminal cells the shown text takes (the same
// measure the screens use, grapheme by grapheme; an escape is as wide as it
// is long).
func (t Text) Width() int {
	w := 0
	for _, sp := range t.Spans {
		w += spanWidth(sp)
	}
	return w
}

func spanWidth(sp Span) int {
	if sp.Escaped {
		return len(sp.Text)
	}
	return ansi.StringWidth(sp.Text)
}

// Truncate cuts the shown text to at most width cells, ending a cut with an
// ellipsis. It never splits an escape — a half `\u20` would read as another
// character — nor a grapheme: an escape that does not fit whole is left out
// whole. Hidden keeps counting the whole value's hidden characters, so a note
// beside a cut value still tells about the part cut off.
func (t Text) Truncate(width int) Text {
	if t.Width() <= width {
		return t
	}
	out := Text{Hidden: t.Hidden}
	if width <= 0 {
		return out
	}
	room := width - ansiWidth(Ellipsis)
	for _, sp := range t.Spans {
		w := spanWidth(sp)
		if w <= room {
			out.Spans = append(out.Spans, sp)
			room -= w
			continue
		}
		if !sp.Escaped {
			if head := cutPlain(sp.Text, room); head != "" {
				out.Spans = append(out.Spans, Span{Text: head})
			}
		}
		break
	}
	out.Spans = append(out.Spans, Span{Text: Ellipsis})
	return out
}

// cutPlain is the longest prefix of s, whole graphemes, at most room cells
// wide. A cut that would leave a backslash run odd-lengthed at its end is
// harmless: only the ellipsis follows it.
func cutPlain(s string, room int) string {
	var b strings.Builder
	for s != "" && room > 0 {
		g, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
		if g == "" || w > room {
			break
		}
		b.WriteString(g)
		room -= w
		s = s[len(g):]
	}
	return b.String()
}

func ansiWidth(s string) int { return ansi.StringWidth(s) }

// InspectLines lays out a multi-line body as Lines does — split at its own
// line ends, each line made safe on its own — and keeps each line's spans so
// a screen can mark its escapes.
func InspectLines(s string, o Options) []Text {
	parts := strings.Split(s, "\n")
	out := make([]Text, len(parts))
	for i, p := range parts {
		out[i] = InspectWith(strings.TrimSuffix(p, "\r"), o)
	}
	return out
}

// Wrap lays the shown text out in lines of at most width cells, breaking at
// spaces, and hard-breaking a word wider than a line at grapheme boundaries.
// It never breaks inside an escape (which would leave `\u20` on one line and
// `2e` on the next) unless the escape alone is wider than a line. The spaces
// a line is broken at are dropped; a line's leading spaces (indentation) are
// kept. Hidden is carried on the first line. An empty text is one empty line.
func (t Text) Wrap(width int) []Text {
	if width <= 0 {
		return nil
	}
	atoms := t.atoms()
	var lines []Text
	var cur Text
	curW := 0
	newLine := func() {
		lines = append(lines, cur)
		cur, curW = Text{}, 0
	}
	add := func(a atom) {
		cur.appendSpan(a.span)
		curW += a.w
	}
	atStart := true // leading spaces are indentation, kept as far as they fit
	for i := 0; i < len(atoms); {
		j := i // atoms[i:j] are spaces, atoms[j:k] the word after them
		spaceW := 0
		for j < len(atoms) && atoms[j].space {
			spaceW += atoms[j].w
			j++
		}
		k := j
		wordW := 0
		for k < len(atoms) && !atoms[k].space {
			wordW += atoms[k].w
			k++
		}
		switch {
		case atStart:
			for _, a := range atoms[i:j] {
				if curW+a.w <= width {
					add(a)
				}
			}
			if curW > 0 && curW+wordW > width && wordW <= width {
				newLine()
			}
		case curW+spaceW+wordW <= width:
			for _, a := range atoms[i:j] {
				add(a)
			}
		case curW > 0:
			newLine() // break at these spaces, which are dropped
		}
		atStart = false
		for _, a := range atoms[j:k] {
			if curW > 0 && curW+a.w > width {
				newLine()
			}
			for a.w > width { // an escape (or backslash run) wider than a whole line
				add(atom{span: Span{Text: a.span.Text[:width], Escaped: a.span.Escaped}, w: width})
				newLine()
				a = atom{span: Span{Text: a.span.Text[width:], Escaped: a.span.Escaped}, w: a.w - width}
			}
			add(a)
		}
		i = k
	}
	lines = append(lines, cur)
	lines[0].Hidden = t.Hidden
	return lines
}

type atom struct {
	span  Span
	w     int
	space bool
}

// atoms splits the shown text into what Wrap never breaks: whole escapes,
// and graphemes of plain text.
func (t Text) atoms() []atom {
	var out []atom
	for _, sp := range t.Spans {
		if sp.Escaped {
			out = append(out, atom{span: sp, w: len(sp.Text)})
			continue
		}
		for s := sp.Text; s != ""; {
			if s[0] == '\\' {
				// A run of backslashes is never broken: the data's doubled
				// `\\u202e` split after its first backslash would start the
				// next line with what reads as Vigil's own mark.
				n := len(s) - len(strings.TrimLeft(s, `\`))
				out = append(out, atom{span: Span{Text: s[:n]}, w: n})
				s = s[n:]
				continue
			}
			g, w := ansi.FirstGraphemeCluster(s, ansi.GraphemeWidth)
			if g == "" {
				break
			}
			out = append(out, atom{span: Span{Text: g}, w: w, space: g == " "})
			s = s[len(g):]
		}
	}
	return out
}

// appendSpan adds sp, merging plain text into a plain last span; each escape
// stays a span of its own.
func (t *Text) appendSpan(sp Span) {
	if n := len(t.Spans); n > 0 && !sp.Escaped && !t.Spans[n-1].Escaped {
		t.Spans[n-1].Text += sp.Text
		return
	}
	t.Spans = append(t.Spans, sp)
}

// Cell is s shown display-safe in a column of width cells: cut with an
// ellipsis when longer, padded with spaces when shorter, so a value never
// carries text into the next column (a name holding spaces cannot paint a
// row of its own).
func Cell(s string, width int) string {
	t := Inspect(s).Truncate(width)
	return t.String() + strings.Repeat(" ", max(width-t.Width(), 0))
}
