package panes

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestKeymapDispatchesEnabledRowsAndExplainsDisabledOnes(t *testing.T) {
	ran := ""
	pending := false
	empty := true
	km := Keymap{
		{Binding: Bind("a", "approve", "a"), Footer: true, Everyday: true,
			Do: func(tea.KeyPressMsg) tea.Cmd { ran += "a"; return nil },
			Disabled: func() string {
				if !pending {
					return "nothing is pending"
				}
				return ""
			}},
		{Binding: Bind("enter", "open", "enter"), Footer: true, When: func() bool { return !empty },
			Do: func(tea.KeyPressMsg) tea.Cmd { ran += "o"; return nil }},
		{Binding: Bind("enter", "edit", "enter"), When: func() bool { return empty },
			Do: func(tea.KeyPressMsg) tea.Cmd { ran += "e"; return nil }},
		{Binding: Bind("a/x", "never reached for a", "a", "x"), Do: func(tea.KeyPressMsg) tea.Cmd { ran += "x"; return nil }},
	}
	cmd, ok := km.Dispatch(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if !ok || cmd == nil || ran != "" {
		t.Fatalf("disabled a: ok=%v ran=%q", ok, ran)
	}
	if msg, _ := cmd().(KeyDisabledMsg); msg.Key != "a" || msg.Reason != "nothing is pending" {
		t.Fatalf("disabled a said %+v", msg)
	}
	if f := km.Footer(); len(f) != 0 {
		t.Fatalf("footer offers %d disabled or out-of-state keys", len(f))
	}
	if h := km.Help(); len(h) != 3 || h[0].Help().Desc != "approve (off)" {
		t.Fatalf("help rows: %+v", h)
	}
	km.Dispatch(tea.KeyPressMsg{Code: tea.KeyEnter})
	pending, empty = true, false
	km.Dispatch(tea.KeyPressMsg{Code: 'a', Text: "a"})
	km.Dispatch(tea.KeyPressMsg{Code: tea.KeyEnter})
	km.Dispatch(tea.KeyPressMsg{Code: 'x', Text: "x"})
	if ran != "eaox" {
		t.Fatalf("ran %q, want eaox", ran)
	}
	if _, ok := km.Dispatch(tea.KeyPressMsg{Code: 'z', Text: "z"}); ok {
		t.Fatal("an unbound key matched")
	}
	if f := km.Footer(); len(f) != 2 {
		t.Fatalf("footer: %d rows, want a and enter", len(f))
	}
	md := KeysMarkdown([]KeySection{{Title: "Approvals", Rows: km}})
	if want := "| where | keys |\n|---|---|\n| Approvals | `a` approve |\n"; md != want {
		t.Fatalf("markdown:\n%s", md)
	}
	if strings.Contains(md, "never") {
		t.Fatal("a non-everyday row reached the table")
	}
}
