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
