package memorypane

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// However few lines the list is left (a small terminal, a filter line),
// the selected hit's header is on screen: enter opens the hit the person
// sees, not one hidden under the "more" hint.
func TestSelectedHitShownInAOneLineList(t *testing.T) {
	p := searched(t, demoStore(t), "python")
	press(t, p, "jjj")
	full := strings.Split(ansi.Strip(p.View(60, 40)), "\n")
	first := -1 // the list's first line at this width
	for i, l := range full {
		if rankRE.MatchString(l) {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no hit on a tall screen")
	}
	for h := first + 1; h <= first+4; h++ {
		view := ansi.Strip(p.View(60, h))
		if !strings.Contains(view, "▸   4 ") {
			t.Errorf("a list of %d lines does not show the selected hit 4:\n%s", h-first, view)
		}
	}
}
