// Package panes holds what every screen shares: the Pane contract the root
// model drives, and small rendering helpers. Each screen has its own folder.
package panes

import (
	"context"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/themes"
)

// Pane is one screen under a tab. Panes are plain structs mutated by the root
// (crush's shape): the root routes keys to the focused pane only and every
// other message to all panes, which ignore what isn't theirs.
type Pane interface {
	// ID is a short stable name ("audit"); async messages carry it.
	ID() string
	// Title is the tab's label.
	Title() string
	// Init starts the pane's background work. ctx is the program's: it ends
	// when the program does (one per terminal, or per SSH session), and the
	// pane's goroutines end with it.
	Init(ctx context.Context) tea.Cmd
	// Update handles a message. Keys arrive only when the pane has focus.
	Update(msg tea.Msg) tea.Cmd
	// View renders exactly width×height cells' worth of lines.
	View(width, height int) string
	// ShortHelp and FullHelp are the pane's keys for the status bar and ? overlay.
	ShortHelp() []key.Binding
	FullHelp() [][]key.Binding
	// Capturing is true while a text field or dialog has the keyboard: global
	// keys such as q, 1–4 and ? are then typed into it instead.
	Capturing() bool
	// Badge is a short tab decoration ("3" pending), or "".
	Badge() string
	// SetStyles swaps the theme.
	SetStyles(*themes.Styles)
	// Close ends the pane's background work and waits for its goroutines:
	// after it returns the pane writes nothing and reads no file.
	Close()
}

// Leaver is a pane told when the screen stops showing it (another pane or
// the help overlay takes its place): its status line speaks of the last key
// in a view that is gone, so it clears it.
type Leaver interface {
	Leave()
}

// Legibler is a pane whose keys act on what it shows. The root asks before
// every key, and on every resize, whether an area of width×height (the
// pane's, 0×0 when the terminal is below the minimum) shows everything a key
// could act on; while it does not, only quit reaches anything. A pane without
// it is legible whenever the terminal is at least the minimum size.
type Legibler interface {
	Legible(width, height int) bool
}
