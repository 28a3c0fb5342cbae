package searchpane

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/search"
)

// A running search that has found nothing yet shows the files it has
// scanned; ctrl+x is first in the footer while it runs, and stopping leaves
// "stopped · N files scanned" on the pane, not a blank list.
func TestRunningSearchShowsProgressAndStops(t *testing.T) {
	o := baseOptions(t.TempDir(), "ugrep")
	o.Engine = func(ctx context.Context, _ search.Request, _ search.Options, emit func(search.Batch)) (search.Response, error) {
		emit(search.Batch{FilesScanned: 42})
		<-ctx.Done()
		return search.Response{}, ctx.Err()
	}
	p := typing(New(o, styles()))
	defer p.Close()
	for _, k := range typed("slow") {
		p.Update(k)
	}
	pump := press(p, "enter")
	st := p.cur
	p.Update(pump()) // the progress batch
	view := ansi.Strip(p.View(100, 20))
	if !strings.Contains(view, "searching… 42 files scanned so far") {
		t.Fatalf("no progress while running:\n%s", view)
	}
	if f := p.ShortHelp(); len(f) == 0 || f[0].Help().Key != "ctrl+x" {
		t.Fatalf("footer while running does not start with ctrl+x: %v", f)
	}
	press(p, "ctrl+x")
	if st.ctxErr() == nil {
		t.Fatal("ctrl+x did not cancel the search")
	}
	view = ansi.Strip(p.View(100, 20))
	if !strings.Contains(view, "stopped · 42 files scanned") {
		t.Fatalf("stopping left no word:\n%s", view)
	}
	for _, b := range p.ShortHelp() {
		if b.Help().Key == "ctrl+x" {
			t.Fatal("ctrl+x is still in the footer after the search stopped")
		}
	}
}

// A path the engine refuses for the sandbox names the sandbox root.
func TestPathOutsideTheSandboxNamesTheRoot(t *testing.T) {
	needBackend(t, "ugrep")
	root := fixtureTree(t)
	p := typing(New(baseOptions(root, "ugrep"), styles()))
	defer p.Close()
	p.composer.inputs[fPath].SetValue("../..")
	for _, k := range typed("needle") {
		p.Update(k)
	}
	drain(t, p, press(p, "enter"))
	if p.composer.errField != fPath || !strings.Contains(p.composer.errText, "sandbox root "+p.root) {
		t.Fatalf("error on field %d: %q, want the path field naming %s", p.composer.errField, p.composer.errText, p.root)
	}
	if view := ansi.Strip(p.View(200, 30)); !strings.Contains(view, p.root) {
		t.Fatalf("the root is not on screen:\n%s", view)
	}
}
