package panes

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// The navigation rows every list and scrolled view shares (↑/k ↓/j pgup
// pgdn g G), built once here instead of copied into each pane's keymap.
// A pane takes a Nav, changes what its screen needs (a title, a footer
// flag, one more key) by field, and puts the rows where it wants them.

// Moves are what the navigation rows do. A nil move leaves its row out.
type Moves struct {
	Up, Down, PageUp, PageDown, First, Last func() tea.Cmd
}

// Nav is the navigation rows of one list or view, one field a row, so a
// pane can retitle, rebind or reorder one without copying the others.
// Every row is in GroupNav.
type Nav struct {
	Up, Down, PageUp, PageDown, First, Last KeyRow
}

// Rows is the rows in their usual order, ↑ ↓ pgup pgdn g G, leaving out
// those without an action.
func (n Nav) Rows() Keymap {
	var out Keymap
	for _, r := range [...]KeyRow{n.Up, n.Down, n.PageUp, n.PageDown, n.First, n.Last} {
		if r.Do != nil {
			out = append(out, r)
		}
	}
	return out
}

// ListNav is the rows moving a list's cursor: ↑/k and ↓/j, pgup (ctrl+u)
// and pgdn (ctrl+d), g to the first item and G to the last.
func ListNav(m Moves) Nav {
	return Nav{
		Up:       navRow(Bind("↑/k", "up", "up", "k"), m.Up),
		Down:     navRow(Bind("↓/j", "down", "down", "j"), m.Down),
		PageUp:   navRow(Bind("pgup", "page up", "pgup", "ctrl+u"), m.PageUp),
		PageDown: navRow(Bind("pgdn", "page down", "pgdown", "ctrl+d"), m.PageDown),
		First:    navRow(Bind("g", "first", "home", "g"), m.First),
		Last:     navRow(Bind("G", "last", "end", "G"), m.Last),
	}
}

// ViewNav is the rows scrolling a text: ListNav's keys, with g and G
// going to its top and bottom, space paging down as in a pager, and the
// arrows in the footer (a view has no other use for them).
func ViewNav(m Moves) Nav {
	n := ListNav(m)
	n.Up.Footer, n.Down.Footer = true, true
	n.PageDown = n.PageDown.AlsoKeys("space")
	n.First = n.First.Titled("top")
	n.Last = n.Last.Titled("bottom")
	return n
}

// FieldNav is the rows moving a list while a text field has the keyboard:
// only the arrows, since letters are typed, and in the footer.
func FieldNav(m Moves) Nav {
	up := navRow(Bind("↑", "up", "up"), m.Up)
	down := navRow(Bind("↓", "down", "down"), m.Down)
	up.Footer, down.Footer = true, true
	return Nav{Up: up, Down: down}
}

// ListMoves moves l's cursor, then runs after (nil: nothing), e.g. to load
// what is now selected.
func ListMoves(l *List, after func() tea.Cmd) Moves {
	move := func(f func()) func() tea.Cmd {
		return func() tea.Cmd {
			f()
			if after == nil {
				return nil
			}
			return after()
		}
	}
	return Moves{
		Up:       move(func() { l.Move(-1) }),
		Down:     move(func() { l.Move(1) }),
		PageUp:   move(l.PageUp),
		PageDown: move(l.PageDown),
		First:    move(l.First),
		Last:     move(l.Last),
	}
}

// ViewMoves scrolls the viewport v returns when a key is pressed (a view
// that comes and goes, like an opened item's); a nil one scrolls nothing.
func ViewMoves(v func() *Viewport) Moves {
	on := func(f func(*Viewport)) func() tea.Cmd {
		return func() tea.Cmd {
			if vp := v(); vp != nil {
				f(vp)
			}
			return nil
		}
	}
	return Moves{
		Up:       on(func(vp *Viewport) { vp.Scroll(-1) }),
		Down:     on(func(vp *Viewport) { vp.Scroll(1) }),
		PageUp:   on(func(vp *Viewport) { vp.Page(-1) }),
		PageDown: on(func(vp *Viewport) { vp.Page(1) }),
		First:    on((*Viewport).Top),
		Last:     on((*Viewport).Bottom),
	}
}

// ViewOf is ViewMoves for a viewport that is always there.
func ViewOf(v *Viewport) Moves { return ViewMoves(func() *Viewport { return v }) }

// Titled is r with another help description, its keys unchanged.
func (r KeyRow) Titled(desc string) KeyRow {
	r.Binding.SetHelp(r.Binding.Help().Key, desc)
	return r
}

// AlsoKeys is r bound to more keys, its help label unchanged.
func (r KeyRow) AlsoKeys(keys ...string) KeyRow {
	r.Binding.SetKeys(append(append([]string{}, r.Binding.Keys()...), keys...)...)
	return r
}

// navRow is a GroupNav row running do; a nil do leaves the row without an
// action, and Rows leaves it out.
func navRow(b key.Binding, do func() tea.Cmd) KeyRow {
	r := KeyRow{Binding: b, Group: GroupNav}
	if do != nil {
		r.Do = func(tea.KeyPressMsg) tea.Cmd { return do() }
	}
	return r
}
