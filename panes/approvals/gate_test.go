package approvalspane

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// The grace period restarts with every swallowed key and ends at its
// ceiling however fast the person types (injected times: deterministic).
func TestGraceResetsAndHasCeiling(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var g grace
	if g.swallow(t0) {
		t.Fatal("the zero grace swallowed a key")
	}
	g.arm(t0)
	// keys every 300 ms (under the 425 ms quiet period) keep it going...
	at := t0
	for at.Add(300 * time.Millisecond).Before(t0.Add(GraceMax)) {
		at = at.Add(300 * time.Millisecond)
		if !g.swallow(at) {
			t.Fatalf("key at +%v not swallowed: each swallowed key restarts the quiet period", at.Sub(t0))
		}
	}
	// ...but not past the ceiling
	if g.swallow(t0.Add(GraceMax)) {
		t.Fatal("a key at the ceiling was swallowed")
	}
	// a pause of the quiet period ends it early
	g.arm(t0)
	if !g.swallow(t0.Add(400 * time.Millisecond)) {
		t.Fatal("key inside the quiet period passed")
	}
	if g.swallow(t0.Add(400*time.Millisecond + GraceQuiet)) {
		t.Fatal("key after a quiet pause was swallowed")
	}
	// unlike the old fixed 400 ms from opening, a key at +600 ms after one
	// at +300 ms is still swallowed
	g.arm(t0)
	g.swallow(t0.Add(300 * time.Millisecond))
	if !g.swallow(t0.Add(600 * time.Millisecond)) {
		t.Fatal("the swallowed key did not restart the quiet period")
	}
}

func loadedPane(t *testing.T, env *approvaltest.Env, clock ...*approvaltest.Clock) *Pane {
	t.Helper()
	p := newPane(env)
	if len(clock) > 0 {
		p.o.Now = clock[0].Now // the pane's own clock: the queue's tasks do not expire meanwhile
	}
	p.Update(p.reload(nil)())
	if p.queue.selID != "" {
		p.Update(p.loadView(p.queue.selID)())
	}
	return p
}

func press(m *ui.Model, keys ...string) tea.Cmd {
	var cmds []tea.Cmd
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		_, c := m.Update(msg)
		cmds = append(cmds, c)
	}
	return tea.Batch(cmds...)
}

// The grace period swallows the keys of a person typing through the moment
// the prompt appears, through the pane and its dialog, and a's refusal
// says why.
func TestGraceThroughThePane(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("g", "/media/a.mkv"))
	p := loadedPane(t, env)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	press(m, "a")
	if p.dialogs.confirm != nil {
		t.Fatal("a during the arrival grace opened the dialog")
	}
	if !strings.Contains(p.notice, "just changed") {
		t.Fatalf("a did nothing silently: notice %q", p.notice)
	}
	env.Clock.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm == nil {
		t.Fatal("a after the grace did not open the dialog")
	}
	// typing on: y every 200 ms is swallowed up to the ceiling
	for i := 0; i < 7; i++ {
		env.Clock.Advance(200 * time.Millisecond)
		if c := press(m, "y"); p.dialogs.confirm == nil || p.busy || c != nil {
			t.Fatalf("y at +%d ms answered the prompt", 200*(i+1))
		}
	}
	env.Clock.Advance(200 * time.Millisecond) // +1.6 s: past the ceiling
	if press(m, "y"); !p.busy || p.dialogs.confirm != nil {
		t.Fatal("y after the ceiling did not approve")
	}
}

