package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// What alt+m says fits an 80-column footer whole, both ways: a notice
// cut off with "…" would hide how to switch back.
func TestMouseNoticesFitEightyColumns(t *testing.T) {
	m := mouseModel(t, false)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for range 2 {
		m.Update(panetest.Key("alt+m"))
		if f := strings.TrimRight(footer(m), " "); strings.HasSuffix(f, "…") || !strings.Contains(f, "alt+m") {
			t.Fatalf("the notice is cut at 80 columns: %q", f)
		}
	}
}
