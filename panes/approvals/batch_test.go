package approvalspane

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// warnedURI is a media URI whose host is written as a number: its preview
// warns, so it is never approved with others.
const warnedURI = "http://2130706433/clip.mp4"

// batchEnv is a home with three clean tasks and one warned, submitted a
// second apart (the queue's order).
func batchEnv(t *testing.T) *approvaltest.Env {
	t.Helper()
	env := approvaltest.New(t)
	for _, m := range [][]byte{env.Play("b-one", "/media/one.mkv"), env.Play("b-two", "/media/two.mkv"),
		env.Play("b-warned", warnedURI), env.Play("b-three", "/media/three.mkv")} {
		env.Submit(m)
		env.Clock.Advance(time.Second)
	}
	return env
}

// space marks the selected task (a ✓ in its row, the count in the
// heading) and unmarks it again; A then offers to approve them.
func TestGoldenMarkedTasks(t *testing.T) {
	env := batchEnv(t)
	s, p := startPane(t, env, 100, 30, "effect")
	s.key(" ")
	s.key("j")
	s.key(" ")
	s.key("j")
	s.key(" ")
	s.key(" ") // unmarked again
	s.key("j")
	s.key(" ")
	waitState(t, p, func(sn Snapshot) bool { return sn.Marked == 3 && sn.Previewed == "b-three" })
	out := s.final()
	for _, want := range []string{"3 marked", "✓ b-one", "✓ b-two", "▸✓b-three", "  b-warned", "A approve marked…"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

// startBatch runs the pane with every task of batchEnv marked and A
// pressed: the summary is on screen.
func startBatch(t *testing.T, env *approvaltest.Env) (*session, *Pane) {
	t.Helper()
	s, p := startPane(t, env, 120, 40, "effect")
	s.key(" j j j ")
	waitState(t, p, func(sn Snapshot) bool { return sn.Marked == 4 })
	s.key("A")
	waitState(t, p, func(sn Snapshot) bool { return sn.Summary })
	s.wait("Approve 3 of 4 marked tasks?")
	return s, p
}

// The summary: one row a marked task, with its agent, capability, device,
// media host, preview hash and warnings; the warned task is excluded and
// says why.
func TestGoldenBatchSummary(t *testing.T) {
	env := batchEnv(t)
	s, _ := startBatch(t, env)
	out := s.final()
	for _, want := range []string{"✓ b-one", "✗ b-warned", "2130706433", "⚠ 1", "excluded: its preview has a warning",
		"y approve these 3", "MEDIA HOST"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

// Between the summary and y, one task's stored request is edited and
// another is decided from another window: the others are approved and
// run, those two are reported, the warned one stays pending, and the pane
// shows a line per task.
func TestBatchApprovalWithTasksChangedAndDecidedMeanwhile(t *testing.T) {
	env := batchEnv(t)
	s, p := startBatch(t, env)
	path := filepath.Join(env.TasksDir(), "b-two", "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte("/media/two.mkv"), []byte("/media/swapped.mkv")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.Open().Decide(context.Background(), "b-three", approval.Decision{By: "operator:bob", Reason: "not now"}); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(GraceMax)
	s.key("y")
	waitState(t, p, func(sn Snapshot) bool { return !sn.Busy && len(sn.Report) == 4 })
	report := strings.Join(p.Snapshot().Report, "\n")
	for _, want := range []string{"b-warned not approved: its preview has a warning", "b-one approved and executed",
		"b-two: the stored request changed since the summary", "b-three", "already decided"} {
		if !strings.Contains(report, want) {
			t.Fatalf("report lacks %q:\n%s", want, report)
		}
	}
	if n := p.Snapshot().Notice; n != "approved 1 of 4 marked tasks" {
		t.Fatalf("notice %q", n)
	}
	if p.Snapshot().Marked != 0 {
		t.Fatalf("marks left after the batch: %d", p.Snapshot().Marked)
	}
	s.final()
	for id, want := range map[string]approval.State{"b-one": approval.Done, "b-two": approval.Tampered,
		"b-three": approval.Denied, "b-warned": approval.Pending} {
		if r, _ := env.Queue.Get(id); r.State != want {
			t.Errorf("%s: state %s, want %s", id, r.State, want)
		}
	}
	if r, _ := env.Queue.Get("b-one"); r.DecidedBy != "operator:ada" || r.PreviewHash == "" {
		t.Errorf("b-one decided by %q with preview %q", r.DecidedBy, r.PreviewHash)
	}
}

// summaryPane is a loaded pane (its own clock) with every pending task
// marked and the summary open, driven through the root.
func summaryPane(t *testing.T, env *approvaltest.Env) (*Pane, *ui.Model, *approvaltest.Clock) {
	t.Helper()
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for range p.queue.list {
		press(m, " ")
		press(m, "j")
	}
	cmd := p.Update(keyMsg("A"))
	if cmd == nil {
		t.Fatalf("A did nothing: %q", p.notice)
	}
	p.Update(cmd())
	if p.dialogs.summary == nil {
		t.Fatalf("no summary: %q", p.notice)
	}
	return p, m, clk
}

// A task whose preview changed after the summary was read (its row's hash
// is not the request's any more) is refused with ErrPreviewChanged and
// reported; the other runs.
func TestBatchBindsEachTaskToItsSummaryHash(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("h-one", "/media/one.mkv"))
	env.Submit(env.Play("h-two", "/media/two.mkv"))
	p, m, clk := summaryPane(t, env)
	p.dialogs.summary.rows[1].hash = strings.Repeat("0", 64) // what the summary showed is not the request now
	clk.Advance(GraceMax)
	cmd := press(m, "y")
	if !p.busy {
		t.Fatalf("y did not approve: %q", p.notice)
	}
	done := runUntil(t, cmd, func(msg tea.Msg) bool { _, ok := msg.(batchDoneMsg); return ok })
	p.Update(done)
	if o := done.(batchDoneMsg).outcomes; len(o) != 2 || o[0].err != nil || o[1].err == nil || !strings.Contains(o[1].err.Error(), "changed") {
		t.Fatalf("outcomes %+v", o)
	}
	if r, _ := env.Queue.Get("h-two"); r.State != approval.Pending {
		t.Fatalf("h-two: %s", r.State)
	}
	if r, _ := env.Queue.Get("h-one"); r.State != approval.Done {
		t.Fatalf("h-one: %s", r.State)
	}
	if got := strings.Join(p.Snapshot().Report, "\n"); !strings.Contains(got, "h-two: the request changed since it was shown") {
		t.Fatalf("report:\n%s", got)
	}
	if p.batch.marked["h-one"] || p.batch.marked["h-two"] {
		t.Fatalf("marks left after the batch: %v", p.batch.marked)
	}
}

// runUntil runs cmd (and the batches it returns) until a message ok
// accepts, and returns it.
func runUntil(t *testing.T, cmd tea.Cmd, ok func(tea.Msg) bool) tea.Msg {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		default:
			if ok(msg) {
				return msg
			}
		}
	}
	t.Fatal("the message waited for never came")
	return nil
}

// The summary has the approve prompt's grace: y typed on through its
// appearance is swallowed up to the ceiling; after it y approves.
func TestBatchSummaryGrace(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("g-one", "/media/one.mkv"))
	env.Submit(env.Play("g-two", "/media/two.mkv"))
	p, m, clk := summaryPane(t, env)
	if c := press(m, "y"); p.dialogs.summary == nil || p.busy || c != nil {
		t.Fatal("y at once answered the summary")
	}
	for i := 0; i < 6; i++ {
		clk.Advance(200 * time.Millisecond)
		if c := press(m, "y"); p.dialogs.summary == nil || p.busy || c != nil {
			t.Fatalf("y at +%d ms answered the summary", 200*(i+1))
		}
	}
	clk.Advance(200 * time.Millisecond) // +1.4 s: the quiet period still runs
	press(m, "y")
	if p.busy {
		t.Fatal("y within the ceiling approved")
	}
	clk.Advance(200 * time.Millisecond) // past the 1.5 s ceiling
	if press(m, "y"); !p.busy || p.dialogs.summary != nil {
		t.Fatalf("y after the ceiling did not approve: %q", p.notice)
	}
}

// Any other key closes the summary without approving; marks stay.
func TestBatchSummaryCancels(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("c-one", "/media/one.mkv"))
	p, m, clk := summaryPane(t, env)
	clk.Advance(GraceMax)
	if c := press(m, "n"); c != nil || p.busy || p.dialogs.summary != nil || p.notice != "not approved" {
		t.Fatalf("n: busy %v summary %v notice %q", p.busy, p.dialogs.summary != nil, p.notice)
	}
	if len(p.batch.marked) != 1 {
		t.Fatalf("marks %v", p.batch.marked)
	}
	if r, _ := env.Queue.Get("c-one"); r.State != approval.Pending {
		t.Fatalf("state %s", r.State)
	}
}