// No key acts on a pane the screen cannot show: at every size from 1×1, the
// keys the issue names (3, j, a, y) decide nothing unless the task's row,
// deadline, the top of its preview and the prompt were all on screen; text
// typed while a dialog is hidden goes nowhere.
func TestNoKeyActsOnWhatIsNotShown(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("sized", secretURI))
	env.Clock.Advance(time.Second)
	env.Submit(env.Play("second", "/media/b.mkv"))
	clk := approvaltest.NewClock()
	clk.Advance(time.Second)
	first := loadedPane(t, env, clk)
	list, view := first.reload(nil)(), first.loadView(first.queue.selID)()
	fresh := func() *Pane { // the same loaded state without reading the disk 3,000 times
		// and a clock of its own: the grace waits below add up to more than
		// the approval timeout, and a row past its deadline takes no a or d
		clk = approvaltest.NewClock()
		clk.Advance(time.Second)
		p := newPane(env)
		p.o.Now = clk.Now
		p.Update(list)
		p.Update(view)
		return p
	}
	// every size near the edges (the minimum, the pane's needs, 60 columns);
	// a few in between
	widths := []int{1, 2, 5, 10, 20, 30, 38, 39, 40, 41, 45, 50, 59, 60, 61, 72}
	heights := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 24}
	for _, w := range widths {
		for _, h := range heights {
			p := fresh()
			m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			screen := ansi.Strip(m.Render())
			clk.Advance(GraceMax)
			press(m, "3", "j", "k")
			clk.Advance(GraceMax)
			press(m, "a")
			if p.dialogs.confirm != nil {
				shown := ansi.Strip(m.Render())
				for _, want := range []string{"sized", "MEDIA_PLAY", "living-room", "expires in", "SIM sim://living-room", "Approve sized?"} {
					if !strings.Contains(strings.ReplaceAll(shown, "\n", ""), want) {
						t.Fatalf("%d×%d: the prompt opened without %q on screen:\n%s", w, h, want, shown)
					}
				}
			}
			clk.Advance(GraceMax)
			press(m, "y")
			if p.busy && p.dialogs.confirm == nil && !strings.Contains(screen, "sized") {
				t.Fatalf("%d×%d: approved a task the screen did not show:\n%s", w, h, screen)
			}
			if w < ui.MinWidth || h < ui.MinHeight {
				if p.busy || p.dialogs.confirm != nil || p.queue.cur.Cursor() != 0 {
					t.Fatalf("%d×%d (too small): keys acted (busy %v, dialog %v, sel %d)", w, h, p.busy, p.dialogs.confirm != nil, p.queue.cur.Cursor())
				}
			}

			// a deny dialog opened on a big screen, then hidden by a resize
			p = fresh()
			m = ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
			m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
			clk.Advance(GraceMax)
			press(m, "d")
			if p.dialogs.deny == nil {
				t.Fatalf("d did not open the deny dialog at 100×30: %q\n%s", p.notice, ansi.Strip(m.Render()))
			}
			clk.Advance(GraceMax)
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
			visible := m.Legible()
			hidden := ansi.Strip(m.Render())
			press(m, "x", "y", "z", "enter")
			typed := p.dialogs.deny != nil && p.dialogs.deny.input.Value() != ""
			if !visible && (typed || p.busy || p.dialogs.deny == nil) {
				t.Fatalf("%d×%d: keys reached a hidden deny dialog (typed %v, busy %v):\n%s", w, h, typed, p.busy, hidden)
			}
			if visible && !strings.Contains(hidden, "Deny sized") {
				t.Fatalf("%d×%d: keys allowed while the dialog is not on screen:\n%s", w, h, hidden)
			}
		}
	}
	if r, _ := env.Queue.Get("sized"); r.State != approval.Pending {
		t.Fatalf("state %s", r.State)
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// The same through the real program (teatest): started at sizes from 1×1
// to just under the minimum, the keys 3, j, a, y and typed text decide
// nothing; a deny dialog hidden by a resize takes no text.
func TestTooSmallThroughTheProgram(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {5, 2}, {20, 6}, {39, 9}, {39, 40}, {120, 9}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			env := approvaltest.New(t)
			env.Submit(env.Play("unseen", "/media/a.mkv"))
			env.Submit(env.Play("unseen-2", "/media/b.mkv"))
			s := start(t, env, sz[0], sz[1], "")
			waitAny(s, "too small", "…") // the notice, cut to the width
			s.key("3")
			s.key("j")
			env.Clock.Advance(GraceMax)
			s.key("a")
			env.Clock.Advance(GraceMax)
			s.key("y")
			s.key("d")
			env.Clock.Advance(GraceMax)
			s.key("typed")
			s.key("enter")
			s.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
			out := s.final()
			if strings.Contains(out, "Approve") || strings.Contains(out, "Deny unseen") || strings.Contains(out, "typed") {
				t.Fatalf("keys acted while the pane could not be seen:\n%s", out)
			}
			if got := strings.Join(env.Events(), ","); got != "submitted,submitted" {
				t.Fatalf("audit %s", got)
			}
		})
	}
	t.Run("deny dialog hidden by a resize", func(t *testing.T) {
		env := approvaltest.New(t)
		env.Submit(env.Play("hide", "/media/a.mkv"))
		s := start(t, env, 100, 30, "effect")
		env.Clock.Advance(GraceMax)
		s.key("d")
		s.wait("Deny hide")
		env.Clock.Advance(GraceMax)
		s.tm.Send(tea.WindowSizeMsg{Width: 20, Height: 6})
		s.wait("too small")
		s.key("hidden words")
		s.key("enter")
		s.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
		out := s.final()
		if !strings.Contains(out, "reason:") || strings.Contains(out, "hidden words") {
			t.Fatalf("text typed while the dialog was hidden reached it:\n%s", out)
		}
		if got := strings.Join(env.Events(), ","); got != "submitted" {
			t.Fatalf("audit %s", got)
		}
	})
}

