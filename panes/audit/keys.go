package auditpane

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
)

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
	// a cursor movement: the cursor follows appended lines again once it
	// is on the last; g stops following and G starts
	moves := panes.ListMoves(&p.table.list, func() tea.Cmd {
		p.table.follow = p.table.list.Cursor() == p.viewLen()-1
		return nil
	})
	moves.First = func() tea.Cmd { p.table.list.First(); p.table.follow = false; return nil }
	moves.Last = func() tea.Cmd { p.table.list.Last(); p.table.follow = true; return nil }
	nav := panes.ListNav(moves)
	nav.Last = nav.Last.Titled("last (follow)")
	nav.Last.Everyday = true
	detail := panes.ViewNav(panes.ViewOf(&p.detail.view))
	noFilter := func() string {
		if p.filter.none() {
			return "no filter set"
		}
		return ""
	}
	return keymaps{
		list: append(nav.Rows(), panes.Keymap{
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
		}...),
		filter: append(panes.Keymap{
			{Binding: b("enter", "keep filter", "enter"), Footer: true, Do: do(func() { p.filter.typing = false })},
			{Binding: b("esc", "clear filter", "esc"), Footer: true,
				Do: func(tea.KeyPressMsg) tea.Cmd {
					p.filter.typing = false
					p.filter.field.SetValue("")
					return p.refilter()
				}},
		}, panes.FieldNav(panes.Moves{Up: func() tea.Cmd { p.move(-1); return nil },
			Down: func() tea.Cmd { p.move(1); return nil }}).Rows()...),
		detail: append(panes.Keymap{
			{Binding: b("esc", "back", "esc", "enter", "q", "backspace"), Footer: true, Everyday: true, Do: do(p.detail.close)},
		}, detail.Rows()...),
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
