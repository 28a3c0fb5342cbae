package ui_test

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-dev/vigil/themes"
)

// At 80×24 the overlay over the Search pane (its longest key list) shows
// every global key: they come first, and the pane's flow below.
func TestGoldenHelpOverlay80x24(t *testing.T) {
	m := switchModel(t)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, '?', "?", 0)
	out := ansi.Strip(m.Render())
	for _, k := range []string{"1–2", "tab", "shift+tab", "?", "ctrl+z", "q", "alt+1–2", "ctrl+c"} {
		if !strings.Contains(out, "  "+k+" ") {
			t.Errorf("global key %q not on the 80×24 overlay", k)
		}
	}
	golden.RequireEqual(t, []byte(out))
	// taller than the screen: it scrolls, and the hint says how
	if !strings.Contains(out, "↑/↓ scroll") {
		t.Fatalf("no scroll hint on an overlay taller than 24 lines:\n%s", out)
	}
	press(m, tea.KeyDown, "", 0)
	if scrolled := ansi.Strip(m.Render()); scrolled == out {
		t.Fatal("↓ did not scroll the overlay")
	}
	press(m, 'x', "x", 0)
	if strings.Contains(ansi.Strip(m.Render()), "scroll") {
		t.Fatal("another key did not close the overlay")
	}
}

func TestGoldenHelpOverlay120x36(t *testing.T) {
	m := switchModel(t)
	press(m, '?', "?", 0)
	golden.RequireEqual(t, []byte(ansi.Strip(m.Render())))
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
