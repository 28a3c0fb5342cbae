package auditpane

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/panes/panetest"
	"github.com/vigil-dev/vigil/ui"
)

// A click on a table row, through the root at 80×24 and 120×36, selects
// the entry drawn on it, at the top, in the middle and at the end of a
// log longer than the screen; a click on the column header selects nothing.
func TestClickSelectsTheEntryUnderThePointer(t *testing.T) {
	path, _ := liveLog(t, 300)
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		w, h := size[0], size[1]
		p := loadedPane(t, path)
		t.Cleanup(p.Close)
		m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark", JobControl: func() bool { return true }})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		screen := func() []string { return strings.Split(ansi.Strip(m.Render()), "\n") }
		for _, start := range []string{"g", "pgdown", "G"} {
			press(p, start)
			clicked := 0
			for y := 1; y < h-1; y++ {
				before := screen()
				if strings.Contains(before[y], "TIME") {
					c := p.table.list.Cursor()
					m.Update(panetest.Click(3, y))
					if p.table.list.Cursor() != c {
						t.Fatalf("%d×%d: a click on the column header moved the cursor", w, h)
					}
					continue
				}
				if !strings.HasPrefix(strings.TrimSpace(before[y]), "01-01 ") {
					continue
				}
				m.Update(panetest.Click(3, y))
				f := strings.Fields(before[y])
				if got, want := timeOf(p.table.list.Cursor()), f[0]+" "+f[1]; got != want {
					t.Fatalf("%d×%d: a click on line %d (%s) selected the entry of %s", w, h, y, want, got)
				}
				clicked++
			}
			if clicked < h-6 {
				t.Fatalf("%d×%d after %s: only %d rows clicked", w, h, start, clicked)
			}
		}
	}
}
