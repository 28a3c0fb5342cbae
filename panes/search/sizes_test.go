package searchpane

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// The pane over the injected engine (no backend) at the two sizes the
// issue names: first launch (on the results, the field not focused), and
// results with the preview open.
func TestGoldenSizesWithoutABackend(t *testing.T) {
	for _, sz := range [][2]int{{120, 36}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d first launch", sz[0], sz[1]), func(t *testing.T) {
			p := New(fakeOptions(t), styles())
			out := screen(t, p, sz[0], sz[1], nil, func(s Snapshot) bool { return !s.Busy })
			mustHave(t, out, "pattern — / to edit", "/ edit", "tab next pane", "? help")
			golden.RequireEqual(t, out)
		})
		t.Run(fmt.Sprintf("%dx%d results", sz[0], sz[1]), func(t *testing.T) {
			p := New(fakeOptions(t), styles())
			ks := append(append(keys("/"), typed("needle")...), keys("enter", "esc", "p")...)
			out := screen(t, p, sz[0], sz[1], ks, settled("needle"))
			mustHave(t, out, "23 matches in 3 files", "needle three")
			golden.RequireEqual(t, out)
		})
	}
}

func mustHave(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("missing %q:\n%s", w, out)
		}
	}
}
