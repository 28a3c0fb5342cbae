package approvalspane

import (
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/ui"
)

// At 60×20 the request's body is below the fold: a does not open the
// prompt until the preview has been shown to its end, and says how much is
// left; once it has, a opens it (scrolled back to the top, as always). A
// new preview hash, or another task, has to be read again.
func TestApproveNeedsTheWholeRequestSeen(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("below", secretURI+"&"+strings.Repeat("segment=abcdefghij&", 10)+"end=1"))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 20})
	clk.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm != nil {
		t.Fatalf("a opened the prompt on a request partly below the fold:\n%s", ansi.Strip(m.Render()))
	}
	screen := strings.Join(strings.Fields(ansi.Strip(m.Render())), " ") // the notice wraps
	said := regexp.MustCompile(`(\d+) more lines below: scroll to the end \(pgdn/J\) before approving`).FindStringSubmatch(screen)
	hint := regexp.MustCompile(`more below \((\d+) lines\)`).FindStringSubmatch(screen)
	if said == nil || hint == nil || said[1] != hint[1] {
		t.Fatalf("the refusal does not say how much is left, as the preview's hint does:\n%s", screen)
	}
	if press(m, "y"); p.busy {
		t.Fatal("y approved without a prompt")
	}
	// scrolled part way: still refused
	press(m, "J")
	if !strings.Contains(ansi.Strip(m.Render()), "more below") {
		t.Fatalf("one J reached the end: the test needs a longer request\n%s", ansi.Strip(m.Render()))
	}
	press(m, "a")
	if p.dialogs.confirm != nil {
		t.Fatal("a opened the prompt with the request's end not yet shown")
	}
	for i := 0; i < 10 && strings.Contains(ansi.Strip(m.Render()), "more below"); i++ {
		press(m, "J")
	}
	press(m, "a")
	if p.dialogs.confirm == nil {
		t.Fatalf("a did not open the prompt after the whole request was shown: %q\n%s", p.notice, ansi.Strip(m.Render()))
	}
	if got := ansi.Strip(m.Render()); !strings.Contains(got, "SIM sim://living-room") || !strings.Contains(got, "Approve below?") {
		t.Fatalf("the prompt is not under the top of the request:\n%s", got)
	}
	press(m, "n")

	// a new preview (another hash) is another request: read it again
	v := *p.queue.view
	v.BindingHash = "0000000000000000"
	p.Update(viewMsg{id: "below", view: v})
	clk.Advance(GraceMax)
	m.Render()
	press(m, "a")
	if p.dialogs.confirm != nil {
		t.Fatal("a opened the prompt on a changed request not yet read to its end")
	}
	if !strings.Contains(p.notice, "more lines below") {
		t.Fatalf("notice %q", p.notice)
	}
}

// Where the whole request fits, a opens the prompt at once (what the tmux
// tests at 120×40 rely on).
func TestApproveAtOnceWhereTheRequestFits(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("fits", secretURI))
	clk := approvaltest.NewClock()
	p := loadedPane(t, env, clk)
	m := ui.New(ui.Options{Panes: []panes.Pane{p}, Theme: "dark"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	clk.Advance(GraceMax)
	press(m, "a")
	if p.dialogs.confirm == nil {
		t.Fatalf("a did not open the prompt: %q", p.notice)
	}
}
