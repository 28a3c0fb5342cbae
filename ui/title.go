package ui

import (
	"io"

	"github.com/charmbracelet/x/ansi"
)

// XTWINOPS 22 and 23 push and pop the terminal's window and icon titles
// (parameter 0: both). Bubble Tea sets Vigil's title while it runs and
// clears it on exit; pushing the title found before the program starts and
// popping it after the program ends gives the person back their own title
// (a terminal without the stack ignores both).
const (
	pushTitle = 22
	popTitle  = 23
)

// SaveTitle pushes the terminal's current titles; call it on the terminal
// before the program starts.
func SaveTitle(w io.Writer) error {
	_, err := io.WriteString(w, ansi.WindowOp(pushTitle, 0))
	return err
}

// RestoreTitle pops the titles SaveTitle pushed; call it after the program
// has ended (after Bubble Tea cleared the title).
func RestoreTitle(w io.Writer) error {
	_, err := io.WriteString(w, ansi.WindowOp(popTitle, 0))
	return err
}
