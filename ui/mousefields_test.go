package ui_test

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// alt+m in the Search pattern field switches the mouse and types nothing:
// what was typed around it is the pattern.
func TestMouseSwitchInTheSearchField(t *testing.T) {
	m := switchModel(t)
	m.Update(panetest.Key("/"))
	for _, k := range panetest.Typed("ab") {
		m.Update(k)
	}
	m.Update(panetest.Key("alt+m"))
	m.Update(panetest.Typed("c")[0])
	if m.Mouse() || m.View().MouseMode != tea.MouseModeNone {
		t.Fatal("alt+m in the field did not turn the mouse off")
	}
	if line := strings.Split(ansi.Strip(m.Render()), "\n")[1]; !strings.HasPrefix(line, "❯ abc") {
		t.Fatalf("the pattern field reads %q, want abc", line)
	}
}
