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
	moves := panes.ListMoves(&p.list, func() tea.Cmd { p.follow = p.list.Cursor() == p.viewLen()-1; return nil })
	moves.First = func() tea.Cmd { p.list.First(); p.follow = false; return nil }
	moves.Last = func() tea.Cmd { p.list.Last(); p.follow = true; return nil }
	nav := panes.ListNav(moves)
	nav.Last = nav.Last.Titled("last (follow)")
	nav.Last.Everyday = true
	detail := panes.ViewNav(panes.ViewOf(&p.detailView))
	noFilter := func() string {
		if p.event == "" && p.outcome == 0 && p.filter.Value() == "" {
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
			{Binding: b("/", "filter", "/"), Footer: true, Everyday: true, Do: do(func() { p.filtering = true })},
			{Binding: b("e", "event filter", "e"), Footer: true, Everyday: true, Disabled: func() string {
				if len(p.events) == 0 {
					return "no events read yet"
				}
				return ""
			}, Do: func(tea.KeyPressMsg) tea.Cmd { p.event = p.nextEvent(); return p.refilter() }},
			{Binding: b("o", "outcome filter", "o"), Footer: true, Everyday: true,
				Do: func(tea.KeyPressMsg) tea.Cmd { p.outcome = (p.outcome + 1) % len(outcomes); return p.refilter() }},
			{Binding: b("x", "clear filters", "x"), Disabled: noFilter,
				Do: func(tea.KeyPressMsg) tea.Cmd { p.event, p.outcome = "", 0; p.filter.SetValue(""); return p.refilter() }},
		}...),
		filter: append(panes.Keymap{
			{Binding: b("enter", "keep filter", "enter"), Footer: true, Do: do(func() { p.filtering = false })},
			{Binding: b("esc", "clear filter", "esc"), Footer: true,
				Do: func(tea.KeyPressMsg) tea.Cmd { p.filtering = false; p.filter.SetValue(""); return p.refilter() }},
		}, panes.FieldNav(panes.Moves{Up: func() tea.Cmd { p.move(-1); return nil },
			Down: func() tea.Cmd { p.move(1); return nil }}).Rows()...),
		detail: append(panes.Keymap{
			{Binding: b("esc", "back", "esc", "enter", "q", "backspace"), Footer: true, Everyday: true, Do: do(p.closeDetail)},
		}, detail.Rows()...),
	}
}

// keymap is the rows of the current mode.
func (p *Pane) keymap() panes.Keymap {
	switch {
	case p.filtering:
		return p.km.filter
	case p.inDetail():
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
