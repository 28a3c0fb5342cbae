package ui_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// At 80×24 the overlay over the Search pane (its longest key list) shows
// every global key: they come first, and the pane's flow below.
func TestHelpOverlayAt80x24(t *testing.T) {
	m := switchModel(t)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, '?', "?", 0)
	out := ansi.Strip(m.Render())
	for _, k := range []string{"1–2", "tab", "shift+tab", "?", "ctrl+z", "q", "alt+1–2", "alt+m", "ctrl+c"} {
		if !strings.Contains(out, "  "+k+" ") {
			t.Errorf("global key %q not on the 80×24 overlay", k)
		}
	}
	// taller than the screen: it scrolls, and the hint says how
	if !strings.Contains(out, "↑/↓ scroll") {
		t.Fatalf("no scroll hint on an overlay taller than 24 lines:\n%s", out)
	}
	press(m, tea.KeyDown, "", 0)
	scrolled := ansi.Strip(m.Render())
	if scrolled == out {
		t.Fatal("↓ did not scroll the overlay")
	}
	// the wheel scrolls it too (not the pane beneath), and back
	m.Update(tea.MouseWheelMsg{X: 10, Y: 10, Button: tea.MouseWheelDown})
	if ansi.Strip(m.Render()) == scrolled {
		t.Fatal("the wheel did not scroll the overlay")
	}
	m.Update(tea.MouseWheelMsg{X: 10, Y: 10, Button: tea.MouseWheelUp})
	if ansi.Strip(m.Render()) != scrolled {
		t.Fatal("the wheel up did not come back")
	}
	press(m, 'x', "x", 0)
	if strings.Contains(ansi.Strip(m.Render()), "scroll") {
		t.Fatal("another key did not close the overlay")
	}
}

// The overlay over the Search pane in the real program (teatest) at the
// two sizes the issue names.
func TestGoldenHelpOverlaySizes(t *testing.T) {
	for _, sz := range [][2]int{{120, 36}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := switchModel(t)
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(sz[0], sz[1]),
				teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("/ to edit")) },
				teatest.WithDuration(10*time.Second))
			tm.Send(tea.KeyPressMsg{Code: '?', Text: "?"})
			teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("Keys")) },
				teatest.WithDuration(10*time.Second))
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			out := ansi.Strip(tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model).Render())
			if !strings.Contains(out, "Keys — Search") || !strings.Contains(out, "ctrl+c") {
				t.Fatalf("overlay:\n%s", out)
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}

// A key whose row is disabled does nothing and says why in the footer
// until the next key (here ctrl+z under a parent without job control,
// which would otherwise leave a frozen screen).
func TestDisabledKeySaysWhy(t *testing.T) {
	m := themedModel(t, "dark", false)
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl})
	if cmd == nil {
		t.Fatal("no reason reported")
	}
	msg := cmd()
	if _, suspend := msg.(tea.SuspendMsg); suspend {
		t.Fatal("ctrl+z suspended without job control")
	}
	m.Update(msg)
	status := lastLine(ansi.Strip(m.Render()))
	if !strings.Contains(status, "ctrl+z: no job control") {
		t.Fatalf("footer %q does not say why", status)
	}
	press(m, 'j', "j", 0)
	if strings.Contains(lastLine(ansi.Strip(m.Render())), "job control") {
		t.Fatal("the reason outlived the next key")
	}
	m = themedModel(t, "dark", true)
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl}); cmd == nil {
		t.Fatal("ctrl+z with job control did nothing")
	} else if _, ok := cmd().(tea.SuspendMsg); !ok {
		t.Fatal("ctrl+z with job control did not suspend")
	}
}

func lastLine(s string) string { return s[strings.LastIndexByte(s, '\n')+1:] }

// Colour snapshots, one per theme, beside the ANSI-stripped goldens: a
// style that loses its colour (or a theme that swaps two) changes these.
func TestGoldenColours(t *testing.T) {
	for _, theme := range themes.Names {
		t.Run(theme, func(t *testing.T) {
			m := themedModel(t, theme, true)
			m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
			out := m.Render()
			if out == ansi.Strip(out) {
				t.Fatal("no colour at all")
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}
