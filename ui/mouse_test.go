package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	"github.com/vigil-dev/vigil/panes/panetest"
	"github.com/vigil-dev/vigil/themes"
)

func mouseModel(t *testing.T, off bool) *Model {
	t.Helper()
	pal, _ := themes.Palettes("dark")
	ap := auditpane.New(t.TempDir()+"/audit.log", themes.New(pal))
	t.Cleanup(ap.Close)
	m := New(Options{Panes: []panes.Pane{ap}, Theme: "dark", JobControl: func() bool { return true }, MouseOff: off})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
	return m
}

func footer(m *Model) string {
	lines := strings.Split(ansi.Strip(m.Render()), "\n")
	return lines[len(lines)-1]
}

// alt+m switches mouse tracking, in a field too, and says what the mouse
// now does; the start state comes from the options ([ui] mouse).
func TestMouseSwitch(t *testing.T) {
	for _, tc := range []struct {
		name string
		off  bool
	}{{"config on", false}, {"config off", true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := mouseModel(t, tc.off)
			want := func(on bool) {
				t.Helper()
				mode := tea.MouseModeNone
				if on {
					mode = tea.MouseModeCellMotion
				}
				if got := m.View().MouseMode; got != mode || m.Mouse() != on {
					t.Fatalf("mouse mode %v, want %v", got, mode)
				}
			}
			want(!tc.off)
			if hint := strings.Contains(footer(m), "alt+m mouse on"); hint != tc.off {
				t.Fatalf("footer %q: the mouse-on hint shown %v while tracking is off %v", footer(m), hint, tc.off)
			}
			_, cmd := m.Update(panetest.Key("alt+m"))
			want(tc.off)
			if tc.off {
				if !strings.HasPrefix(footer(m), "mouse on: clicks and the wheel act") {
					t.Fatalf("footer after turning it on: %q", footer(m))
				}
			} else if !strings.HasPrefix(footer(m), "mouse off: the terminal selects text; alt+m turns clicks back on") {
				t.Fatalf("footer after turning it off: %q", footer(m))
			}
			if cmd == nil {
				t.Fatal("the notice has no timer to clear it")
			}
			// the notice goes after a while; a newer notice outlives an older timer
			stale := m.noticeGen
			m.Update(panes.KeyDisabledMsg{Key: "x", Reason: "no filter set"})
			m.Update(noticeExpiredMsg{gen: stale})
			if !strings.HasPrefix(footer(m), "x: no filter set") {
				t.Fatalf("an older timer cleared a newer notice: %q", footer(m))
			}
			m.Update(noticeExpiredMsg{gen: m.noticeGen})
			if strings.Contains(footer(m), "no filter set") {
				t.Fatalf("the notice outlived its timer: %q", footer(m))
			}
			// in a text field (the audit filter has the keyboard) alt+m
			// still switches and types nothing
			m.Update(panetest.Key("/"))
			if !m.Active().Capturing() {
				t.Fatal("/ did not open the filter field")
			}
			m.Update(panetest.Key("alt+m"))
			want(!tc.off)
			if strings.Contains(ansi.Strip(m.Render()), "/m") {
				t.Fatal("alt+m was typed into the filter")
			}
		})
	}
}
