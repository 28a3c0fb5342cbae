package approvalspane

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// submitAll submits a play task for each id at the env's current time: the
// queue lists tasks submitted together by id.
func submitAll(env *approvaltest.Env, ids ...string) {
	for _, id := range ids {
		env.Submit(env.Play(id, "/media/"+id+".mkv"))
	}
}

// numbered is prefix-00 … prefix-(n-1).
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

// act presses k and delivers what it asked for (the new task's preview or
// the decided task's result), as the program would.
func act(p *Pane, k string) {
	if cmd := p.Update(panetest.Key(k)); cmd != nil {
		if msg := runBatch(cmd); msg != nil {
			p.Update(msg)
		}
	}
}

// actShown is act, then a frame at w×h: the program draws after every
// message, and the list's top is fixed as it is drawn.
func actShown(p *Pane, k string, w, h int) {
	act(p, k)
	p.View(w, h)
}

// reloadPane runs a full reload of the queue, and reads the preview when
// the task under the cursor changed.
func reloadPane(p *Pane) {
	p.Update(p.reload(nil)())
	if p.queue.selID != "" && (p.queue.view == nil || p.queue.view.Record.TaskID != p.queue.selID) {
		p.Update(p.loadView(p.queue.selID)())
	}
}

// selectedRow is the screen line of the selected row ("▸") and its text.
func selectedRow(t *testing.T, p *Pane, w, h int) (int, string) {
	t.Helper()
	lines := strings.Split(ansi.Strip(p.View(w, h)), "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "▸") {
			if at >= 0 {
				t.Fatalf("two selected rows:\n%s", strings.Join(lines, "\n"))
			}
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no selected row on screen:\n%s", strings.Join(lines, "\n"))
	}
	return at, lines[at]
}

// firstRow is the first task row's id on screen (the line under the
// heading), for telling whether the list scrolled.
func firstRow(t *testing.T, p *Pane, w, h int) string {
	t.Helper()
	lines := strings.Split(ansi.Strip(p.View(w, h)), "\n")
	f := strings.Fields(lines[1])
	if len(f) > 0 && f[0] == "▸" {
		f = f[1:]
	}
	if len(f) == 0 {
		t.Fatalf("no row under the heading:\n%s", strings.Join(lines, "\n"))
	}
	return f[0]
}

// The cursor stays on its task when tasks arrive before or after it: the
// same task stays selected, the grace does not re-arm (nothing changed
// under the person), and a decides on that task.
func TestCursorStaysOnItsTaskWhenTasksArrive(t *testing.T) {
	for _, tc := range []struct {
		name    string
		arrive  []string
		wantIdx int
	}{
		{"before", []string{"t-a", "t-c"}, 3},
		{"after", []string{"t-e", "t-f"}, 1},
		{"both sides", []string{"t-a", "t-e"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := approvaltest.New(t)
			submitAll(env, "t-b", "t-d")
			clk := approvaltest.NewClock()
			p := loadedPane(t, env, clk)
			act(p, "j")
			if p.queue.selID != "t-d" {
				t.Fatalf("j selected %q", p.queue.selID)
			}
			clk.Advance(GraceMax)
			submitAll(env, tc.arrive...)
			reloadPane(p)
			if p.queue.selID != "t-d" || p.queue.cur.Cursor() != tc.wantIdx || p.queue.list[p.queue.cur.Cursor()].TaskID != "t-d" {
				t.Fatalf("after arrivals: selID %q, cursor %d on %q; want t-d at %d", p.queue.selID, p.queue.cur.Cursor(),
					p.queue.list[p.queue.cur.Cursor()].TaskID, tc.wantIdx)
			}
			if _, row := selectedRow(t, p, 100, 30); !strings.Contains(row, "t-d") {
				t.Fatalf("the selected row on screen is %q", row)
			}
			act(p, "a")
			if p.dialogs.confirm == nil || p.dialogs.confirm.taskID != "t-d" || p.dialogs.confirm.previewHash != p.queue.view.BindingHash {
				t.Fatalf("a after arrivals around the selection: prompt %+v, notice %q", p.dialogs.confirm, p.notice)
			}
		})
	}
}

