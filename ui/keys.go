package ui

import "charm.land/bubbles/v2/key"

// globalKeys are the shell's own bindings; panes own the rest.
type globalKeys struct {
	Quit, ForceQuit, Next, Prev, Help, Suspend key.Binding
	// Jump is 1–9, read only outside text fields; AltJump is alt+1–9,
	// read everywhere, so a pane switch never needs leaving a field first.
	Jump, AltJump []key.Binding
}

func newGlobalKeys(n int) globalKeys {
	k := globalKeys{
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		Next:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Suspend:   key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "suspend")),
	}
	for i := 0; i < n && i < 9; i++ {
		d := string(rune('1' + i))
		k.Jump = append(k.Jump, key.NewBinding(key.WithKeys(d), key.WithHelp(d, "go to pane "+d)))
		k.AltJump = append(k.AltJump, key.NewBinding(key.WithKeys("alt+"+d), key.WithHelp("alt+"+d, "go to pane "+d)))
	}
	return k
}

func (k globalKeys) short() []key.Binding { return []key.Binding{k.Next, k.Help, k.Quit} }

func (k globalKeys) full() []key.Binding {
	jump := key.NewBinding(key.WithKeys("1"), key.WithHelp("1–"+string(rune('0'+len(k.Jump))), "go to pane"))
	return []key.Binding{k.Next, k.Prev, jump, k.Help, k.Suspend, k.Quit, k.ForceQuit}
}
