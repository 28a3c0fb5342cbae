package panes

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// KeyRow is one binding, the single source of truth for a key (lazygit's
// shape): the keys and help text, what it does, and when it does nothing
// and why. The pane's dispatch, its footer, the ? overlay and the README's
// key table are all read from the same rows, so they cannot drift.
type KeyRow struct {
	Binding key.Binding
	// Do acts on the key; nil only for rows that document keys handled
	// elsewhere (typing in a field).
	Do func(tea.KeyPressMsg) tea.Cmd
	// Disabled says why the key does nothing now ("" when it acts); nil
	// means always enabled. A disabled key is pressed to no effect but its
	// reason reaches the footer (KeyDisabledMsg), never silence.
	Disabled func() string
	// When limits the row to a state (nil: always): outside it the row is
	// not listed and does not claim its key, so another row for the same
	// key can act ("enter: open" beside "enter: edit" on an empty list).
	When func() bool
	// Footer puts the row in the status bar when it is enabled.
	Footer bool
	// Everyday puts the row in the README's table of everyday keys.
	Everyday bool
	// Group is the row's section in the ? overlay: HelpGroups lists the
	// navigation rows in a column apart from the pane's actions, whatever
	// their order in the keymap.
	Group KeyGroup
}

// KeyGroup is a section of the ? overlay a row belongs to.
type KeyGroup uint8

const (
	// GroupActions is what a pane does (the zero value: a row is an
	// action unless it says otherwise).
	GroupActions KeyGroup = iota
	// GroupNav moves a selection or scrolls a view; the Nav builders put
	// their rows here.
	GroupNav
)

// helpOrder is the order of the overlay's columns: moving first, as the
// overlay has always shown them, then acting.
var helpOrder = [...]KeyGroup{GroupNav, GroupActions}

// KeyDisabledMsg reports a key pressed while its row was disabled; the
// root shows the reason in the footer until the next key.
type KeyDisabledMsg struct {
	Key    string // the key's help label, e.g. "a"
	Reason string
}

// Keymap is an ordered list of rows; the first matching row wins.
type Keymap []KeyRow

// Row builds a row that always acts.
func Row(b key.Binding, do func(tea.KeyPressMsg) tea.Cmd) KeyRow { return KeyRow{Binding: b, Do: do} }

// Bind is a binding with its help label and description: key.NewBinding
// in one call, so a keymap reads one row per line.
func Bind(label, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(label, desc))
}

// applies reports whether the row is in force in the current state.
func (r KeyRow) applies() bool { return r.When == nil || r.When() }

// reason is why r does nothing now, or "".
func (r KeyRow) reason() string {
	if r.Disabled == nil {
		return ""
	}
	return r.Disabled()
}

// matches compares msg with the row's keys whatever the row's state: a
// disabled row still claims its key, so the key says why instead of
// falling through to another row.
func (r KeyRow) matches(msg tea.KeyPressMsg) bool {
	b := r.Binding
	b.SetEnabled(true)
	return len(b.Keys()) > 0 && key.Matches(msg, b)
}

// Dispatch runs the first row whose keys match msg. ok is false when no row
// matches. A matching disabled row does nothing but returns a command that
// reports its reason (KeyDisabledMsg).
func (km Keymap) Dispatch(msg tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	for _, r := range km {
		if r.Do == nil || !r.applies() || !r.matches(msg) {
			continue
		}
		if why := r.reason(); why != "" {
			label := r.Binding.Help().Key
			return func() tea.Msg { return KeyDisabledMsg{Key: label, Reason: why} }, true
		}
		return r.Do(msg), true
	}
	return nil, false
}

// Footer is the status bar's bindings: rows marked Footer that act now.
func (km Keymap) Footer() []key.Binding {
	var out []key.Binding
	for _, r := range km {
		if r.Footer && r.applies() && r.reason() == "" {
			out = append(out, r.Binding)
		}
	}
	return out
}

// Help is every row's binding for the ? overlay, in order; a disabled one
// is marked off (pressing it says why in the footer).
func (km Keymap) Help() []key.Binding {
	out := make([]key.Binding, 0, len(km))
	for _, r := range km {
		if !r.applies() {
			continue
		}
		b := r.Binding
		if r.reason() != "" {
			b.SetHelp(b.Help().Key, b.Help().Desc+" (off)")
		}
		out = append(out, b)
	}
	return out
}

// HelpGroups is Help split by the rows' Group, one column a group in
// helpOrder, each in the keymap's order; a group with no row in force is
// left out.
func (km Keymap) HelpGroups() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range helpOrder {
		var rows Keymap
		for _, r := range km {
			if r.Group == g {
				rows = append(rows, r)
			}
		}
		if h := rows.Help(); len(h) > 0 {
			out = append(out, h)
		}
	}
	return out
}

// KeySection is a titled group of rows: a pane's mode ("Search — results").
type KeySection struct {
	Title string
	Rows  Keymap
}

// KeyDocumenter is a pane whose keymaps can be listed without running it
// (the README's table, `vigil keybindings --markdown`).
type KeyDocumenter interface {
	KeySections() []KeySection
}

// KeysMarkdown renders the everyday rows of sections as a markdown table,
// one line per section, in the sections' order. The output is deterministic:
// the README holds it between <!-- keys:begin --> and <!-- keys:end -->.
func KeysMarkdown(sections []KeySection) string {
	var b strings.Builder
	b.WriteString("| where | keys |\n|---|---|\n")
	for _, s := range sections {
		var cells []string
		for _, r := range s.Rows {
			if !r.Everyday {
				continue
			}
			h := r.Binding.Help()
			cells = append(cells, mdKeys(h.Key)+" "+mdCell(h.Desc))
		}
		if len(cells) > 0 { // one row a section keeps the README's table short
			b.WriteString("| " + mdCell(s.Title) + " | " + strings.Join(cells, " · ") + " |\n")
		}
	}
	return b.String()
}

// mdKeys shows a help label ("↑/k", "enter/o") as code spans, one per key.
func mdKeys(label string) string {
	if label == "/" {
		return "`/`"
	}
	parts := strings.Split(label, "/")
	for i, p := range parts {
		parts[i] = "`" + mdCell(p) + "`"
	}
	return strings.Join(parts, " ")
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
