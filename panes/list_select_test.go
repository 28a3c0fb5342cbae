package panes

import "testing"

// Follow puts the cursor on the new position of its item and moves the top
// by as much, so the selected row keeps its screen line; at the ends the
// top is clamped, and an empty list is left alone.
func TestListFollowKeepsTheRowsLine(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		n, sel, top           int // before: the list scrolled, then reloaded
		grown, to             int // the list's new length, the item's new index
		wantSel, wantScreenAt int // cursor, and its line in a window of 5
	}{
		{"two arrive above", 20, 10, 8, 22, 12, 12, 2},
		{"two leave above", 20, 10, 8, 18, 8, 8, 2},
		{"arrivals below only", 20, 10, 8, 25, 10, 10, 2},
		{"the top cannot go above the first", 20, 3, 2, 18, 1, 1, 1},
		{"the last page stays full", 20, 17, 15, 12, 11, 11, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			l := List{Len: func() int { return n }}
			l.Select(tc.sel)
			l.top = tc.top // as an earlier frame left it
			if got := l.Scroll(5); got != tc.top {
				t.Fatalf("setup: top %d, want %d", got, tc.top)
			}
			n = tc.grown
			l.Follow(tc.to)
			top := l.Scroll(5)
			if l.Cursor() != tc.wantSel || l.Cursor()-top != tc.wantScreenAt {
				t.Fatalf("cursor %d at line %d, want %d at line %d", l.Cursor(), l.Cursor()-top, tc.wantSel, tc.wantScreenAt)
			}
		})
	}
	var empty List
	empty.Follow(3)
	if empty.Cursor() != 0 || empty.Top() != 0 {
		t.Fatal("Follow moved an empty list")
	}
}
