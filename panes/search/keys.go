package searchpane

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
)

// keymaps are the pane's rows by mode; each row is the single source of
// truth for its key (dispatch, footer, ? overlay, README table).
type keymaps struct {
	anywhere panes.Keymap // composer and results: re-run, stop, alt toggles
	composer panes.Keymap
	results  panes.Keymap
	errors   panes.Keymap // the file-errors list
	document panes.Keymap // a scope hit opened in the viewer
	opening  panes.Keymap // the viewer while the hit opens: only back
}

func (p *Pane) buildKeymaps() keymaps {
	b := panes.Bind
	do := func(f func()) func(tea.KeyPressMsg) tea.Cmd {
		return func(tea.KeyPressMsg) tea.Cmd { f(); return nil }
	}
	toggle := func(f int) func(tea.KeyPressMsg) tea.Cmd {
		return func(tea.KeyPressMsg) tea.Cmd { return p.cycle(f, 1) }
	}
	contentOnly := func() string {
		if p.composer.isScoped() {
			return "a scope has only a pattern and max results"
		}
		return ""
	}
	noScopes := func() string {
		if len(p.opts.Scopes) == 0 {
			return "no scopes configured ([[scopes]] in config.toml)"
		}
		return ""
	}
	noSelection := func() string {
		if p.results.rowCount() == 0 {
			return "no result selected"
		}
		return ""
	}
	previewOff := func() string {
		if !p.preview.open {
			return "the preview is closed (p opens it)"
		}
		return ""
	}
	hasRows := func() bool { return p.results.rowCount() > 0 }
	focusPattern := func() { p.focus, p.composer.field = focusComposer, fPattern }
	km := keymaps{}
	km.anywhere = panes.Keymap{
		{Binding: b("ctrl+r", "re-run", "ctrl+r"), Do: func(tea.KeyPressMsg) tea.Cmd { return p.runAndRecord() }},
		{Binding: b("ctrl+x", "stop search", "ctrl+x"), Footer: true, Do: do(p.stopByKey), Disabled: func() string {
			if !p.running && p.seq == 0 {
				return "no search running"
			}
			return ""
		}},
		{Binding: b("alt+c", "case", "alt+c"), Do: toggle(fCase), Disabled: contentOnly},
		{Binding: b("alt+f", "regex/fixed", "alt+f"), Do: toggle(fMode), Disabled: contentOnly},
		{Binding: b("alt+w", "word", "alt+w"), Do: toggle(fWord), Disabled: contentOnly},
		{Binding: b("alt+h", "hidden", "alt+h"), Do: toggle(fHidden), Disabled: contentOnly},
		{Binding: b("alt+l", "follow", "alt+l"), Do: toggle(fFollow), Disabled: contentOnly},
		{Binding: b("alt+i", "no-ignore", "alt+i"), Do: toggle(fNoIgnore), Disabled: contentOnly},
		{Binding: b("alt+r", "recursive", "alt+r"), Do: toggle(fRecursive), Disabled: contentOnly},
		{Binding: b("alt+z", "fuzzy", "alt+z"), Do: toggle(fFuzzy), Disabled: contentOnly},
		{Binding: b("alt+s", "scope", "alt+s"), Do: toggle(fScope), Disabled: noScopes},
	}
	km.composer = panes.Keymap{
		{Binding: b("enter", "run", "enter"), Footer: true, Everyday: true,
			Do: func(tea.KeyPressMsg) tea.Cmd { return p.runAndRecord() }},
		{Binding: b("esc", "leave field", "esc"), Footer: true, Everyday: true, Do: func(tea.KeyPressMsg) tea.Cmd { return p.leaveComposer() }},
		{Binding: b("tab", "next field", "tab"), Footer: true, Do: do(func() { p.composer.nextField(1) })},
		{Binding: b("shift+tab", "previous field", "shift+tab"), Do: do(func() { p.composer.nextField(-1) })},
		{Binding: b("↑/↓", "history", "up", "down"), Footer: true, Everyday: true,
			Do: func(msg tea.KeyPressMsg) tea.Cmd { return p.upDown(msg.String() == "up") }},
		{Binding: b("→", "complete path", "right", "ctrl+f"), Do: p.rightKey},
		{Binding: b("space/←", "change option", "space", "left"), Do: p.toggleKey},
	}
	km.results = append(panes.ListNav(panes.ListMoves(&p.results.list, nil)).Rows(), panes.Keymap{
		{Binding: b("enter/o", "open", "enter", "o"), Footer: true, Everyday: true, When: hasRows,
			Do: func(tea.KeyPressMsg) tea.Cmd { return p.open() }},
		{Binding: b("enter", "edit", "enter"), When: func() bool { return !hasRows() }, Do: do(focusPattern)},
		{Binding: b("y", "copy", "y"), Footer: true, Everyday: true, Disabled: noSelection,
			Do: func(tea.KeyPressMsg) tea.Cmd { return p.copySelection() }},
		{Binding: b("p", "preview", "p"), Footer: true, Everyday: true,
			Do: do(p.preview.toggle)},
		{Binding: b("/", "edit", "/", "i"), Footer: true, Everyday: true, Do: do(focusPattern)},
		{Binding: b("K", "preview up", "K", "shift+up"), Disabled: previewOff, Do: do(func() { p.preview.view.Scroll(-1) })},
		{Binding: b("J", "preview down", "J", "shift+down"), Disabled: previewOff, Do: do(func() { p.preview.view.Scroll(1) })},
		{Binding: b("e", "file errors", "e"), Disabled: func() string {
			if len(p.results.fileErrs) == 0 {
				return "no file errors"
			}
			return ""
		}, Do: do(func() { p.results.showErrs = true; p.results.errView.Top() })},
		{Binding: b("s", "next scope", "s"), Disabled: noScopes, Do: toggle(fScope)},
		{Binding: b("esc", "close preview", "esc"), Do: do(func() { p.preview.open = false })},
	}...)
	errs := panes.ViewNav(panes.ViewOf(&p.results.errView))
	errs.First, errs.Last = panes.KeyRow{}, panes.KeyRow{} // the errors list binds no g or G
	km.errors = append(panes.Keymap{
		{Binding: b("e/esc", "close", "e", "esc"), Footer: true, Do: do(func() { p.results.showErrs = false })},
	}, errs.Rows()...)
	// while the hit opens, enter and o (which close an open document) are
	// not "back": a double-tapped enter still opens it
	km.opening = panes.Keymap{
		{Binding: b("esc", "back", "esc", "q"), Footer: true, Do: do(p.viewer.close)},
	}
	km.document = append(panes.Keymap{
		{Binding: b("esc", "back", "esc", "q", "enter", "o"), Footer: true, Do: do(p.viewer.close)},
	}, panes.ViewNav(panes.ViewOf(&p.viewer.view)).Rows()...)
	return km
}

