package memorypane

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// A click on any line of a hit (its header or its preview) selects it; the
// wheel moves the selection.
func TestClickAndWheelOnHits(t *testing.T) {
	st := demoStore(t)
	p := searched(t, st, "python threads")
	if len(p.shown) < 2 {
		t.Fatalf("want two hits, got %d", len(p.shown))
	}
	view := strings.Split(ansi.Strip(p.View(120, 40)), "\n")
	y := -1
	for i, l := range view {
		if strings.Contains(l, "  2 ") && strings.Contains(l, p.out.Hits[p.shown[1]].CreatedAt.UTC().Format("2006-01-02")) {
			y = i
		}
	}
	if y < 0 {
		t.Fatalf("second hit not drawn:\n%s", strings.Join(view, "\n"))
	}
	p.Update(panetest.Click(40, y+1)) // its preview line
	if p.list.Cursor() != 1 || p.mode != modeList {
		t.Fatalf("click on the second hit's preview: sel %d mode %d", p.list.Cursor(), p.mode)
	}
	p.Update(panetest.Click(40, y-1)) // the first hit's last line
	if p.list.Cursor() != 0 {
		t.Fatalf("click on the first hit: sel %d", p.list.Cursor())
	}
	p.Update(panetest.WheelDown(40, y))
	if p.list.Cursor() != min(3, len(p.shown)-1) {
		t.Fatalf("wheel down: sel %d", p.list.Cursor())
	}
}
