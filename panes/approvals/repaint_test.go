package approvalspane

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// Countdowns show seconds where they can matter (a deadline's last two
// minutes) and minutes elsewhere, so a queue of deadlines minutes away does
// not change its text, and cost a repaint, every second.
func TestCountdownShowsSecondsOnlyInTheLastTwoMinutes(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0:00"},
		{0, "0:00"},
		{32*time.Second + 900*time.Millisecond, "0:32"},
		{time.Minute + 59*time.Second, "1:59"},
		{2 * time.Minute, "2m"},
		{9*time.Minute + 59*time.Second, "9m"},
		{59*time.Minute + 59*time.Second, "59m"},
		{time.Hour, "1h00m"},
		{5*time.Hour + 59*time.Minute + 59*time.Second, "5h59m"},
		{30 * time.Hour, "30h00m"},
	} {
		if got := countdown(c.d); got != c.want {
			t.Errorf("countdown(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// An age is read at a glance: seconds in its first minute, then minutes.
func TestElapsedIsSecondsThenMinutes(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{59*time.Minute + 59*time.Second, "59m"},
		{2*time.Hour + 5*time.Minute, "2h05m"},
	} {
		if got := elapsed(c.d); got != c.want {
			t.Errorf("elapsed(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// The frame Legible laid out serves only the View right after it: a message
// in between (here a key moving the selection, and a second passing) is
// drawn, not the frame from before it.
func TestViewAfterAnUpdateIsNotTheLegibleFrame(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("first", "/media/a.mkv"))
	env.Submit(env.Play("second", "/media/b.mkv"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	p.Legible(100, 30)
	before := ansi.Strip(p.View(100, 30))
	if !strings.Contains(before, "▸ first") {
		t.Fatalf("the first task is not selected:\n%s", before)
	}
	p.Legible(100, 30)
	clk.Advance(GraceMax)
	p.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	after := ansi.Strip(p.View(100, 30))
	if !strings.Contains(after, "▸ second") {
		t.Fatalf("the view drawn after ↓ is the frame from before it:\n%s", after)
	}
}