// leaveComposer is esc in a field: back to the results; a pattern whose
// results the person has seen is history.
func (p *Pane) leaveComposer() tea.Cmd {
	p.focus = focusResults
	if p.ranCurrent() {
		return p.recordHistory(p.composer.pattern())
	}
	return nil
}

// upDown walks the history in the pattern field and moves between fields
// elsewhere.
func (p *Pane) upDown(up bool) tea.Cmd {
	if p.composer.field == fPattern {
		if p.composer.walkHistory(up) {
			return p.changed()
		}
		return nil
	}
	if up {
		p.composer.nextField(-1)
	} else {
		p.composer.nextField(1)
	}
	return nil
}

// rightKey accepts the path completion at the end of the path field, as
// fish does; anywhere else it is the field's own → (or an option change).
func (p *Pane) rightKey(msg tea.KeyPressMsg) tea.Cmd {
	if p.composer.field == fPath && p.composer.inputs[fPath].AtEnd() {
		if p.composer.complete() {
			return p.changed()
		}
		return nil
	}
	if !isTextField(p.composer.field) {
		return p.cycle(p.composer.field, 1)
	}
	return p.edit(msg)
}

// toggleKey changes an option chip; in a text field space and ← are text.
func (p *Pane) toggleKey(msg tea.KeyPressMsg) tea.Cmd {
	if isTextField(p.composer.field) {
		return p.edit(msg)
	}
	if msg.String() == "left" {
		return p.cycle(p.composer.field, -1)
	}
	return p.cycle(p.composer.field, 1)
}

// edit gives a key to the focused text field.
func (p *Pane) edit(msg tea.KeyPressMsg) tea.Cmd {
	if changed, _ := p.composer.edit(msg); !changed {
		return nil
	}
	return p.changed()
}

// cycle changes a toggle field by d steps and re-runs (debounced); another
// scope's results are not this one's, so they go at once.
func (p *Pane) cycle(f, d int) tea.Cmd {
	if !p.composer.toggle(f, d) {
		return nil
	}
	if f == fScope {
		p.clearResults()
	}
	return p.changed()
}

// keymap is the rows that act now, the mode's own first.
func (p *Pane) keymap() panes.Keymap {
	switch {
	case p.viewer.loading:
		return p.km.opening
	case p.viewing():
		return p.km.document
	case p.focus == focusComposer:
		return append(append(panes.Keymap{}, p.km.composer...), p.km.anywhere...)
	case p.results.showErrs:
		return append(append(panes.Keymap{}, p.km.errors...), p.km.anywhere...)
	}
	return append(append(panes.Keymap{}, p.km.results...), p.km.anywhere...)
}

// KeySections lists the pane's rows for the README's table and `vigil keys
// --markdown`.
func (p *Pane) KeySections() []panes.KeySection {
	return []panes.KeySection{
		{Title: "Search results", Rows: p.km.results},
		{Title: "Search field", Rows: p.km.composer},
		{Title: "Search (both)", Rows: p.km.anywhere},
		{Title: "Search document", Rows: p.km.document},
	}
}