// When the selected task leaves the queue (decided elsewhere), the cursor
// lands on its neighbour — the next task, or the previous one when it was
// the last — and the grace re-arms: a key right after decides nothing, and
// only once it is over (and the neighbour's preview is on screen) does a
// open the prompt, naming the neighbour and the preview shown.
func TestCursorLandsOnANeighbourWhenItsTaskLeaves(t *testing.T) {
	for _, tc := range []struct {
		name             string
		moves            []string
		leaves, neighbor string
	}{
		{"middle", []string{"j"}, "t-b", "t-c"},
		{"last", []string{"G"}, "t-c", "t-b"},
		{"first", nil, "t-a", "t-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := approvaltest.New(t)
			submitAll(env, "t-a", "t-b", "t-c")
			clk := approvaltest.NewClock()
			p := loadedPane(t, env, clk)
			for _, k := range tc.moves {
				act(p, k)
			}
			if p.queue.selID != tc.leaves {
				t.Fatalf("selected %q, want %q", p.queue.selID, tc.leaves)
			}
			clk.Advance(GraceMax)
			if _, _, err := env.Queue.Decide(context.Background(), tc.leaves, approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
				t.Fatal(err)
			}
			reloadPane(p)
			if p.queue.selID != tc.neighbor || p.queue.list[p.queue.cur.Cursor()].TaskID != tc.neighbor {
				t.Fatalf("after %s left: selected %q", tc.leaves, p.queue.selID)
			}
			if _, row := selectedRow(t, p, 100, 30); !strings.Contains(row, tc.neighbor) {
				t.Fatalf("the selected row on screen is %q", row)
			}
			for _, k := range []string{"a", "d"} {
				act(p, k)
				if p.dialogs.confirm != nil || p.dialogs.deny != nil || p.busy {
					t.Fatalf("%s right after %s moved under the cursor opened a decision", k, tc.neighbor)
				}
				if !strings.Contains(p.notice, "just changed") {
					t.Fatalf("%s was refused silently: notice %q", k, p.notice)
				}
			}
			clk.Advance(GraceMax)
			act(p, "a")
			if p.dialogs.confirm == nil || p.dialogs.confirm.taskID != tc.neighbor || p.dialogs.confirm.previewHash != p.queue.view.BindingHash {
				t.Fatalf("a after the grace: prompt %+v, notice %q", p.dialogs.confirm, p.notice)
			}
		})
	}
}

