package ui_test

import (
	"bytes"
	"testing"

	"github.com/vigil-dev/vigil/ui"
)

// The exact XTWINOPS bytes: push (22;0) before the program, pop (23;0)
// after it.
func TestTitleSavedAndRestored(t *testing.T) {
	var b bytes.Buffer
	if err := ui.SaveTitle(&b); err != nil {
		t.Fatal(err)
	}
	if err := ui.RestoreTitle(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "\x1b[22;0t\x1b[23;0t" {
		t.Fatalf("wrote %q", got)
	}
}