// Rendering twice gives the same screen: the cached preview is never
// changed by the frame built from it (the "more below" line, a dialog).
func TestViewIsStable(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("stable", secretURI+"&"+strings.Repeat("segment=abcdefghij&", 40)))
	p := loadedPane(t, env)
	p.queue.preview.Scroll(3)
	first := p.View(100, 20)
	for i := 0; i < 3; i++ {
		if again := p.View(100, 20); again != first {
			t.Fatalf("render %d differs:\n%s\n---\n%s", i+2, first, again)
		}
	}
	p.dialogs.grace = grace{}
	p.Update(keyMsg("a"))
	withDialog := p.View(100, 20)
	p.dialogs.confirm = nil
	if again := p.View(100, 20); strings.Contains(again, "Approve stable?") || withDialog == again {
		t.Fatal("the dialog's lines stayed in the cached preview")
	}
}

// deadlineShown is a row's deadline, long or short: "approval expires in
// 9m", "lease 0:32", "approval 10m".
var deadlineShown = regexp.MustCompile(`(approval|lease)( expires in)? ([0-9]+:[0-9]{2}|[0-9]+m|[0-9]+h[0-9]{2}m)\b|(approval|lease) expired`)

// Rows fit every width from 60 to 200 without a cut deadline, and the
// selected row is never wrapped there.
func TestRowsFitFrom60Columns(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Manifest("a-rather-long-task-id", "MEDIA_PAUSE", map[string]any{"target_device": "living-room"}, 40*time.Second))
	env.Submit(env.Play("short", "/media/a.mkv"))
	p := loadedPane(t, env)
	for w := 60; w <= 200; w++ {
		lines := strings.Split(ansi.Strip(p.View(w, 20)), "\n")
		for _, l := range lines[1:3] {
			if strings.Contains(l, "…") && !strings.Contains(l, "agent") {
				t.Fatalf("%d cols: cut row %q", w, l)
			}
			if !deadlineShown.MatchString(l) {
				t.Fatalf("%d cols: no deadline in %q", w, l)
			}
		}
		if !strings.Contains(lines[1], "a-rather-long-task-id") || !strings.Contains(lines[2], "short") {
			t.Fatalf("%d cols: rows wrapped:\n%s", w, strings.Join(lines[:5], "\n"))
		}
	}
}

// A damaged task is listed so the person sees it, says it cannot be
// decided, and a says why instead of doing nothing.
func TestDamagedTaskSaysWhy(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("broken", "/media/a.mkv"))
	if err := os.WriteFile(filepath.Join(env.TasksDir(), "broken", "record.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	if len(p.queue.list) == 0 || p.queue.list[0].State != approval.Damaged {
		t.Fatalf("the engine must list a damaged task with the pending ones: %+v", p.queue.list)
	}
	screen := ansi.Strip(m.Render())
	if !strings.Contains(screen, "damaged: cannot be decided") {
		t.Fatalf("row does not say damaged:\n%s", screen)
	}
	clk.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm != nil || !strings.Contains(p.notice, "damaged") {
		t.Fatalf("a on a damaged task: dialog %v, notice %q", p.dialogs.confirm != nil, p.notice)
	}
}

// The selected row is shown whole even when a column had to cut it: a long
// task id wraps instead of ending in an ellipsis.
func TestSelectedRowIsWhole(t *testing.T) {
	env := approvaltest.New(t)
	long := "a-task-id-much-longer-than-the-forty-cells-a-column-gets"
	env.Submit(env.Play(long, "/media/a.mkv"))
	p := loadedPane(t, env)
	for _, w := range []int{60, 80, 120} {
		flat := strings.Join(strings.Fields(ansi.Strip(p.View(w, 30))), "")
		if !strings.Contains(flat, long) {
			t.Fatalf("%d cols: the selected id is cut:\n%s", w, ansi.Strip(p.View(w, 30)))
		}
	}
}
