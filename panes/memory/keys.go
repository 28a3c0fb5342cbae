package memorypane

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
)

// keymaps are the pane's rows by mode; each row is the single source of
// truth for its key (dispatch, footer, ? overlay, README table).
type keymaps struct {
	fields, list, filter, detail panes.Keymap
}

func (p *Pane) buildKeymaps() keymaps {
	b := panes.Bind
	do := func(f func()) func(tea.KeyPressMsg) tea.Cmd {
		return func(tea.KeyPressMsg) tea.Cmd { f(); return nil }
	}
	noFilter := func() string {
		if strings.TrimSpace(p.filter.Value()) == "" {
			return "no filter set"
		}
		return ""
	}
	listed := func() bool { return len(p.shown) > 0 }
	scroll := func(d func() int) func(tea.KeyPressMsg) tea.Cmd {
		return do(func() {
			if p.detail != nil {
				p.detail.view.Scroll(d())
			}
		})
	}
	page := func(n int) func(tea.KeyPressMsg) tea.Cmd {
		return do(func() {
			if p.detail != nil {
				p.detail.view.Page(n)
			}
		})
	}
	return keymaps{
		fields: panes.Keymap{
			{Binding: b("enter", "search", "enter"), Footer: true, Everyday: true, Do: func(tea.KeyPressMsg) tea.Cmd { return p.run() }},
			{Binding: b("tab", "next field", "tab"), Footer: true, Do: do(func() { p.focus = (p.focus + 1) % nFields })},
			{Binding: b("shift+tab", "previous field", "shift+tab"), Footer: true,
				Do: do(func() { p.focus = (p.focus + nFields - 1) % nFields })},
			{Binding: b("esc", "leave field", "esc"), Footer: true, Everyday: true, Do: do(func() { p.mode = modeList })},
		},
		list: panes.Keymap{
			{Binding: b("↑/k", "up", "up", "k"), Do: do(func() { p.move(-1) })},
			{Binding: b("↓/j", "down", "down", "j"), Do: do(func() { p.move(1) })},
			{Binding: b("pgup", "page up", "pgup", "ctrl+u"), Do: do(p.list.PageUp)},
			{Binding: b("pgdn", "page down", "pgdown", "ctrl+d", "space"), Do: do(p.list.PageDown)},
			{Binding: b("g", "first", "home", "g"), Do: do(p.list.First)},
			{Binding: b("G", "last", "end", "G"), Do: do(p.list.Last)},
			{Binding: b("enter", "open", "enter"), Footer: true, Everyday: true, When: listed,
				Do: func(tea.KeyPressMsg) tea.Cmd { return p.openDetail() }},
			{Binding: b("enter", "edit search", "enter"), When: func() bool { return !listed() },
				Do: do(func() { p.mode = modeFields })}, // nothing to open: enter starts typing
			{Binding: b("/", "filter hits", "/"), Footer: true, Everyday: true, Disabled: func() string {
				if len(p.out.Hits) == 0 {
					return "no hits to filter"
				}
				return ""
			}, Do: do(func() { p.mode = modeFilter })},
			{Binding: b("esc", "clear filter", "esc"), Footer: true, Disabled: noFilter,
				Do: do(func() { p.filter.SetValue(""); p.refilter() })},
			{Binding: b("e", "edit search", "e", "i"), Footer: true, Everyday: true, Do: do(func() { p.mode = modeFields })},
			{Binding: b("ctrl+r", "search again", "ctrl+r"), Do: func(tea.KeyPressMsg) tea.Cmd { return p.run() }},
		},
		filter: panes.Keymap{
			{Binding: b("enter", "keep filter", "enter"), Footer: true, Do: do(func() { p.mode = modeList })},
			{Binding: b("esc", "clear filter", "esc"), Footer: true,
				Do: do(func() { p.filter.SetValue(""); p.refilter(); p.mode = modeList })},
			{Binding: b("↑", "up", "up"), Footer: true, Do: do(func() { p.move(-1) })},
			{Binding: b("↓", "down", "down"), Footer: true, Do: do(func() { p.move(1) })},
		},
		detail: panes.Keymap{
			{Binding: b("esc", "back", "esc", "backspace", "left", "h"), Footer: true,
				Do: do(func() { p.detail = nil; p.detailGen++; p.mode = modeList })},
			{Binding: b("↑/k", "scroll up", "up", "k"), Do: scroll(func() int { return -1 })},
			{Binding: b("↓/j", "scroll down", "down", "j"), Footer: true, Do: scroll(func() int { return 1 })},
			{Binding: b("pgup", "page up", "pgup", "ctrl+u"), Do: page(-1)},
			{Binding: b("pgdn", "page down", "pgdown", "ctrl+d", "space"), Footer: true, Do: page(1)},
			{Binding: b("g", "top", "home", "g"), Do: do(func() {
				if p.detail != nil {
					p.detail.view.Top()
				}
			})},
			{Binding: b("G", "bottom", "end", "G"), Do: do(func() {
				if p.detail != nil {
					p.detail.view.Bottom()
				}
			})},
		},
	}
}

// keymap is the rows of the current mode.
func (p *Pane) keymap() panes.Keymap {
	switch p.mode {
	case modeFields:
		return p.km.fields
	case modeFilter:
		return p.km.filter
	case modeDetail:
		return p.km.detail
	}
	return p.km.list
}

// KeySections lists the pane's rows for the README's table.
func (p *Pane) KeySections() []panes.KeySection {
	return []panes.KeySection{
		{Title: "Memory list", Rows: p.km.list},
		{Title: "Memory form", Rows: p.km.fields},
		{Title: "Memory filter", Rows: p.km.filter},
		{Title: "Memory detail", Rows: p.km.detail},
	}
}
