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
