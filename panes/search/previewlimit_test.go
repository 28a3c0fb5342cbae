package searchpane

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// A hit past the part of a file the preview reads (the first
// scope.OpenMaxBytes) is not silently replaced by other lines: the preview
// shows the hit's own line, marked, and says why the rest is not there.
// So does a hit in a file that has since become shorter.
func TestPreviewOfAHitPastWhatWasRead(t *testing.T) {
	filler := strings.Repeat(strings.Repeat("f", 99)+"\n", scope.OpenMaxBytes/100+10)
	files := map[string]string{
		"huge.log":  filler + "the needle at the end\n",
		"short.txt": "one\ntwo\nthree\nneedle four\n",
	}
	o := fakeOptions(t)
	for name, body := range files {
		write(t, o.Search.Root, name, body)
	}
	o.Engine = fakeEngine(files)
	p := New(o, styles())
	t.Cleanup(p.Close)
	runTyped(t, p, "needle")
	drain(t, p, p.Update(panetest.Key("p")))
	view := ansi.Strip(p.View(120, 30))
	if !strings.Contains(view, "the needle at the end") || !strings.Contains(view, "past the first 4 MiB") {
		t.Fatalf("the hit past the read part is not previewed:\n%s", view)
	}
	if strings.Contains(view, "ffffffffff│") || strings.Count(view, "fffff") > 1 {
		// the list shows no filler; in the preview filler lines are other lines than the hit
		t.Fatalf("the preview shows other lines as if they were around the hit:\n%s", view)
	}
	write(t, o.Search.Root, "short.txt", "one\n") // shortened since the search
	drain(t, p, p.Update(panetest.Key("j")))
	view = ansi.Strip(p.View(120, 30))
	if !strings.Contains(view, "needle four") || !strings.Contains(view, "the file has 1 line now") {
		t.Fatalf("the hit in a shortened file is not previewed:\n%s", view)
	}
}
