package ui_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
	searchpane "github.com/vigil-dev/vigil/panes/search"
)

// A new user's first keys in a real terminal: the tab bar's digits, ? and
// tab work at once (the Search pane opens on its results, not in its field);
// / starts typing, a half-typed pattern is not history, a run one is, and ↑
// in the field reaches it in the same session.
func TestTmuxFirstLaunchKeysAndHistory(t *testing.T) {
	needTmux(t)
	bin := testbin.Vigil(t)
	home, _ := demoHome(t, bin)
	histPath := filepath.Join(home, "search_history")
	before, _ := searchpane.LoadHistory(histPath)
	tt := startTmux(t, bin, home, 120, 36)
	tt.waitFor("pattern — / to edit")

	tt.keys("3")
	tt.waitFor("Pending approvals")
	tt.keys("?")
	tt.waitFor("press any key to close")
	tt.keys("Space") // any key closes the overlay (esc then tab would read as alt+tab)
	tt.waitScreen("the overlay closed", func(s string) bool {
		return strings.Contains(s, "Pending approvals") && !strings.Contains(s, "press any key to close")
	})
	tt.keys("Tab") // approvals → audit
	tt.waitFor("chain")
	tt.keys("2")
	tt.keys("1")
	s := tt.waitFor("pattern — / to edit")
	// Vigil leads its tmux pane's session: no shell would resume it, so
	// ctrl+z says why instead of leaving a frozen screen
	tt.keys("C-z")
	tt.waitFor("ctrl+z: no job control")
	tt.keys("2") // keys still work after it
	tt.waitFor("newest memories")
	tt.keys("1")
	tt.waitFor("pattern — / to edit")
	if strings.Contains(s, "invalid") {
		t.Fatalf("a first-launch key reached the pattern:\n%s", s)
	}

	tt.keys("/")
	tt.literal("leas")
	tt.waitFor("match") // the live search answered
	tt.keys("C-u")
	tt.literal("lease")
	tt.keys("Enter")
	tt.waitFor("❯ lease")
	tt.keys("Escape")
	// the footer shows the results' keys: the field is left, so the esc was
	// read alone (esc then 3 at once would read as alt+3)
	tt.waitFor("tab next pane")
	tt.keys("3") // out of the field, digits switch again
	tt.waitFor("Pending approvals")
	tt.keys("1", "/", "C-u")
	tt.waitFor("❯  type a pattern") // an empty field
	if len(before) == 0 {
		t.Fatal("the demo seeds a history; none found")
	}
	waitHistory(t, histPath, append(before, "lease"))
	tt.keys("Up")
	tt.waitFor("❯ lease") // ↑ brings back this session's search
}

// waitHistory waits until the history file holds want exactly (it is
// written off the UI goroutine).
func waitHistory(t *testing.T, path string, want []string) {
	t.Helper()
	testwait.For(t, 10*time.Second, func() error {
		got, err := searchpane.LoadHistory(path)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("history %q, want %q (a half-typed pattern must not be stored)", got, want)
		}
		return nil
	})
}
