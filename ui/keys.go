package ui

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
)

// globalKeys are the shell's own rows; panes own the rest. Each row is the
// single source of truth for its key: the dispatch in handleKey, the footer,
// the ? overlay and the README's table (KeySections) read the same rows.
type globalKeys struct {
	// jumpAlt is alt+1–9 and alt+m: read before a text field sees the key,
	// so a pane switch (or the mouse switch) never needs leaving the field.
	jumpAlt panes.Keymap
	// rows are read only outside text fields and dialogs.
	rows panes.Keymap
}

// paneDigits is "1–4" for four panes.
func paneDigits(n int) string {
	n = min(max(n, 1), 9)
	if n == 1 {
		return "1"
	}
	return "1–" + strconv.Itoa(n)
}

func (m *Model) newGlobalKeys() globalKeys {
	n := min(len(m.panes), 9)
	var digits, alts []string
	for i := 1; i <= max(n, 1); i++ {
		digits = append(digits, strconv.Itoa(i))
		alts = append(alts, "alt+"+strconv.Itoa(i))
	}
	jump := func(msg tea.KeyPressMsg) tea.Cmd {
		s := strings.TrimPrefix(msg.String(), "alt+")
		if i, err := strconv.Atoi(s); err == nil {
			m.focus(i - 1)
		}
		return nil
	}
	pn := max(len(m.panes), 1)
	return globalKeys{
		jumpAlt: panes.Keymap{
			{Binding: panes.Bind("alt+"+paneDigits(n), "go to pane (also in a field)", alts...), Do: jump, Everyday: true},
			// alt+m: free in every pane and field (fields ignore alt+letters
			// but alt+backspace), and tmux passes it on as ESC m
			{Binding: panes.Bind("alt+m", "mouse on/off", "alt+m"), Everyday: true,
				Do: func(tea.KeyPressMsg) tea.Cmd { return m.toggleMouse() }},
		},
		rows: panes.Keymap{
			{Binding: panes.Bind(paneDigits(n), "go to pane", digits...), Do: jump, Everyday: true},
			{Binding: panes.Bind("tab", "next pane", "tab"), Footer: true, Everyday: true,
				Do: func(tea.KeyPressMsg) tea.Cmd { m.focus((m.active + 1) % pn); return nil }},
			{Binding: panes.Bind("shift+tab", "previous pane", "shift+tab"), Everyday: true,
				Do: func(tea.KeyPressMsg) tea.Cmd { m.focus((m.active - 1 + pn) % pn); return nil }},
			{Binding: panes.Bind("?", "help", "?"), Footer: true, Everyday: true,
				Do: func(tea.KeyPressMsg) tea.Cmd { m.hide(); m.showHelp = true; m.helpView.Top(); return nil }},
			{Binding: panes.Bind("ctrl+z", "suspend", "ctrl+z"), Do: func(tea.KeyPressMsg) tea.Cmd { m.hide(); return tea.Suspend },
				Disabled: func() string {
					if !m.jobControl() {
						// stopped under a parent that cannot resume it, the
						// screen would freeze until killed from elsewhere
						return "no job control in the parent shell to resume Vigil"
					}
					return ""
				}},
			{Binding: quitKey, Footer: true, Everyday: true,
				Do: func(tea.KeyPressMsg) tea.Cmd { return m.quit() }},
		},
	}
}

// quitKey is q: also read while keys are paused (a pane too small to read).
var quitKey = panes.Bind("q", "quit", "q")

// forceQuit is ctrl+c: it quits from anywhere, before any other routing.
var forceQuit = panes.KeyRow{Binding: panes.Bind("ctrl+c", "quit", "ctrl+c"), Everyday: true,
	Do: func(tea.KeyPressMsg) tea.Cmd { return tea.Quit }}

// sections is the global rows as the overlay and the README list them:
// those read outside text fields, then those read everywhere.
func (k globalKeys) sections() []panes.KeySection {
	every := append(append(panes.Keymap{}, k.jumpAlt...), forceQuit)
	return []panes.KeySection{{Title: "outside a field", Rows: k.rows}, {Title: "everywhere", Rows: every}}
}

// KeySections is the global rows followed by every pane's that documents
// its keys, for the README's table.
func (m *Model) KeySections() []panes.KeySection {
	out := m.keys.sections()
	for _, p := range m.panes {
		if d, ok := p.(panes.KeyDocumenter); ok {
			out = append(out, d.KeySections()...)
		}
	}
	return out
}

// KeysMarkdown is the README's table of everyday keys: the root's rows for
// n panes, then each documenter's (in tab order). `vigil keybindings --markdown`
// prints it; a ui test fails when the README's copy differs.
func KeysMarkdown(n int, docs ...panes.KeyDocumenter) string {
	m := &Model{panes: make([]panes.Pane, n), jobControl: func() bool { return true }}
	sections := m.newGlobalKeys().sections()
	for _, d := range docs {
		sections = append(sections, d.KeySections()...)
	}
	return panes.KeysMarkdown(sections)
}
