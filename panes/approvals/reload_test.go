package approvalspane

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// Ticks repaint the countdowns and reload nothing while no deadline has
// passed: an idle pane does no I/O (it used to reload every task each
// second). A task whose deadline passed is reloaded, alone.
func TestTicksReloadOnlyTasksPastTheirDeadline(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("first", "/media/a.mkv"))
	env.Clock.Advance(time.Minute)
	env.Submit(env.Play("second", "/media/b.mkv"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	base := p.load.reloads
	for range resyncTicks - 1 {
		clk.Advance(time.Second)
		p.Update(tickMsg{})
	}
	if p.load.reloads != base || p.load.loading {
		t.Fatalf("%d ticks started %d reloads", resyncTicks-1, p.load.reloads-base)
	}
	if !strings.Contains(strings.Join(mustRender(p, 100, 30), "\n"), "expires in 5m") { // 10:00 - 4:59
		t.Fatalf("the countdown did not move:\n%s", strings.Join(mustRender(p, 100, 30), "\n"))
	}
	// first's deadline passes on the pane's clock: only it is asked for
	clk.Advance(10*time.Minute - (resyncTicks-1)*time.Second)
	p.Update(tickMsg{})
	if p.load.reloads != base+1 || !p.load.loading {
		t.Fatalf("a task past its deadline was not reloaded (%d reloads)", p.load.reloads-base)
	}
	// and the safety net: a full reload every resyncTicks (five minutes) of ticks
	p.load.loading = false
	for range resyncTicks {
		p.Update(tickMsg{})
	}
	if !p.load.loading {
		t.Fatal("no full reload after resyncTicks ticks")
	}
}

// startIdle is a real program whose ticks come once an hour: whatever it
// shows after a change came through the queue's feed.
func startIdle(t *testing.T, env *approvaltest.Env) (*teatest.TestModel, *Pane) {
	t.Helper()
	p := New(Options{Queue: env.Queue,
		Operator: "operator:ada", Now: env.Clock.Now, Tick: time.Hour}, styles())
	t.Cleanup(p.Close)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	return tm, p
}

// A task submitted by another process shows up without a tick: the queue's
// feed names it (its index marker and its audit entry), and only it is read.
func TestNewTaskAppearsThroughTheFeed(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("already", "/media/a.mkv"))
	tm, _ := startIdle(t, env)
	waitFor(t, tm, "already")
	other := env.Open()
	t0 := time.Now()
	if _, err := other.Submit(context.Background(), env.Play("arrived", "/media/b.mkv"), "cli"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "arrived")
	t.Logf("a new task on screen %v after its submission returned", time.Since(t0))
	tm.Quit()
}

// A decision made elsewhere reaches the screen through the feed (the audit
// log's new entry names it), without a tick.
func TestDecisionElsewhereThroughTheAuditLog(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("stays", "/media/a.mkv"))
	env.Submit(env.Play("denied-there", "/media/b.mkv"))
	tm, _ := startIdle(t, env)
	waitFor(t, tm, "denied-there")
	other := env.Open()
	if _, _, err := other.Decide(context.Background(), "denied-there", approval.Decision{By: "operator:bob", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, "was decided elsewhere: denied by operator:bob")
	tm.Quit()
}

func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), s) },
		teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

// BenchmarkIdleTick is what a second of an idle Approvals pane costs with
// 1,000 pending tasks: one tick and one repaint (ns/op ÷ 1e9 is the share
// of one core; the goal is ≤ 1%). The pane is over a real (empty) queue:
// without one it draws only "approvals are unavailable", not the list.
func BenchmarkIdleTick(b *testing.B) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	env := approvaltest.New(b)
	p := New(Options{Queue: env.Queue, Now: func() time.Time { return now }, Tick: time.Second}, styles())
	for i := range 1000 {
		at := now.Add(-time.Duration(i) * 100 * time.Millisecond)
		p.queue.list = append(p.queue.list, approval.Record{TaskID: fmt.Sprintf("task-%04d", i), CapabilityID: "MEDIA_PLAY",
			State: approval.Pending, Agent: "agent:planner", Device: "living-room", SubmittedAt: at,
			ExpiresAt: at.Add(10 * time.Minute)})
	}
	p.queue.selID = p.queue.list[0].TaskID
	// a preview on screen, as when idle, and never re-read: the benchmark
	// runs no command, so a read would never answer
	p.queue.view = &approval.View{Record: p.queue.list[0]}
	p.queue.viewAge = -1 << 30
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	b.ReportAllocs()
	for b.Loop() {
		p.Update(tickMsg{})
		p.load.ticks = 0
		_ = m.Render()
	}
}
