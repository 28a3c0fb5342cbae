package ui_test

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// An overlay that fits has nothing to scroll: the wheel and ↓ on it are
// not remembered, so when a resize makes it taller than the screen it
// still opens at its title, not at its end.
func TestOverlayThatFitsDoesNotScroll(t *testing.T) {
	m := switchModel(t)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 80})
	press(m, '?', "?", 0)
	if out := ansi.Strip(m.Render()); strings.Contains(out, "↑/↓ scroll") {
		t.Fatalf("the overlay does not fit 200×80:\n%s", out)
	}
	for range 10 {
		m.Update(tea.MouseWheelMsg{X: 10, Y: 10, Button: tea.MouseWheelDown})
		press(m, tea.KeyDown, "", 0)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	lines := strings.Split(ansi.Strip(m.Render()), "\n")
	if !strings.Contains(lines[1], "Keys") {
		t.Fatalf("after the resize the overlay opens at %q, not its title:\n%s", lines[1], strings.Join(lines, "\n"))
	}
}