// A task that arrives while the cursor did not move, but takes the place of
// the one that left, is a different task under the cursor: the grace
// re-arms even though the cursor's position is the same.
func TestTaskSlidingUnderAStillCursorRearmsTheGrace(t *testing.T) {
	env := approvaltest.New(t)
	submitAll(env, "t-a", "t-c")
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	clk.Advance(GraceMax)
	if _, _, err := env.Queue.Decide(context.Background(), "t-a", approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	submitAll(env, "t-b")
	reloadPane(p)
	if p.queue.cur.Cursor() != 0 || p.queue.selID != "t-b" {
		t.Fatalf("cursor %d on %q, want 0 on t-b", p.queue.cur.Cursor(), p.queue.selID)
	}
	act(p, "a")
	if p.dialogs.confirm != nil {
		t.Fatal("a decided on a task that slid under a still cursor")
	}
}

// Paging keeps the selected row on screen: ctrl+d and ctrl+u move the
// cursor by the list's lines less one, g and G to the ends, and every time
// the selected task's row is drawn, whole, with its preview loading for it.
func TestPagingKeepsTheSelectedRowOnScreen(t *testing.T) {
	env := approvaltest.New(t)
	ids := numbered("page", 40)
	submitAll(env, ids...)
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	const w, h = 100, 30
	listH := h/3 - 1
	p.View(w, h) // a first frame: paging moves by what the list shows
	want := 0
	check := func(k string) {
		t.Helper()
		act(p, k)
		if got := p.queue.cur.Cursor(); got != want {
			t.Fatalf("%s: cursor %d, want %d", k, got, want)
		}
		if p.queue.selID != ids[want] {
			t.Fatalf("%s: selID %q, cursor on %q", k, p.queue.selID, ids[want])
		}
		if p.queue.view == nil || p.queue.view.Record.TaskID != ids[want] {
			t.Fatalf("%s: the preview is not the selected task's", k)
		}
		if _, row := selectedRow(t, p, w, h); !strings.Contains(row, ids[want]) {
			t.Fatalf("%s: selected row %q, want %s", k, row, ids[want])
		}
	}
	for want+listH-1 < len(ids) {
		want += listH - 1
		check("ctrl+d")
	}
	want = len(ids) - 1
	check("ctrl+d")
	want -= listH - 1
	check("ctrl+u")
	want = 0
	check("g")
	want = len(ids) - 1
	check("G")
}

// The top is kept between frames: moving down past the bottom scrolls the
// list one row, and moving back up moves the cursor inside the list
// instead of dragging the list with it (the top was recomputed from 0 each
// frame, so the selected row stuck to the bottom line).
func TestScrollingOneRowAtATimeDoesNotJump(t *testing.T) {
	env := approvaltest.New(t)
	ids := numbered("step", 20)
	submitAll(env, ids...)
	p := loadedPane(t, env)
	const w, h = 100, 30
	listH := h/3 - 1
	first, _ := selectedRow(t, p, w, h)
	for range listH {
		actShown(p, "j", w, h)
	}
	line, _ := selectedRow(t, p, w, h)
	if line != first+listH-1 || firstRow(t, p, w, h) != ids[1] {
		t.Fatalf("after %d × j: selected on line %d (first row %s), want line %d under %s", listH, line,
			firstRow(t, p, w, h), first+listH-1, ids[1])
	}
	actShown(p, "k", w, h)
	if l, _ := selectedRow(t, p, w, h); l != line-1 || firstRow(t, p, w, h) != ids[1] {
		t.Fatalf("k: selected on line %d (first row %s), want line %d under %s", l, firstRow(t, p, w, h), line-1, ids[1])
	}
}

// A task arriving above a scrolled list does not slide the selected row:
// the row stays on its screen line, the list's top follows it.
func TestArrivalAboveKeepsTheSelectedRowInPlace(t *testing.T) {
	env := approvaltest.New(t)
	submitAll(env, numbered("keep", 20)...)
	p := loadedPane(t, env)
	const w, h = 100, 30
	for range 12 {
		actShown(p, "j", w, h)
	}
	for range 3 {
		actShown(p, "k", w, h) // the list scrolled; the selected row is mid-list
	}
	line, row := selectedRow(t, p, w, h)
	submitAll(env, "keep-00a", "keep-05a")
	reloadPane(p)
	if p.queue.selID != "keep-09" {
		t.Fatalf("selected %q after arrivals above", p.queue.selID)
	}
	if l, r := selectedRow(t, p, w, h); l != line || !strings.Contains(r, "keep-09") {
		t.Fatalf("the selected row moved: line %d %q, was line %d %q", l, r, line, row)
	}
}

// The wheel over the list moves the selection (and reads the new task's
// preview); over the preview it scrolls the preview and leaves the
// selection alone.
func TestWheelOverTheListMovesTheSelection(t *testing.T) {
	env := approvaltest.New(t)
	ids := numbered("wheel", 10)
	submitAll(env, ids...)
	p := loadedPane(t, env)
	const w, h = 100, 30
	rowY, _ := selectedRow(t, p, w, h)
	if cmd := p.Update(panetest.WheelDown(5, rowY)); cmd != nil {
		p.Update(cmd())
	}
	if p.queue.selID != ids[3] || p.queue.view == nil || p.queue.view.Record.TaskID != ids[3] {
		t.Fatalf("wheel down over the list: selected %q", p.queue.selID)
	}
	p.View(w, h)
	p.Update(panetest.WheelDown(5, h-2)) // over the preview
	if p.queue.selID != ids[3] || p.queue.preview.Offset() == 0 {
		t.Fatalf("wheel over the preview: selected %q, preview offset %d", p.queue.selID, p.queue.preview.Offset())
	}
}

// The decided list follows its task too: paging keeps the selected row on
// screen and reads its result, and a newly decided task arriving at the
// head leaves the selection on the same task.
func TestDecidedListPagesAndFollowsItsTask(t *testing.T) {
	env := approvaltest.New(t)
	ids := numbered("done", 30)
	submitAll(env, ids...)
	for _, id := range ids {
		env.Clock.Advance(1e9) // decided one after another: newest first is the reverse
		if _, _, err := env.Queue.Decide(context.Background(), id, approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
			t.Fatal(err)
		}
	}
	p := loadedPane(t, env)
	act(p, "v")
	const w, h = 100, 30
	listH := h/3 - 1
	p.View(w, h)
	if p.decided.selID != ids[len(ids)-1] {
		t.Fatalf("decided list starts on %q, want the newest", p.decided.selID)
	}
	act(p, "ctrl+d")
	act(p, "ctrl+d")
	want := ids[len(ids)-1-2*(listH-1)]
	if p.decided.selID != want || p.decided.resultID != want {
		t.Fatalf("two pages down: selected %q (result %q), want %q", p.decided.selID, p.decided.resultID, want)
	}
	if _, row := selectedRow(t, p, w, h); !strings.Contains(row, want) {
		t.Fatalf("selected decided row %q, want %s", row, want)
	}
	line, _ := selectedRow(t, p, w, h)
	submitAll(env, "late")
	env.Clock.Advance(1e9)
	if _, _, err := env.Queue.Decide(context.Background(), "late", approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	reloadPane(p)
	if p.decided.selID != want || p.decided.list[0].TaskID != "late" {
		t.Fatalf("after a new decision: selected %q, head %q", p.decided.selID, p.decided.list[0].TaskID)
	}
	if l, row := selectedRow(t, p, w, h); l != line || !strings.Contains(row, want) {
		t.Fatalf("the selected decided row moved to line %d (%q), was %d", l, row, line)
	}
	// a click on another decided row (the one above) selects it and reads
	// its result
	if cmd := p.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 5, Y: line - 1}); cmd != nil {
		p.Update(cmd())
	}
	if p.decided.selID == want || p.decided.resultID != p.decided.selID {
		t.Fatalf("click above the selected decided row: selected %q, result %q", p.decided.selID, p.decided.resultID)
	}
}

