package approvalspane

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

func footerKeys(bs []key.Binding) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Help().Key)
	}
	return strings.Join(out, " ")
}

// disabledReason runs cmd and returns the reason of the KeyDisabledMsg it
// reports, or "" when it reports none.
func disabledReason(cmd tea.Cmd) string {
	if cmd == nil {
		return ""
	}
	if m, ok := cmd().(panes.KeyDisabledMsg); ok {
		return m.Reason
	}
	return ""
}

// With nothing pending a and d say so instead of doing nothing, and the
// footer does not offer them; with a task they are offered again.
func TestDecisionKeysWithNothingPending(t *testing.T) {
	env := approvaltest.New(t)
	p := loadedPane(t, env)
	if got := footerKeys(p.ShortHelp()); strings.Contains(got, "a") || strings.Contains(got, "d") {
		t.Fatalf("footer offers a decision with nothing pending: %q", got)
	}
	for _, k := range []string{"a", "d"} {
		if why := disabledReason(p.Update(keyMsg(k))); why != "nothing is pending" {
			t.Fatalf("%s with nothing pending: reason %q", k, why)
		}
	}
	if p.dialogs.confirm != nil || p.dialogs.deny != nil {
		t.Fatal("a dialog opened on an empty queue")
	}
	env.Submit(env.Play("now-one", "/media/a.mkv"))
	p = loadedPane(t, env)
	if got := footerKeys(p.ShortHelp()); !strings.HasPrefix(got, "a d ") {
		t.Fatalf("footer with a pending task: %q", got)
	}
}

// While a decision is carried out, a and d say an action is running (and
// name it), through the root's footer notice.
func TestDecisionKeysWhileBusy(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("first", "/media/a.mkv"))
	p := loadedPane(t, env)
	p.busy, p.deciding = true, "first\x1b[31m"
	why := disabledReason(p.Update(keyMsg("a")))
	if why != `an action is running (first\x1b[31m)` {
		t.Fatalf("a while busy: reason %q", why)
	}
	if strings.Contains(footerKeys(p.ShortHelp()), "a") {
		t.Fatal("footer offers approve while a decision runs")
	}
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(panes.KeyDisabledMsg{Key: "a", Reason: why})
	if !strings.Contains(ansi.Strip(m.Render()), "a: an action is running") {
		t.Fatalf("footer does not say why:\n%s", ansi.Strip(m.Render()))
	}
}

// The deny dialog's empty reason field shows the cursor as a blank cell
// followed by the hint — never the hint's first letter in reverse video —
// and typing replaces the hint.
func TestDenyReasonFieldEmptyAndTyped(t *testing.T) {
	env := approvaltest.New(t)
	p := loadedPane(t, env)
	p.dialogs.deny = newDenyDialog("t")
	cursor := p.styles.Cursor.Reverse(true)
	line := p.reasonLine(60)
	if !strings.Contains(line, cursor.Render(" ")) || strings.Contains(line, cursor.Render("w")) {
		t.Fatalf("empty reason line %q", line)
	}
	if got := ansi.Strip(line); got != reasonPrompt+" "+reasonHint {
		t.Fatalf("empty reason reads %q", got)
	}
	for _, r := range "no" {
		p.dialogs.deny.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if got := ansi.Strip(p.reasonLine(60)); got != reasonPrompt+"no " {
		t.Fatalf("typed reason reads %q", got)
	}
	// the bound holds for typing and pasting alike
	p.dialogs.deny.paste(strings.Repeat("x", 2*maxReasonRunes))
	p.dialogs.deny.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	if n := len([]rune(p.dialogs.deny.input.Value())); n != maxReasonRunes {
		t.Fatalf("reason holds %d runes, bound %d", n, maxReasonRunes)
	}
}

// A click on a row selects that task, in the pending list and in the
// decided one; a click while a prompt is open changes nothing.
func TestClickSelectsRow(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("row-one", "/media/a.mkv"))
	env.Submit(env.Play("row-two", "/media/b.mkv"))
	p := loadedPane(t, env)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	screen := strings.Split(ansi.Strip(m.Render()), "\n")
	y := -1
	for i, l := range screen {
		if strings.Contains(l, "row-two") {
			y = i
			break
		}
	}
	if y < 0 || p.queue.selID != "row-one" {
		t.Fatalf("row-two not on screen or wrong start (%q):\n%s", p.queue.selID, strings.Join(screen, "\n"))
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: y})
	if p.queue.selID != "row-two" {
		t.Fatalf("click on row-two selected %q", p.queue.selID)
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: 1}) // the heading: no row
	if p.queue.selID != "row-two" {
		t.Fatalf("click off the rows moved the selection to %q", p.queue.selID)
	}
}

// The pane documents its keys for the ? overlay and the README: a, d and v
// are everyday keys, and every key the pane acts on is in a row.
func TestKeySectionsDocumentTheKeys(t *testing.T) {
	p := New(Options{}, styles())
	var everyday []string
	for _, s := range p.KeySections() {
		for _, r := range s.Rows {
			if r.Everyday {
				everyday = append(everyday, s.Title+":"+r.Binding.Help().Key)
			}
		}
	}
	want := "Approvals:a Approvals:d Approvals:v Approve prompt:y Deny reason:enter"
	if got := strings.Join(everyday, " "); got != want {
		t.Fatalf("everyday keys %q, want %q", got, want)
	}
	md := panes.KeysMarkdown(p.KeySections())
	if !strings.Contains(md, "| Approvals | `a` approve… · `d` deny…") {
		t.Fatalf("markdown:\n%s", md)
	}
}

// A click while a prompt is open leaves the selection under the prompt: the
// prompt is answered with keys, and the task it names stays the one shown.
func TestClickWithPromptOpenChangesNothing(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("keep-one", "/media/a.mkv"))
	env.Submit(env.Play("keep-two", "/media/b.mkv"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	clk.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm == nil {
		t.Fatalf("a did not open the prompt: %q", p.notice)
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: 3}) // keep-two's row
	if p.queue.selID != "keep-one" || p.dialogs.confirm == nil || p.dialogs.confirm.taskID != "keep-one" {
		t.Fatalf("click under the prompt: selected %q, prompt %+v", p.queue.selID, p.dialogs.confirm)
	}
}
