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
	list := panes.ListNav(panes.ListMoves(&p.list, nil))
	list.PageDown = list.PageDown.AlsoKeys("space")
	// the detail is opened per hit: its view is looked up at each key
	detail := panes.ViewNav(panes.ViewMoves(func() *panes.Viewport {
		if p.detail == nil {
			return nil
		}
		return &p.detail.view
	}))
	detail.Up = detail.Up.Titled("scroll up")
	detail.Up.Footer = false
	detail.Down = detail.Down.Titled("scroll down")
	detail.PageDown.Footer = true
	filter := panes.FieldNav(panes.ListMoves(&p.list, nil))
	return keymaps{
		fields: panes.Keymap{
			{Binding: b("enter", "search", "enter"), Footer: true, Everyday: true, Do: func(tea.KeyPressMsg) tea.Cmd { return p.run() }},
			{Binding: b("tab", "next field", "tab"), Footer: true, Do: do(func() { p.focus = (p.focus + 1) % nFields })},
			{Binding: b("shift+tab", "previous field", "shift+tab"), Footer: true,
				Do: do(func() { p.focus = (p.focus + nFields - 1) % nFields })},
			{Binding: b("esc", "leave field", "esc"), Footer: true, Everyday: true, Do: do(func() { p.mode = modeList })},
		},
		list: append(list.Rows(), panes.Keymap{
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
		}...),
		filter: append(panes.Keymap{
			{Binding: b("enter", "keep filter", "enter"), Footer: true, Do: do(func() { p.mode = modeList })},
			{Binding: b("esc", "clear filter", "esc"), Footer: true,
				Do: do(func() { p.filter.SetValue(""); p.refilter(); p.mode = modeList })},
		}, filter.Rows()...),
		detail: append(panes.Keymap{
			{Binding: b("esc", "back", "esc", "backspace", "left", "h"), Footer: true,
				Do: do(func() { p.detail = nil; p.detailGen++; p.mode = modeList })},
		}, detail.Rows()...),
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
