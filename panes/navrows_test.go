package panes

import (
	"reflect"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func press(km Keymap, code rune, text string) {
	km.Dispatch(tea.KeyPressMsg{Code: code, Text: text})
}

func helpKeys(bs []key.Binding) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Help().Key+" "+b.Help().Desc)
	}
	return out
}

func TestListNavMovesTheCursorAndRunsAfter(t *testing.T) {
	l := &List{Len: func() int { return 100 }}
	l.Scroll(10)
	afters := 0
	km := ListNav(ListMoves(l, func() tea.Cmd { afters++; return nil })).Rows()
	want := []string{"↑/k up", "↓/j down", "pgup page up", "pgdn page down", "g first", "G last"}
	if got := helpKeys(km.Help()); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	for _, r := range km {
		if r.Group != GroupNav || r.Footer || r.Everyday {
			t.Fatalf("row %q: group %d footer %v everyday %v", r.Binding.Help().Key, r.Group, r.Footer, r.Everyday)
		}
	}
	steps := []struct {
		code rune
		text string
		at   int
	}{{'j', "j", 1}, {tea.KeyDown, "", 2}, {'k', "k", 1}, {'G', "G", 99}, {'g', "g", 0},
		{'d', "", 9}, {tea.KeyPgUp, "", 0}}
	for _, s := range steps {
		msg := tea.KeyPressMsg{Code: s.code, Text: s.text}
		if s.code == 'd' {
			msg = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
		}
		if _, ok := km.Dispatch(msg); !ok {
			t.Fatalf("%s matched no row", msg)
		}
		if l.Cursor() != s.at {
			t.Fatalf("after %s the cursor is at %d, want %d", msg, l.Cursor(), s.at)
		}
	}
	if afters != len(steps) {
		t.Fatalf("after ran %d times for %d moves", afters, len(steps))
	}
	if _, ok := km.Dispatch(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}); ok {
		t.Fatal("space pages a list (only a view's pgdn takes it)")
	}
}

func TestViewNavScrollsAViewThatComesAndGoes(t *testing.T) {
	var v *Viewport
	nav := ViewNav(ViewMoves(func() *Viewport { return v }))
	km := nav.Rows()
	want := []string{"↑/k up", "↓/j down", "pgup page up", "pgdn page down", "g top", "G bottom"}
	if got := helpKeys(km.Help()); !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	if got := helpKeys(km.Footer()); !reflect.DeepEqual(got, want[:2]) {
		t.Fatalf("footer %q, want the arrows", got)
	}
	press(km, 'j', "j") // no view: nothing to scroll, and no panic
	v = &Viewport{}
	v.Window(make([]string, 50), 10)
	press(km, 'j', "j")
	press(km, tea.KeySpace, " ")
	if v.Offset() != 10 {
		t.Fatalf("j then space scrolled to %d, want 1+9", v.Offset())
	}
	press(km, 'g', "g")
	if v.Offset() != 0 {
		t.Fatalf("g left the view at %d", v.Offset())
	}
}

func TestNavLeavesOutRowsWithoutAMove(t *testing.T) {
	n := 0
	nav := FieldNav(Moves{Up: func() tea.Cmd { n--; return nil }, Down: func() tea.Cmd { n++; return nil }})
	km := nav.Rows()
	if got := helpKeys(km.Footer()); !reflect.DeepEqual(got, []string{"↑ up", "↓ down"}) {
		t.Fatalf("field rows %q", got)
	}
	if _, ok := km.Dispatch(tea.KeyPressMsg{Code: 'j', Text: "j"}); ok {
		t.Fatal("j moved the list while a field has the keyboard")
	}
	press(km, tea.KeyDown, "")
	if n != 1 {
		t.Fatalf("↓ moved %d", n)
	}
	if got := ListNav(Moves{Up: func() tea.Cmd { return nil }}).Rows(); len(got) != 1 {
		t.Fatalf("%d rows for one move", len(got))
	}
}

func TestRowModifiersKeepTheRest(t *testing.T) {
	r := KeyRow{Binding: Bind("pgdn", "page down", "pgdown"), Footer: true, Group: GroupNav}
	r2 := r.AlsoKeys("space").Titled("next page")
	if !reflect.DeepEqual(r2.Binding.Keys(), []string{"pgdown", "space"}) || r2.Binding.Help().Key != "pgdn" ||
		r2.Binding.Help().Desc != "next page" || !r2.Footer || r2.Group != GroupNav {
		t.Fatalf("modified row %+v", r2)
	}
	if !reflect.DeepEqual(r.Binding.Keys(), []string{"pgdown"}) || r.Binding.Help().Desc != "page down" {
		t.Fatal("modifying a copy changed the original")
	}
}

// The ? overlay's columns follow the rows' groups, not their positions:
// moving a row within the keymap keeps it in its column.
func TestHelpGroupsByGroupNotPosition(t *testing.T) {
	nop := func(tea.KeyPressMsg) tea.Cmd { return nil }
	act := func(k string) KeyRow { return KeyRow{Binding: Bind(k, k, k), Do: nop} }
	nav := ListNav(Moves{Up: func() tea.Cmd { return nil }, Down: func() tea.Cmd { return nil }})
	hidden := act("h")
	hidden.When = func() bool { return false }
	for _, km := range []Keymap{
		{act("a"), nav.Up, nav.Down, act("b")},
		{nav.Down, act("a"), act("b"), hidden, nav.Up},
	} {
		got := km.HelpGroups()
		if len(got) != 2 {
			t.Fatalf("%d columns", len(got))
		}
		nav, acts := helpKeys(got[0]), helpKeys(got[1])
		if len(nav) != 2 || !reflect.DeepEqual(acts, []string{"a a", "b b"}) {
			t.Fatalf("columns %q %q", nav, acts)
		}
	}
	if got := (Keymap{act("a")}).HelpGroups(); len(got) != 1 {
		t.Fatalf("an empty group made a column: %d", len(got))
	}
}
