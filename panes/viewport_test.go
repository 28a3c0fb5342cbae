package panes

import (
	"strconv"
	"testing"

	"github.com/vigil-dev/vigil/panes/panetest"
)

func TestViewportScrollsAndClamps(t *testing.T) {
	lines := make([]string, 10)
	for i := range lines {
		lines[i] = strconv.Itoa(i)
	}
	var v Viewport
	if w := v.Window(lines, 4); w[0] != "0" || len(w) != 4 {
		t.Fatalf("first window %v", w)
	}
	v.Scroll(3)
	v.Wheel(panetest.WheelDown(0, 0))
	if w := v.Window(lines, 4); w[0] != "6" || w[3] != "9" {
		t.Fatalf("scrolled past the end: %v", w)
	}
	v.Bottom()
	if w := v.Window(lines, 4); w[0] != "6" || v.Offset() != 6 {
		t.Fatalf("bottom: %v", w)
	}
	v.Scroll(-100)
	if v.Offset() != 0 {
		t.Fatal("scrolled above the top")
	}
	if w := v.Window(lines[:2], 4); len(w) != 2 {
		t.Fatalf("short text: %v", w)
	}
}

func TestViewportCentresOnALine(t *testing.T) {
	for _, tc := range []struct {
		name        string
		n, h, line  int
		scroll      int
		wantFirst   int
		wantVisible bool
	}{
		{"a line in the middle of the text", 100, 9, 50, 0, 46, true},
		{"near the top: the text's first line stays first", 100, 9, 2, 0, 0, true},
		{"near the end: no blank rows after the last line", 100, 9, 98, 0, 91, true},
		{"scrolled before drawing: relative to the centre", 100, 9, 50, 3, 49, true},
		{"a short text shows whole", 5, 9, 3, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v Viewport
			v.CenterOn(tc.line)
			v.Scroll(tc.scroll)
			first, end := v.Range(tc.n, tc.h)
			if first != tc.wantFirst {
				t.Fatalf("first %d, want %d", first, tc.wantFirst)
			}
			if vis := tc.line >= first && tc.line < end; vis != tc.wantVisible {
				t.Fatalf("line %d visible %v in [%d,%d)", tc.line, vis, first, end)
			}
			// later frames keep the offset; scrolling moves it
			v.Scroll(1)
			if f, _ := v.Range(tc.n, tc.h); f != min(tc.wantFirst+1, max(tc.n-tc.h, 0)) {
				t.Fatalf("after one more line: first %d", f)
			}
		})
	}
}

func TestViewportPagesByItsWindow(t *testing.T) {
	var v Viewport
	v.Range(100, 10)
	v.Page(1)
	if f, _ := v.Range(100, 10); f != 9 {
		t.Fatalf("page down: first %d, want 9", f)
	}
	v.Page(-1)
	if f, _ := v.Range(100, 10); f != 0 {
		t.Fatalf("page up: first %d, want 0", f)
	}
}

// A centred window stays around its line when the height changes, and
// scrolling past an end leaves no slack to scroll back through.
func TestViewportCentreSurvivesAResize(t *testing.T) {
	var v Viewport
	v.CenterOn(50)
	v.Range(100, 30)
	v.Scroll(2)
	if f, e := v.Range(100, 8); f != 48 || 50 >= e {
		t.Fatalf("after shrinking to 8 rows: [%d,%d), line 50 out of view", f, e)
	}
	v.CenterOn(1)
	v.Scroll(-10) // above the top: clamped
	v.Range(100, 9)
	v.Scroll(1)
	if f, _ := v.Range(100, 9); f != 1 {
		t.Fatalf("one line down after scrolling past the top: first %d, want 1", f)
	}
	v.Top()
	v.Range(100, 9)
	v.Scroll(3)
	if f, _ := v.Range(100, 20); f != 3 {
		t.Fatalf("Top ends the centring: first %d, want 3", f)
	}
}
