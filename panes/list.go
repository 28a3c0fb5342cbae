package panes

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// WheelStep is how many rows one wheel notch moves a list.
const WheelStep = 3

// Wheel is a wheel message as rows to move: -WheelStep up, +WheelStep
// down, 0 for sideways notches.
func Wheel(msg tea.MouseWheelMsg) int {
	switch msg.Button {
	case tea.MouseWheelUp:
		return -WheelStep
	case tea.MouseWheelDown:
		return WheelStep
	}
	return 0
}

// LineMap remembers, as a list is drawn, which item each screen line shows
// (items may take several lines), so a click lands on the item under it.
// It is filled by View and read by Update: the layout a click refers to is
// the one on screen.
type LineMap struct {
	top, left, width int
	items            []int
}

// Reset starts a new frame: the list's first line is pane line top, and it
// covers columns left to left+width.
func (l *LineMap) Reset(top, left, width int) {
	l.top, l.left, l.width = top, left, width
	l.items = l.items[:0]
}

// Add records that item takes the next n lines.
func (l *LineMap) Add(item, n int) {
	for range n {
		l.items = append(l.items, item)
	}
}

// At is the item under pane cell (x, y), if any.
func (l *LineMap) At(x, y int) (int, bool) {
	i := y - l.top
	if i < 0 || i >= len(l.items) || x < l.left || x >= l.left+l.width {
		return 0, false
	}
	return l.items[i], true
}

// Clicked is the item a left click lands on, if any.
func (l *LineMap) Clicked(msg tea.MouseClickMsg) (int, bool) {
	if msg.Button != tea.MouseLeft {
		return 0, false
	}
	return l.At(msg.X, msg.Y)
}

// SelectRow draws line as the selected row across the whole width w: the
// selection style's background runs under every segment, including after
// the resets the segments' own styles end with (a plain Render would stop
// the background at the first of them, leaving only a glyph to mark it).
func SelectRow(line string, w int, sel lipgloss.Style) string {
	probe := sel.Render("\x00")
	on, _, _ := strings.Cut(probe, "\x00")
	fitted := Fit(line, w)
	if on == "" {
		return fitted
	}
	fitted = strings.ReplaceAll(fitted, "\x1b[m", "\x1b[m"+on)
	fitted = strings.ReplaceAll(fitted, "\x1b[0m", "\x1b[0m"+on)
	return on + fitted + "\x1b[m"
}