// A mark goes with its task: a task decided elsewhere leaves the queue and
// its mark with it; A with nothing marked says what to do.
func TestMarkLeavesWithItsTask(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("m-one", "/media/one.mkv"))
	env.Submit(env.Play("m-two", "/media/two.mkv"))
	p := loadedPane(t, env)
	if why := disabledReason(p.Update(keyMsg("A"))); !strings.Contains(why, "mark tasks with space") {
		t.Fatalf("A with nothing marked: %q", why)
	}
	if strings.Contains(footerKeys(p.ShortHelp()), "A") {
		t.Fatal("the footer offers A with nothing marked")
	}
	p.Update(keyMsg(" "))
	if !p.batch.marked["m-one"] || !strings.Contains(footerKeys(p.ShortHelp()), "A") {
		t.Fatalf("space did not mark m-one (%v) or A is not offered", p.batch.marked)
	}
	if _, _, err := env.Open().Decide(context.Background(), "m-one", approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	p.Update(p.reload(nil)())
	if len(p.batch.marked) != 0 {
		t.Fatalf("the mark of a task no longer pending stayed: %v", p.batch.marked)
	}
	lines, _ := p.render(100, 30)
	if strings.Contains(ansi.Strip(strings.Join(lines, "\n")), "marked") {
		t.Fatalf("the heading still counts a mark:\n%s", ansi.Strip(strings.Join(lines, "\n")))
	}
}

