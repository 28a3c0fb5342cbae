package auditpane

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
)

// navRows is how many of the list's rows move the selection: the ? overlay
// shows them apart from the actions.
const navRows = 6

// keymaps are the pane's rows by mode; each row is the single source of
// truth for its key (dispatch, footer, ? overlay, README table).
type keymaps struct {
	list, filter, detail panes.Keymap
}

func (p *Pane) buildKeymaps() keymaps {
	b := panes.Bind
	do := func(f func()) func(tea.KeyPressMsg) tea.Cmd {
		return func(tea.KeyPressMsg) tea.Cmd { f(); return nil }
	}
	// moved runs a cursor movement; the cursor follows appended lines
	// again once it is on the last
	moved := func(f func()) func(tea.KeyPressMsg) tea.Cmd {
		return do(func() { f(); p.table.follow = p.table.list.Cursor() == p.viewLen()-1 })
	}
	noFilter := func() string {
		if p.filter.none() {
			return "no filter set"
		}
		return ""
	}
	return keymaps{
		list: panes.Keymap{
			{Binding: b("↑/k", "up", "up", "k"), Do: do(func() { p.move(-1) })},
			{Binding: b("↓/j", "down", "down", "j"), Do: do(func() { p.move(1) })},
			{Binding: b("pgup", "page up", "pgup", "ctrl+u"), Do: moved(p.table.list.PageUp)},
			{Binding: b("pgdn", "page down", "pgdown", "ctrl+d"), Do: moved(p.table.list.PageDown)},
			{Binding: b("g", "first", "home", "g"), Do: do(func() { p.table.list.First(); p.table.follow = false })},
			{Binding: b("G", "last (follow)", "end", "G"), Everyday: true,
				Do: do(func() { p.table.list.Last(); p.table.follow = true })},
			{Binding: b("enter", "details", "enter"), Footer: true, Everyday: true, Disabled: func() string {
				if p.viewLen() == 0 {
					return "no entry to open"
				}
				return ""
			}, Do: func(tea.KeyPressMsg) tea.Cmd { return p.openSelected() }},
			{Binding: b("/", "filter", "/"), Footer: true, Everyday: true, Do: do(func() { p.filter.typing = true })},
			{Binding: b("e", "event filter", "e"), Footer: true, Everyday: true, Disabled: func() string {
				if len(p.table.events) == 0 {
					return "no events read yet"
				}
				return ""
			}, Do: func(tea.KeyPressMsg) tea.Cmd { p.filter.event = p.table.nextEvent(p.filter.event); return p.refilter() }},
			{Binding: b("o", "outcome filter", "o"), Footer: true, Everyday: true,
				Do: func(tea.KeyPressMsg) tea.Cmd {
					p.filter.outcome = (p.filter.outcome + 1) % len(outcomes)
					return p.refilter()
				}},
			{Binding: b("x", "clear filters", "x"), Disabled: noFilter,
				Do: func(tea.KeyPressMsg) tea.Cmd { p.filter.clear(); return p.refilter() }},
		},
		filter: panes.Keymap{
			{Binding: b("enter", "keep filter", "enter"), Footer: true, Do: do(func() { p.filter.typing = false })},
			{Binding: b("esc", "clear filter", "esc"), Footer: true,
				Do: func(tea.KeyPressMsg) tea.Cmd {
					p.filter.typing = false
					p.filter.field.SetValue("")
					return p.refilter()
				}},
			{Binding: b("↑", "up", "up"), Footer: true, Do: do(func() { p.move(-1) })},
			{Binding: b("↓", "down", "down"), Footer: true, Do: do(func() { p.move(1) })},
		},
		detail: panes.Keymap{
			{Binding: b("esc", "back", "esc", "enter", "q", "backspace"), Footer: true, Everyday: true, Do: do(p.detail.close)},
			{Binding: b("↑/k", "up", "up", "k"), Footer: true, Do: do(func() { p.detail.view.Scroll(-1) })},
			{Binding: b("↓/j", "down", "down", "j"), Footer: true, Do: do(func() { p.detail.view.Scroll(1) })},
			{Binding: b("pgup", "page up", "pgup", "ctrl+u"), Do: do(func() { p.detail.view.Page(-1) })},
			{Binding: b("pgdn", "page down", "pgdown", "ctrl+d", "space"), Do: do(func() { p.detail.view.Page(1) })},
			{Binding: b("g", "top", "home", "g"), Do: do(p.detail.view.Top)},
			{Binding: b("G", "bottom", "end", "G"), Do: do(p.detail.view.Bottom)},
		},
	}
}

// keymap is the rows of the current mode.
func (p *Pane) keymap() panes.Keymap {
	switch {
	case p.filter.typing:
		return p.km.filter
	case p.detail.open():
		return p.km.detail
	}
	return p.km.list
}

// KeySections lists the pane's rows for the ? overlay's sections and the
// README's table.
func (p *Pane) KeySections() []panes.KeySection {
	return []panes.KeySection{
		{Title: "Audit log", Rows: p.km.list},
		{Title: "Audit filter", Rows: p.km.filter},
		{Title: "Audit detail", Rows: p.km.detail},
	}
}
