package panes

import tea "charm.land/bubbletea/v2"

// Viewport is the one scroller for text taller than its area (a document,
// a preview, a memory's full text): an offset moved by keys and the wheel,
// clamped to the text when drawn. It keeps no lines, so a pane lays its
// text out as it likes (and caches it) and asks only for the window.
type Viewport struct {
	offset int
}

// Scroll moves by d lines (negative: up); never above the first line.
func (v *Viewport) Scroll(d int) { v.offset = max(v.offset+d, 0) }

// Wheel scrolls by a wheel notch.
func (v *Viewport) Wheel(msg tea.MouseWheelMsg) { v.Scroll(Wheel(msg)) }

// Top and Bottom jump to the ends; Bottom is clamped when drawn.
func (v *Viewport) Top()    { v.offset = 0 }
func (v *Viewport) Bottom() { v.offset = 1 << 30 }

// Offset is the first line shown at the last Window.
func (v *Viewport) Offset() int { return v.offset }

// Window is the part of lines shown in h rows, the offset clamped so the
// last row is the text's last line at most.
func (v *Viewport) Window(lines []string, h int) []string {
	h = max(h, 0)
	v.offset = min(max(v.offset, 0), max(len(lines)-h, 0))
	return lines[v.offset:min(len(lines), v.offset+h)]
}