// Through the real program: ctrl+d pages the queue and the terminal shows
// the task it lands on as the selected row.
func TestPagingThroughTheProgram(t *testing.T) {
	env := approvaltest.New(t)
	ids := numbered("prog", 30)
	submitAll(env, ids...)
	s := start(t, env, 100, 30, "effect")
	s.tm.Send(panetest.Key("ctrl+d"))
	// the pane has the 28 lines between the tab bar and the status line,
	// its list a third of them less one (8): a page is 7 rows
	want := ids[7]
	s.wait("▸ " + want)
	out := s.final()
	if !strings.Contains(out, "▸ "+want) || strings.Contains(out, "▸ "+ids[0]) {
		t.Fatalf("after ctrl+d the screen does not show %s selected:\n%s", want, out)
	}
}

// A selected row that wraps (a long id shown whole) counts its real height
// when the list scrolls: the list keeps to its lines, so the preview starts
// where it always does, and the row is still drawn whole.
func TestWrappedSelectedRowKeepsTheListToItsLines(t *testing.T) {
	env := approvaltest.New(t)
	long := "t-10-a-task-id-much-longer-than-the-forty-cells-a-column-gets"
	submitAll(env, append(numbered("t", 10), long, "t-11")...)
	p := loadedPane(t, env)
	const w, h = 60, 30
	listH := h/3 - 1
	for range 10 {
		actShown(p, "j", w, h)
	}
	if p.queue.selID != long {
		t.Fatalf("selected %q", p.queue.selID)
	}
	lines := strings.Split(ansi.Strip(p.View(w, h)), "\n")
	rule := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "───") {
			rule = i
			break
		}
	}
	if rule != 1+listH {
		t.Fatalf("the list took %d lines, want %d:\n%s", rule-1, listH, strings.Join(lines, "\n"))
	}
	if flat := strings.Join(strings.Fields(strings.Join(lines[:rule], " ")), ""); !strings.Contains(flat, long) {
		t.Fatalf("the selected id is cut:\n%s", strings.Join(lines, "\n"))
	}
}
