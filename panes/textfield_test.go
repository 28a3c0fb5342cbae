package panes

import (
	"strings"
	"testing"
)

// A pasted bidi override or zero-width space is shown as its escape: the
// person sees what the field holds, in the order it holds it.
func TestTextFieldShowsInvisibleCharacters(t *testing.T) {
	var f TextField
	f.Insert("ab\u202ecd\u200be")
	before, at, after := f.Window(40)
	got := before + at + after
	if strings.ContainsAny(got, "\u202e\u200b") || !strings.Contains(got, `ab\u202ecd\u200be`) {
		t.Fatalf("window %q", got)
	}
	// narrow windows keep the cursor visible and never split an escape
	for w := 1; w <= 20; w++ {
		b, a, af := f.Window(w)
		if a != " " {
			t.Fatalf("width %d: cursor cell %q", w, a)
		}
		if n := len(b + af); n > w {
			t.Fatalf("width %d: %d cells shown", w, n)
		}
		if strings.Count(b, `\`) != strings.Count(b, `\u`) {
			t.Fatalf("width %d: split escape %q", w, b)
		}
	}
}
