package panes

// Follow puts the cursor on item i, the new position of the item it was on
// (the list was reloaded and items came or went around it), and moves the
// top by as much: the selected row stays on its screen line instead of
// sliding with every item that arrives or leaves above it.
func (l *List) Follow(i int) {
	n := l.sync()
	if n == 0 {
		return
	}
	was := l.sel
	l.Select(i)
	l.top = min(max(l.top+l.sel-was, 0), n-1)
}
