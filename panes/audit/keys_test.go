package auditpane

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// press sends one key and runs what it returns once (no filter pass waits).
func press(p *Pane, k string) any {
	cmd := p.Update(panetest.Key(k))
	if cmd == nil {
		return nil
	}
	return cmd()
}

func helpKeys(bs []key.Binding) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Help().Key+" "+b.Help().Desc)
	}
	return strings.Join(out, ", ")
}

// TestDisabledKeySaysWhy: x with no filter set does nothing and says why
// (the root shows it in the footer); once a filter is set it clears it.
func TestDisabledKeySaysWhy(t *testing.T) {
	path, _ := liveLog(t, 10)
	p := loadedPane(t, path)
	msg, ok := findMsg[panes.KeyDisabledMsg](press(p, "x"))
	if !ok || msg.Key != "x" || msg.Reason != "no filter set" {
		t.Fatalf("x with no filter: %#v", msg)
	}
	press(p, "o")
	if outcomes[p.filter.outcome] != "ok" {
		t.Fatalf("o did not set the outcome filter: %q", outcomes[p.filter.outcome])
	}
	if _, ok := findMsg[panes.KeyDisabledMsg](press(p, "x")); ok || p.filter.outcome != 0 {
		t.Fatalf("x with a filter set did not clear it (outcome %d)", p.filter.outcome)
	}
}

// findMsg looks for a message of type T in what a command returned (a batch included).
func findMsg[T any](m any) (T, bool) {
	var zero T
	switch m := m.(type) {
	case T:
		return m, true
	case []any:
		for _, x := range m {
			if t, ok := findMsg[T](x); ok {
				return t, true
			}
		}
	}
	return zero, false
}

// TestFilterFieldTypesAndClears: / opens the shared text field; typing
// refilters, ↑/↓ still move, enter keeps the filter, x clears it; esc in
// the field clears it too. The footer follows the mode's rows.
func TestFilterFieldTypesAndClears(t *testing.T) {
	path, _ := liveLog(t, 10)
	p := loadedPane(t, path)
	press(p, "/")
	if !p.Capturing() {
		t.Fatal("/ did not give the filter the keyboard")
	}
	if got := helpKeys(p.ShortHelp()); !strings.Contains(got, "enter keep filter") || !strings.Contains(got, "esc clear filter") {
		t.Fatalf("footer while filtering: %s", got)
	}
	for _, k := range panetest.Typed("qz") {
		p.Update(k)
	}
	if p.filter.field.Value() != "qz" {
		t.Fatalf("typed into the field: %q", p.filter.field.Value())
	}
	p.Update(panetest.Key("backspace"))
	press(p, "enter")
	if p.Capturing() || p.filter.field.Value() != "q" {
		t.Fatalf("enter: capturing %v, filter %q", p.Capturing(), p.filter.field.Value())
	}
	if v := ansi.Strip(p.View(100, 20)); !strings.Contains(v, "/q") {
		t.Fatalf("the kept filter is not shown:\n%s", v)
	}
	press(p, "x")
	if p.filter.field.Value() != "" {
		t.Fatalf("x left the filter %q", p.filter.field.Value())
	}
	press(p, "/")
	p.Update(panetest.Key("a"))
	press(p, "esc")
	if p.Capturing() || p.filter.field.Value() != "" {
		t.Fatalf("esc in the field: capturing %v, filter %q", p.Capturing(), p.filter.field.Value())
	}
}

// TestClickSelectsTheRowUnderIt and the wheel moves the selection; in the
// detail view the wheel scrolls and esc comes back.
func TestClickSelectsTheRowUnderIt(t *testing.T) {
	path, _ := liveLog(t, 10)
	p := loadedPane(t, path)
	p.View(100, 20) // lays out: badge line, column header, then rows 0…9
	p.Update(panetest.Click(5, 2+3))
	if p.table.list.Cursor() != 3 || p.table.follow {
		t.Fatalf("a click on the fourth row: sel %d, follow %v", p.table.list.Cursor(), p.table.follow)
	}
	p.Update(panetest.Click(5, 19)) // below the last row: nothing
	if p.table.list.Cursor() != 3 {
		t.Fatalf("a click below the rows moved the selection to %d", p.table.list.Cursor())
	}
	p.Update(panetest.WheelDown(5, 5))
	if p.table.list.Cursor() != 3+panes.WheelStep {
		t.Fatalf("wheel down: sel %d, want %d", p.table.list.Cursor(), 3+panes.WheelStep)
	}
	cmd := p.Update(panetest.Key("enter"))
	runSync(p, cmd)
	if !p.detail.open() || p.detail.entry.Seq != int64(3+panes.WheelStep) {
		t.Fatalf("enter did not open the selected entry's detail")
	}
	if got := helpKeys(p.ShortHelp()); !strings.HasPrefix(got, "esc back") {
		t.Fatalf("footer in the detail view: %s", got)
	}
	p.View(100, 8) // shorter than the detail: it scrolls
	p.Update(panetest.WheelDown(5, 5))
	if p.detail.view.Offset() == 0 {
		t.Fatal("the wheel did not scroll the detail view")
	}
	press(p, "esc")
	if p.detail.open() {
		t.Fatal("esc did not close the detail view")
	}
}

// TestKeySectionsDocumentEveryMode: the README's table and the ? overlay
// read the pane's rows, one section per mode.
func TestKeySectionsDocumentEveryMode(t *testing.T) {
	p := New("", nil)
	var titles []string
	for _, s := range p.KeySections() {
		titles = append(titles, s.Title)
	}
	if strings.Join(titles, ",") != "Audit log,Audit filter,Audit detail" {
		t.Fatalf("sections: %v", titles)
	}
	md := panes.KeysMarkdown(p.KeySections())
	for _, want := range []string{"| Audit log | ", "`/` filter", "`e` event filter", "| Audit detail | `esc` back |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lacks %q:\n%s", want, md)
		}
	}
}
