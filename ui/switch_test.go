package ui_test

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	"github.com/vigil-dev/vigil/panes/panetest"
	searchpane "github.com/vigil-dev/vigil/panes/search"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

func switchModel(t *testing.T) *ui.Model { return themedModel(t, "dark", true) }

// themedModel is the Search and Audit panes under theme at 120×36.
func themedModel(t *testing.T, theme string, jobControl bool) *ui.Model {
	t.Helper()
	pal, _ := themes.Palettes(theme)
	st := themes.New(pal)
	sp := searchpane.New(searchpane.Options{Search: search.DefaultOptions(t.TempDir())}, st)
	t.Cleanup(sp.Close)
	ap := auditpane.New(writeLog(t), st)
	t.Cleanup(ap.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{sp, ap}, Theme: theme, JobControl: func() bool { return jobControl }})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	return m
}

func press(m *ui.Model, code rune, text string, mod tea.KeyMod) {
	m.Update(tea.KeyPressMsg{Code: code, Text: text, Mod: mod})
}

// On first launch the digits, tab and ? are the root's; inside a text field
// only alt+digit switches panes, and the digit is typed.
func TestPaneSwitchingOnFirstLaunch(t *testing.T) {
	m := switchModel(t)
	press(m, '2', "2", 0)
	if m.Active().ID() != "audit" {
		t.Fatalf("2 on first launch went to %q", m.Active().ID())
	}
	press(m, tea.KeyTab, "", 0)
	if m.Active().ID() != "search" {
		t.Fatalf("tab went to %q", m.Active().ID())
	}
	press(m, tea.KeyTab, "", tea.ModShift)
	if m.Active().ID() != "audit" {
		t.Fatalf("shift+tab went to %q", m.Active().ID())
	}
	press(m, '1', "1", 0)
	press(m, '/', "/", 0) // into the pattern field
	if !m.Active().Capturing() {
		t.Fatal("/ did not focus the field")
	}
	press(m, '2', "2", 0) // typed, not a switch
	if m.Active().ID() != "search" {
		t.Fatal("a digit typed in a field switched panes")
	}
	press(m, '2', "", tea.ModAlt)
	if m.Active().ID() != "audit" {
		t.Fatalf("alt+2 in a field went to %q", m.Active().ID())
	}
	press(m, '1', "", tea.ModAlt)
	if got := m.Active().(*searchpane.Pane).Snapshot(); m.Active().ID() != "search" || got.Err != "" {
		t.Fatalf("alt+1 back: %q %+v", m.Active().ID(), got)
	}
}

// A click on a tab focuses its pane; a click in the body reaches the pane
// (here the Search pane's empty list: nothing changes, nothing breaks).
func TestClickOnATab(t *testing.T) {
	m := switchModel(t)
	line := ansi.Strip(strings.Split(m.Render(), "\n")[0])
	x := strings.Index(line, "2 Audit")
	if x < 0 {
		t.Fatalf("tab bar %q", line)
	}
	x = ansi.StringWidth(line[:x]) + 2
	m.Update(panetest.Click(x, 0))
	if m.Active().ID() != "audit" {
		t.Fatalf("click on the Audit tab went to %q", m.Active().ID())
	}
	m.Update(panetest.Click(ansi.StringWidth(line[:strings.Index(line, "1 Search")]), 0))
	if m.Active().ID() != "search" {
		t.Fatalf("click on the Search tab went to %q", m.Active().ID())
	}
	m.Update(panetest.Click(1, 0)) // the brand: no tab
	m.Update(panetest.Click(5, 10))
	if m.Active().ID() != "search" {
		t.Fatal("a click off the tabs switched panes")
	}
}
