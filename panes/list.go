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

// List is the one cursor over a list: the selected item, the first item on
// screen, movement, paging, first/last, the wheel and clicks. It keeps no
// items, only positions: the pane says how many there are (Len), how many
// screen lines an item takes (Height) and which items the cursor may rest on
// (Selectable), and draws the items itself. Every operation reads Len first,
// so a list that grows under the cursor (streaming results) keeps the cursor
// on the same item and one that shrinks clamps it.
//
// Built here rather than on bubbles' list: that list owns its items and its
// filtering, draws one delegate row per item, and can neither skip group
// headers nor hold a million rows known only by their count (the Audit log);
// this one costs O(lines on screen) per frame whatever the length.
type List struct {
	// Len is the number of items; nil is an empty list.
	Len func() int
	// Height is how many screen lines item i takes; nil: one each. It is
	// asked only about items near the screen.
	Height func(i int) int
	// Selectable reports whether the cursor may rest on item i (a group's
	// header may not); nil: every item. Movement skips the others.
	Selectable func(i int) bool
	// Map is which item each drawn line shows, filled by Draw and read by
	// Click. The pane calls Map.Reset with where the list starts on screen.
	Map LineMap

	sel, top int
	window   int // lines of the last Scroll: a page
}

func (l *List) count() int {
	if l.Len == nil {
		return 0
	}
	return max(l.Len(), 0)
}

func (l *List) height(i int) int {
	if l.Height == nil {
		return 1
	}
	return max(l.Height(i), 1)
}

func (l *List) selectable(i int) bool { return l.Selectable == nil || l.Selectable(i) }

// settle moves i onto a selectable item, looking first in direction dir
// (+1 or -1), then the other way; -1 when no item is selectable nearby.
func (l *List) settle(i, dir, n int) int {
	i = min(max(i, 0), n-1)
	for _, d := range []int{dir, -dir} {
		for j := i; j >= 0 && j < n; j += d {
			if l.selectable(j) {
				return j
			}
		}
	}
	return -1
}

// sync clamps the cursor and the top to the list's current length.
func (l *List) sync() int {
	n := l.count()
	if n == 0 {
		l.sel, l.top = 0, 0
		return 0
	}
	l.sel = min(max(l.sel, 0), n-1)
	if !l.selectable(l.sel) {
		if j := l.settle(l.sel, 1, n); j >= 0 {
			l.sel = j
		}
	}
	l.top = min(max(l.top, 0), n-1)
	return n
}

// Cursor is the selected item (0 in an empty list).
func (l *List) Cursor() int { l.sync(); return l.sel }

// Top is the first item on screen as last scrolled.
func (l *List) Top() int { l.sync(); return l.top }

// Reset puts the cursor and the view back at the start: the list now holds
// other items (a new search).
func (l *List) Reset() { l.sel, l.top = 0, 0 }

// Select puts the cursor on item i, or on the nearest selectable item after
// it (a header selects its group's first item).
func (l *List) Select(i int) {
	n := l.sync()
	if n == 0 {
		return
	}
	if j := l.settle(i, 1, n); j >= 0 {
		l.sel = j
	}
}

// Move moves the cursor by d items, skipping those it cannot rest on in
// the direction of travel; it stays put when none lies that way.
func (l *List) Move(d int) {
	n := l.sync()
	if n == 0 || d == 0 {
		return
	}
	dir := 1
	if d < 0 {
		dir = -1
	}
	if j := l.settle(l.sel+d, dir, n); j >= 0 {
		l.sel = j
	}
}

// First and Last move to the first and last selectable items (g and G).
func (l *List) First() { l.Move(-l.count()) }
func (l *List) Last()  { l.Move(l.count()) }

// PageDown and PageUp move the cursor a screen of lines (less one, so a
// line of the old page stays in view), whatever each item's height.
func (l *List) PageDown() { l.page(1) }
func (l *List) PageUp()   { l.page(-1) }

func (l *List) page(dir int) {
	n := l.sync()
	if n == 0 {
		return
	}
	want := max(l.window-1, 1)
	i, lines := l.sel, 0
	for i+dir >= 0 && i+dir < n && lines < want {
		i += dir
		lines += l.height(i)
	}
	l.Move(i - l.sel)
}

// Wheel moves the cursor by a wheel notch. The wheel moves the selection,
// as in gh-dash, not only the view as in lazygit: the selected row then
// never leaves the screen, so enter always acts on a row the person sees.
func (l *List) Wheel(msg tea.MouseWheelMsg) { l.Move(Wheel(msg)) }

// Click selects the item under a left click; it reports whether the click
// landed on one.
func (l *List) Click(msg tea.MouseClickMsg) bool {
	i, ok := l.Map.Clicked(msg)
	if ok {
		l.Select(i)
	}
	return ok
}

// Scroll fixes the first item on screen for a window of h lines and
// returns it: the selected item is in view (at the top when it alone is
// taller than the window), a header just above it stays in view where it
// fits, and no blank lines are left below the last item while earlier ones
// could fill them. It looks only at items within a window of the cursor.
func (l *List) Scroll(h int) int {
	n := l.sync()
	l.window = max(h, 0)
	if n == 0 || h <= 0 {
		l.top = 0
		return 0
	}
	// the last page: the lowest top that still fills the window
	last, span := n-1, l.height(n-1)
	for last > 0 && span+l.height(last-1) <= h {
		last--
		span += l.height(last)
	}
	l.top = min(l.top, last)
	// the selection in view: between the top that shows it last and itself
	low, span := l.sel, l.height(l.sel)
	for low > 0 && span+l.height(low-1) <= h {
		low--
		span += l.height(low)
	}
	l.top = min(max(l.top, low), l.sel)
	// the header of the group the top item opens, when it fits
	span = 0
	for i := l.top; i <= l.sel; i++ {
		span += l.height(i)
	}
	for l.top > 0 && !l.selectable(l.top-1) && span+l.height(l.top-1) <= h {
		l.top--
		span += l.height(l.top)
	}
	return l.top
}

// TopFor is the top Scroll(h) would choose, without moving anything: which
// rows to read ahead before the next frame asks for them.
func (l *List) TopFor(h int) int {
	c := *l
	return c.Scroll(h)
}

// Draw lays out the window of h lines from the current top (Scroll first):
// each item's lines from draw, cut at h, recorded in Map for clicks. whole
// is how many items were shown entire.
func (l *List) Draw(h int, draw func(i int, selected bool) []string) (lines []string, whole int) {
	n := l.sync()
	lines = make([]string, 0, max(h, 0))
	for i := l.top; i < n && len(lines) < h; i++ {
		item := draw(i, i == l.sel)
		if len(lines)+len(item) <= h {
			whole++
		}
		item = item[:min(len(item), h-len(lines))]
		l.Map.Add(i, len(item))
		lines = append(lines, item...)
	}
	return lines, whole
}

// Render is Scroll then Draw.
func (l *List) Render(h int, draw func(i int, selected bool) []string) []string {
	l.Scroll(h)
	lines, _ := l.Draw(h, draw)
	return lines
}
