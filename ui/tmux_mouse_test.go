package ui_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// mouseTracking is whether the program in tmux's pane asked for button
// events (the mode Vigil's cell-motion tracking sets).
func (tt *tmuxTerm) mouseTracking() string {
	return strings.TrimSpace(tt.run("display-message", "-p", "-t", "v", "#{mouse_button_flag}"))
}

// waitTracking waits for the terminal's mouse mode to be want ("1" or "0").
func (tt *tmuxTerm) waitTracking(want string) {
	tt.t.Helper()
	testwait.For(tt.t, 15*time.Second, func() error {
		if got := tt.mouseTracking(); got != want {
			return fmt.Errorf("mouse_button_flag %q, want %q:\n%s", got, want, tt.screen())
		}
		return nil
	})
}

// alt+m in a real terminal switches the terminal's own mouse mode, from
// the results and from inside the pattern field, where it types nothing.
func TestTmuxAltMSwitchesMouseTracking(t *testing.T) {
	needTmux(t)
	bin := testbin.Vigil(t)
	home, _ := demoHome(t, bin)
	tt := startTmux(t, bin, home, 120, 36)
	tt.waitFor("pattern — / to edit")
	tt.waitTracking("1")
	tt.keys("M-m")
	tt.waitFor("mouse off: the terminal selects text")
	tt.waitTracking("0")
	tt.keys("/")
	tt.waitFor("type a pattern")
	tt.keys("M-m")
	tt.waitFor("mouse on: clicks and the wheel act")
	tt.waitTracking("1")
	if s := tt.screen(); strings.Contains(s, "❯ m") {
		t.Fatalf("alt+m was typed into the pattern:\n%s", s)
	}
}
