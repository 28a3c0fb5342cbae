package panes

import tea "charm.land/bubbletea/v2"

// Viewport is the one scroller for text taller than its area (a document,
// a preview, a memory's full text): an offset moved by keys and the wheel,
// clamped to the text when drawn. It keeps no lines, so a pane lays its
// text out as it likes (and caches it) and asks only for the window.
//
// Not bubbles' viewport: that one owns its content string and re-splits it
// on every change, where a pane here lays out (and caches) a 4 MiB document
// once per width and needs a window centred on a line it only knows when
// it draws (a preview around a search hit).
type Viewport struct {
	offset int
	height int // rows of the last Window: a page
	// centred: the window is placed around line centre (moved by rel
	// lines), whatever its height, until Top or Bottom
	centred     bool
	centre, rel int
}

// Scroll moves by d lines (negative: up); never above the first line.
func (v *Viewport) Scroll(d int) {
	if v.centred {
		v.rel += d
		return
	}
	v.offset = max(v.offset+d, 0)
}

// Page scrolls by pages (negative: up): the rows of the last Window, less
// one so a line of the old page stays in view.
func (v *Viewport) Page(pages int) { v.Scroll(pages * max(v.height-1, 1)) }

// Wheel scrolls by a wheel notch.
func (v *Viewport) Wheel(msg tea.MouseWheelMsg) { v.Scroll(Wheel(msg)) }

// Top and Bottom jump to the ends; Bottom is clamped when drawn.
func (v *Viewport) Top()    { v.centred, v.offset = false, 0 }
func (v *Viewport) Bottom() { v.centred, v.offset = false, 1<<30 }

// CenterOn puts line (0-based) in the middle of the window, as near as the
// text's ends allow: a preview opening on a search hit with the lines
// around it. Scrolling then moves from there; the window stays placed
// around the line when its height changes (a resize keeps the hit in view).
func (v *Viewport) CenterOn(line int) {
	v.centred, v.centre, v.rel = true, line, 0
}

// Height is the rows of the last Window.
func (v *Viewport) Height() int { return v.height }

// Offset is the first line shown at the last Window.
func (v *Viewport) Offset() int { return v.offset }

// Window is the part of lines shown in h rows, the offset clamped so the
// last row is the text's last line at most.
func (v *Viewport) Window(lines []string, h int) []string {
	first, end := v.Range(len(lines), h)
	return lines[first:end]
}

// Range is Window for a text known by its line count: the lines [first,
// end) shown in h rows.
func (v *Viewport) Range(n, h int) (first, end int) {
	h = max(h, 0)
	v.height = h
	if v.centred {
		v.offset = v.centre - h/2 + v.rel
	}
	v.offset = min(max(v.offset, 0), max(n-h, 0))
	if v.centred {
		v.rel = v.offset - (v.centre - h/2) // scrolled past an end: no slack to scroll back through
	}
	return v.offset, min(n, v.offset+h)
}
