package ui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
	searchpane "github.com/vigil-dev/vigil/panes/search"
)

// A new user's first keys in a real terminal: the tab bar's digits, ? and
// tab work at once (the Search pane opens on its results, not in its field);
// / starts typing, a half-typed pattern is not history, a run one is, and ↑
// in the field reaches it in the same session.
func TestTmuxFirstLaunchKeysAndHistory(t *testing.T) {
	testbin.Tool(t, "tmux")
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
	time.Sleep(200 * time.Millisecond)
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
	time.Sleep(300 * time.Millisecond) // esc then 3 at once would read as alt+3
	tt.keys("3")                       // out of the field, digits switch again
	tt.waitFor("Pending approvals")
	tt.keys("1", "/", "C-u", "Up")
	if len(before) == 0 {
		t.Fatal("the demo seeds a history; none found")
	}
	waitHistory(t, histPath, append(before, "lease"))
	time.Sleep(300 * time.Millisecond)
	s = tt.screen()
	if !strings.Contains(s, "❯ lease") {
		t.Fatalf("↑ did not bring back this session's search:\n%s", s)
	}
}

// waitHistory waits until the history file holds want exactly (it is
// written off the UI goroutine).
func waitHistory(t *testing.T, path string, want []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := searchpane.LoadHistory(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("history %q, want %q (a half-typed pattern must not be stored)", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
