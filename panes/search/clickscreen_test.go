package searchpane

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/panes/panetest"
	"github.com/vigil-dev/vigil/ui"
)

// clickEveryRow clicks, through the root model at w×h, on every screen
// line of the results, and checks that the line clicked is the one then
// drawn selected (a header: the line under it), with the text unchanged.
func clickEveryRow(t *testing.T, m *ui.Model, p *Pane, w, h, x int) {
	t.Helper()
	screen := func() []string { return strings.Split(ansi.Strip(m.Render()), "\n") }
	clicked := 0
	for y := 1; y < h-1; y++ {
		before := screen()
		if !rowLine(before[y], x) {
			continue
		}
		m.Update(panetest.Click(x, y))
		after := screen()
		want := y
		if isHeader(before[y]) {
			want = y + 1
		}
		if !strings.Contains(after[want][:min(len(after[want]), 8)], "›") {
			t.Fatalf("%d×%d: clicked line %d %q; selected now:\n%s", w, h, y, before[y], strings.Join(after, "\n"))
		}
		clicked++
	}
	if clicked < 5 {
		t.Fatalf("%d×%d: only %d rows clicked", w, h, clicked)
	}
}

// rowLine reports a results line (a hit or a file header) at column x.
func rowLine(l string, x int) bool {
	s := strings.TrimSpace(l)
	return len(l) > x && (isHeader(l) || strings.Contains(s, "needle")) && !strings.HasPrefix(s, "❯")
}

func isHeader(l string) bool {
	s := strings.TrimSpace(l)
	return strings.HasSuffix(strings.Fields(s + " x")[0], ".go")
}

// A click lands on the row drawn under the pointer at 80×24 (preview
// below) and 120×36 (preview beside), through the root's offsets.
func TestClickSelectsTheRowUnderThePointer(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		for _, preview := range []bool{false, true} {
			p := New(fakeOptions(t), styles())
			t.Cleanup(p.Close)
			m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark", JobControl: func() bool { return true }})
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			runTyped(t, p, "needle")
			if preview {
				drain(t, p, p.Update(panetest.Key("p")))
			}
			clickEveryRow(t, m, p, size[0], size[1], 4)
			// scrolled: the last rows, then every row again
			drain(t, p, p.Update(panetest.Key("G")))
			clickEveryRow(t, m, p, size[0], size[1], 4)
		}
	}
}

// The wheel scrolls what is under the pointer, through the root's
// offsets: over the list's last line the list, over the preview's first
// and last lines the preview (at 80×24 the preview is below the list, at
// 120×36 beside it).
func TestWheelScrollsWhatIsUnderThePointer(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		w, h := size[0], size[1]
		files := map[string]string{"long.go": strings.Repeat("needle\n", 200)}
		o := fakeOptions(t)
		write(t, o.Search.Root, "long.go", files["long.go"])
		o.Engine = fakeEngine(files)
		p := New(o, styles())
		t.Cleanup(p.Close)
		m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark", JobControl: func() bool { return true }})
		m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		runTyped(t, p, "needle")
		drain(t, p, p.Update(panetest.Key("p")))
		drain(t, p, p.Update(panetest.Key("G")))
		m.Render()
		a := p.preview.area
		if a.h == 0 {
			t.Fatalf("%d×%d: no preview drawn", w, h)
		}
		// screen rows are pane rows + 1 (the tab bar)
		prevFirst, prevLast, x := a.y+1, a.y+a.h, a.x+2
		listLast := a.y // below the list: its last line is the one above the preview
		if a.x > 0 {
			listLast = a.y + a.h // beside: the same rows, left of it
		}
		for _, tc := range []struct {
			name    string
			x, y    int
			preview bool
		}{
			{"the preview's first line", x, prevFirst, true},
			{"the preview's last line", x, prevLast, true},
			{"the list's last line", 3, listLast, false},
		} {
			p.preview.view.CenterOn(100)
			m.Render()
			before, cur := p.preview.view.Offset(), p.results.list.Cursor()
			m.Update(panetest.WheelUp(tc.x, tc.y))
			m.Render()
			// (a moved cursor re-centres the preview: only the list is asked about then)
			moved := p.preview.view.Offset() != before
			if tc.preview && !moved || (p.results.list.Cursor() != cur) == tc.preview {
				t.Fatalf("%d×%d: the wheel over %s (row %d) scrolled the preview %v, moved the list %v",
					w, h, tc.name, tc.y, moved, p.results.list.Cursor() != cur)
			}
		}
	}
}

// A frame with no room for the list (a tiny pane, or the composer's
// lines filling it) takes the list's rows off the click map: a click
// where a row used to be, now the status line, selects nothing hidden.
func TestClickWhereTheListNoLongerIs(t *testing.T) {
	p := New(fakeOptions(t), styles())
	t.Cleanup(p.Close)
	runTyped(t, p, "needle")
	for range 5 {
		p.Update(panetest.Key("j"))
	}
	p.View(80, 12)
	sel := p.results.list.Cursor()
	p.View(80, 3) // the pattern, the chips, the status line: no list
	for y := range 3 {
		p.Update(panetest.Click(5, y))
		if p.results.list.Cursor() != sel {
			t.Fatalf("a click on line %d of a frame without the list moved the cursor from %d to %d", y, sel, p.results.list.Cursor())
		}
	}
	// nor where the document viewer is drawn
	p.View(80, 12)
	p.viewer.loading = true
	p.View(80, 12)
	p.viewer.loading = false
	p.Update(panetest.Click(5, 4))
	if p.results.list.Cursor() != sel {
		t.Fatal("a click on the viewer's frame selected a row of the list under it")
	}
}
