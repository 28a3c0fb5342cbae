package memorypane

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/panes/panetest"
	"github.com/vigil-dev/vigil/ui"
)

// A click on any line of a hit (its header or its text), through the root
// at 80×24 and 120×36, selects that hit, also when the list is scrolled.
func TestClickSelectsTheHitUnderThePointer(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		w, h := size[0], size[1]
		p := searched(t, demoStore(t), "python")
		press(t, p, "<esc>")
		m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark", JobControl: func() bool { return true }})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		screen := func() []string { return strings.Split(ansi.Strip(m.Render()), "\n") }
		clicked := 0
		for _, scrolled := range []bool{false, true} {
			if scrolled {
				press(t, p, "G")
			}
			for y := 1; y < h-1; y++ {
				before := screen()
				rank := ""
				for up := y; up >= 1 && rank == ""; up-- {
					if strings.HasPrefix(strings.TrimSpace(before[up]), "↓") || strings.HasPrefix(before[up], "─") {
						break
					}
					if mm := rankRE.FindStringSubmatch(before[up]); mm != nil {
						rank = mm[1]
					}
				}
				if rank == "" || strings.HasPrefix(strings.TrimSpace(before[y]), "↓") {
					continue
				}
				m.Update(panetest.Click(3, y))
				sel := ""
				for _, l := range screen() {
					if strings.HasPrefix(l, "▸") {
						sel = rankRE.FindStringSubmatch(l)[1]
					}
				}
				if sel != rank {
					t.Fatalf("%d×%d: a click on line %d (%q, hit %s) selected hit %q", w, h, y, before[y], rank, sel)
				}
				clicked++
			}
		}
		if clicked < 10 {
			t.Fatalf("%d×%d: only %d lines clicked", w, h, clicked)
		}
	}
}
