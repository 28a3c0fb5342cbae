package approvalspane

import (
	"context"
	"fmt"
	"image/color"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/panes/panetest"
	"github.com/vigil-dev/vigil/ui"
)

// A prompt hidden by a switch to another pane (alt+2, or a click on its
// tab) and shown again by the switch back has just appeared again: a y
// typed through the switch back must not answer it.
func TestPromptShownAgainAfterAPaneSwitchHasItsGrace(t *testing.T) {
	for _, via := range []string{"keys", "tabs"} {
		t.Run(via, func(t *testing.T) {
			env := approvaltest.New(t)
			env.Submit(env.Play("back", "/media/a.mkv"))
			p := loadedPane(t, env)
			other := newPane(env)
			m := ui.New(ui.Options{Panes: []panes.Pane{p, other}, Theme: "dark", JobControl: func() bool { return true }})
			m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
			m.Render()
			env.Clock.Advance(GraceMax)
			press(m, "a")
			if p.dialogs.confirm == nil {
				t.Fatalf("a did not open the prompt: %q", p.notice)
			}
			env.Clock.Advance(GraceMax)
			m.Render()
			switchTo := func(i int) {
				if via == "keys" {
					m.Update(panetest.Key("alt+" + string(rune('1'+i))))
				} else {
					m.Update(panetest.Click(tabX(t, m, i), 0))
				}
				m.Render()
			}
			switchTo(1)
			env.Clock.Advance(GraceMax) // as long away as you like
			switchTo(0)
			if p.dialogs.confirm == nil {
				t.Fatal("the prompt did not survive the switch")
			}
			press(m, "y")
			if p.busy {
				t.Fatal("y right after the prompt came back into view approved it")
			}
			env.Clock.Advance(GraceMax)
			press(m, "y")
			if !p.busy {
				t.Fatal("y after the grace did not approve")
			}
		})
	}
}

// tabX is a column inside tab i of the tab bar, as drawn.
func tabX(t *testing.T, m *ui.Model, i int) int {
	t.Helper()
	bar := strings.Split(ansi.Strip(m.Render()), "\n")[0]
	at := strings.Index(bar, fmt.Sprintf("%d Approvals", i+1))
	if at < 0 {
		t.Fatalf("no tab %d in %q", i+1, bar)
	}
	return ansi.StringWidth(bar[:at]) + 1
}

// The help overlay hides the queue: a task that slid under the cursor
// while it was up (the one above was decided elsewhere) is new to the
// person when the overlay closes, however long ago it moved there; an a
// typed at once opens nothing.
func TestTaskRevealedByClosingTheOverlayHasItsGrace(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("first", "/media/a.mkv"))
	env.Submit(env.Play("second", "/media/b.mkv"))
	p := loadedPane(t, env)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark", JobControl: func() bool { return true }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Render()
	env.Clock.Advance(GraceMax)
	if p.queue.selID != "first" {
		t.Fatalf("selected %q", p.queue.selID)
	}
	m.Update(panetest.Key("?"))
	m.Render()
	if _, _, err := env.Queue.Decide(context.Background(), "first", approval.Decision{Approve: false, By: "other", Reason: "elsewhere", Via: "cli"}); err != nil {
		t.Fatal(err)
	}
	m.Update(p.reload(nil)())
	if p.queue.selID != "second" {
		t.Fatalf("after the reload %q is selected", p.queue.selID)
	}
	m.Update(p.loadView(p.queue.selID)())
	m.Render()
	env.Clock.Advance(10 * GraceMax) // the overlay stays up a while
	m.Update(panetest.Key("esc"))
	m.Render()
	press(m, "a")
	if p.dialogs.confirm != nil {
		t.Fatal("a right after the overlay closed opened a prompt on a task the person had not seen")
	}
	env.Clock.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm == nil || p.dialogs.confirm.taskID != "second" {
		t.Fatalf("a after the grace: %q", p.notice)
	}
}

// Back from ctrl+z (the shell had the terminal, for as long as you like)
// the queue appears anew: an a typed at once opens nothing.
func TestQueueAfterSuspendHasItsGrace(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("resumed", "/media/a.mkv"))
	p := loadedPane(t, env)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark", JobControl: func() bool { return true }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Render()
	env.Clock.Advance(GraceMax)
	if _, cmd := m.Update(panetest.Key("ctrl+z")); cmd == nil {
		t.Fatal("ctrl+z did not suspend")
	}
	env.Clock.Advance(10 * GraceMax)
	m.Update(tea.ResumeMsg{})
	m.Render()
	press(m, "a")
	if p.dialogs.confirm != nil {
		t.Fatal("a right after the resume opened a prompt")
	}
	env.Clock.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm == nil {
		t.Fatalf("a after the grace: %q", p.notice)
	}
}

// alt+m inside the deny dialog switches the mouse and nothing else: the
// dialog stays open on its task, the reason keeps what was typed around it.
func TestMouseSwitchLeavesTheDialogsAlone(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("kept", "/media/a.mkv"))
	p := loadedPane(t, env)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark", JobControl: func() bool { return true }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Render()
	env.Clock.Advance(GraceMax)
	press(m, "d")
	if p.dialogs.deny == nil {
		t.Fatalf("d: %q", p.notice)
	}
	env.Clock.Advance(GraceMax)
	press(m, "a", "b")
	m.Update(panetest.Key("alt+m"))
	press(m, "c")
	if m.Mouse() || p.dialogs.deny == nil || p.dialogs.deny.input.Value() != "abc" || p.busy {
		t.Fatalf("after alt+m: mouse %v, dialog %v, busy %v", m.Mouse(), p.dialogs.deny != nil, p.busy)
	}
	m.Update(panetest.Key("alt+m"))
	if !m.Mouse() || p.dialogs.deny == nil || p.dialogs.deny.input.Value() != "abc" {
		t.Fatal("the second alt+m changed the dialog")
	}
}

// The frame Legible lays out serves only the View of the same Render: a
// later screen shows the clock and the theme of its own moment, even with
// no message to the pane in between (the root asks Legible anew).
func TestEveryScreenIsLaidOutForItsMoment(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("timed", "/media/a.mkv"))
	p := loadedPane(t, env)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "auto", JobControl: func() bool { return true }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	first := m.Render()
	env.Clock.Advance(7 * time.Second)
	later := m.Render()
	if ansi.Strip(first) == ansi.Strip(later) {
		t.Fatalf("seven seconds later the screen is the same:\n%s", ansi.Strip(later))
	}
	if !strings.Contains(ansi.Strip(later), "age 7s") || !strings.Contains(ansi.Strip(later), "expires in 9m") {
		t.Fatalf("the countdown is not the clock's:\n%s", ansi.Strip(later))
	}
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	light := m.Render()
	body := func(s string) string { return strings.Join(strings.Split(s, "\n")[1:4], "\n") }
	if body(light) == body(later) || ansi.Strip(light) != ansi.Strip(later) {
		t.Fatal("the theme switch did not repaint the pane in the new colours")
	}
}
