package memorypane

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

var rankRE = regexp.MustCompile(`^[ ▸] +(\d+) `)

// ranksOnScreen is the ranks of the hits whose header lines are drawn.
func ranksOnScreen(p *Pane, w, h int) []int {
	var out []int
	for _, l := range strings.Split(ansi.Strip(p.View(w, h)), "\n") {
		if m := rankRE.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	return out
}

// pgdn moves a screen of lines, whatever each hit's height: the hit that
// was last on screen is near the top of the next page, and pgup comes back.
func TestPageMovesAScreenOfHits(t *testing.T) {
	p := searched(t, demoStore(t), "python")
	if len(p.shown) < 8 {
		t.Fatalf("want a list longer than a screen, got %d hits", len(p.shown))
	}
	before := ranksOnScreen(p, 80, 20)
	press(t, p, "<pgdn>")
	after := ranksOnScreen(p, 80, 20)
	sel := p.list.Cursor()
	if sel < 2 || sel >= len(p.shown) {
		t.Fatalf("pgdn moved the cursor to %d (screen had ranks %v)", sel, before)
	}
	if want := before[len(before)-1]; after[0] > want {
		t.Fatalf("pgdn skipped hits: the old page ended at %d, the new one starts at %d", want, after[0])
	}
	found := false
	for _, r := range after {
		found = found || r == p.shown[sel]+1
	}
	if !found {
		t.Fatalf("the selected hit %d is not on screen: %v", p.shown[sel]+1, after)
	}
	press(t, p, "<pgup>")
	if p.list.Cursor() != 0 {
		t.Fatalf("pgup came back to %d", p.list.Cursor())
	}
}