// Where this pane may not decide (require_operator_key), neither space
// marks nor A is offered: space scrolls the preview as it always did, A
// says how decisions are made here, and the ? overlay lists neither.
func TestBatchKeysNotOfferedWhereDecisionsAreRefused(t *testing.T) {
	env := operatorEnv(t)
	env.Submit(env.Play("r-one", "/media/one.mkv"))
	p := New(Options{Queue: env.Queue, Operator: "operator:ada", Now: env.Clock.Now,
		DecisionsRefused: "decisions on this home are made by an operator over SSH"}, styles())
	t.Cleanup(p.Close)
	p.Update(p.reload(nil)())
	p.Update(p.loadView(p.queue.selID)())
	p.Update(keyMsg(" "))
	p.Update(keyMsg("A"))
	if len(p.batch.marked) != 0 || p.dialogs.summary != nil || p.batch.reading {
		t.Fatalf("marked %v, summary %v", p.batch.marked, p.dialogs.summary != nil)
	}
	if !strings.Contains(p.notice, "operator over SSH") {
		t.Fatalf("A said %q", p.notice)
	}
	for _, g := range p.FullHelp() {
		for _, b := range g {
			if k := b.Help().Key; k == "space" || k == "A" {
				t.Fatalf("the overlay lists %q", k)
			}
		}
	}
}

// Every summary field from outside goes through safetext; the warnings
// shown are the preview's, and a clean task has none.
func TestBatchWarnings(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("w-clean", "https://media.example.com/a.mp4"))
	env.Submit(env.Play("w-num", warnedURI))
	env.Submit(env.Play("w-hidden", "https://media.example.com/a\u200b.mp4"))
	for id, want := range map[string]string{"w-clean": "", "w-num": "127.0.0.1", "w-hidden": "hidden"} {
		v, err := env.Queue.Preview(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(BatchWarnings(v), "; ")
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%s: warnings %q, want %q", id, got, want)
		}
		if id == "w-clean" && MediaHost(v) != "media.example.com" {
			t.Errorf("media host %q", MediaHost(v))
		}
	}
}

// No blind approval: a summary that does not fit whole is not opened (the
// pane says so), and one a resize hides takes no y.
func TestBatchSummaryOnlyWhereItFits(t *testing.T) {
	env := batchEnv(t)
	p, m, clk := summaryPane(t, env)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 14})
	if m.Legible() {
		t.Fatalf("a summary of 4 tasks fits in 100×14:\n%s", ansi.Strip(m.Render()))
	}
	clk.Advance(GraceMax)
	press(m, "y")
	if p.busy {
		t.Fatal("y approved a summary the screen did not show")
	}
	p.dialogs.close()
	clk.Advance(GraceMax)
	p.Update(p.Update(keyMsg("A"))())
	if p.dialogs.summary != nil || !strings.Contains(p.notice, "too small to show the summary of 4 tasks") {
		t.Fatalf("summary %v, notice %q", p.dialogs.summary != nil, p.notice)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for id := range p.batch.marked {
		if r, _ := env.Queue.Get(id); r.State != approval.Pending {
			t.Fatalf("%s: %s", id, r.State)
		}
	}
}

// The report puts what was not approved first and counts what it cannot show.
func TestBatchReportLines(t *testing.T) {
	env := approvaltest.New(t)
	p := loadedPane(t, env)
	for i := range 12 {
		p.batch.report = append(p.batch.report, batchLine{text: fmt.Sprintf("task-%02d", i), ok: i != 10})
	}
	got := ansi.Strip(strings.Join(p.reportLines(100), "\n"))
	lines := strings.Split(got, "\n")
	if len(lines) != maxReport+1 || !strings.Contains(lines[0], "task-10") || !strings.Contains(lines[1], "task-00") ||
		!strings.Contains(lines[maxReport], "… and 4 more (4 approved and executed") {
		t.Fatalf("report:\n%s", got)
	}
}
