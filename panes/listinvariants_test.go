package panes

import (
	"math/rand/v2"
	"testing"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// After any sequence of moves, pages, wheel notches, clicks, growth and
// shrinking, at any window height from 1 up: the selected item (when one
// is selectable) is on a selectable item and its first line is drawn; the
// click map names, line by line, the item drawn there; and no line is
// left blank below the last item while items above the top would fit.
func TestListInvariantsUnderRandomUse(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	for round := range 400 {
		g := &grouped{tall: map[int]int{}}
		n := rng.IntN(12)
		for i := range n {
			g.rows = append(g.rows, rng.IntN(4) == 0)
			if rng.IntN(3) == 0 {
				g.tall[i] = 1 + rng.IntN(5)
			}
		}
		l := g.list()
		for step := range 30 {
			h := 1 + rng.IntN(8)
			switch rng.IntN(9) {
			case 0:
				l.Move(rng.IntN(7) - 3)
			case 1:
				l.PageDown()
			case 2:
				l.PageUp()
			case 3:
				l.First()
			case 4:
				l.Last()
			case 5:
				l.Wheel(panetest.WheelDown(0, 0))
			case 6:
				l.Click(panetest.Click(1, rng.IntN(h+2)))
			case 7: // grows
				g.rows = append(g.rows, rng.IntN(4) == 0)
			case 8: // shrinks (a refilter)
				if len(g.rows) > 0 {
					g.rows = g.rows[:rng.IntN(len(g.rows))]
				}
			}
			l.Map.Reset(0, 0, 10)
			l.Scroll(h)
			var drawn []int // the item on each line
			lines, _ := l.Draw(h, func(i int, _ bool) []string {
				out := make([]string, l.height(i))
				for range out {
					drawn = append(drawn, i)
				}
				return out
			})
			drawn = drawn[:len(lines)]
			if len(lines) > h {
				t.Fatalf("round %d step %d: %d lines in a window of %d", round, step, len(lines), h)
			}
			for y, item := range drawn {
				if got, ok := l.Map.At(1, y); !ok || got != item {
					t.Fatalf("round %d step %d: line %d draws item %d, the map says %d (%v)", round, step, y, item, got, ok)
				}
			}
			if _, ok := l.Map.At(1, len(lines)); ok {
				t.Fatalf("round %d step %d: the map names a line below the list", round, step)
			}
			anySel := false
			for i := range g.rows {
				anySel = anySel || !g.rows[i]
			}
			if !anySel {
				continue
			}
			sel := l.Cursor()
			if g.rows[sel] {
				t.Fatalf("round %d step %d: the cursor rests on header %d", round, step, sel)
			}
			shown := false
			for _, item := range drawn {
				shown = shown || item == sel
			}
			if !shown {
				t.Fatalf("round %d step %d: selected %d not drawn (top %d, window %d, rows %v tall %v)", round, step, sel, l.Top(), h, g.rows, g.tall)
			}
			if len(lines) < h && l.Top() > 0 && l.height(l.Top()-1) <= h-len(lines) {
				t.Fatalf("round %d step %d: %d blank lines below the last item while item %d above would fit", round, step, h-len(lines), l.Top()-1)
			}
		}
	}
}
