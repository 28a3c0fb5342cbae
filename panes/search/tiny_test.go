package searchpane

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// At tiny sizes (a split of a small terminal) the pane draws exactly w×h
// without panicking, in every mode: results, preview, composer.
func TestTinySizesDrawExactly(t *testing.T) {
	p := New(fakeOptions(t), styles())
	t.Cleanup(p.Close)
	runTyped(t, p, "needle")
	for _, mode := range []string{"results", "p", "j", "/"} {
		if mode != "results" {
			drain(t, p, p.Update(panetest.Key(mode)))
		}
		for w := 1; w <= 12; w++ {
			for h := 1; h <= 6; h++ {
				lines := strings.Split(p.View(w, h), "\n")
				if len(lines) != h {
					t.Fatalf("%s %d×%d: %d lines", mode, w, h, len(lines))
				}
				for i, l := range lines {
					if got := ansi.StringWidth(l); got != w {
						t.Fatalf("%s %d×%d: line %d is %d wide: %q", mode, w, h, i, got, l)
					}
				}
			}
		}
	}
}
