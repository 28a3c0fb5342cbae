package searchpane

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// previewText is the preview column of a 120-wide frame.
func previewText(p *Pane) string {
	var out []string
	for _, l := range strings.Split(ansi.Strip(p.View(120, 30)), "\n") {
		if _, right, ok := strings.Cut(l, "│"); ok {
			out = append(out, right)
		}
	}
	return strings.Join(out, "\n")
}

// A file edited since the preview read it (in the editor enter opened, or
// by anyone) is read again by the next search and when the editor
// returns: the preview shows the file as it is, with the new hit's
// line marked, not the old text under the new line number.
func TestPreviewRereadsAFileAfterARunAndTheEditor(t *testing.T) {
	files := map[string]string{"a.go": "needle one\nx\n"}
	o := fakeOptions(t)
	write(t, o.Search.Root, "a.go", files["a.go"])
	o.Engine = fakeEngine(files)
	p := New(o, styles())
	t.Cleanup(p.Close)
	runTyped(t, p, "needle")
	drain(t, p, p.Update(panetest.Key("p")))
	if pv := previewText(p); !strings.Contains(pv, "needle one") {
		t.Fatalf("preview:\n%s", pv)
	}
	files["a.go"] = "new first line\nneedle two\n"
	write(t, o.Search.Root, "a.go", files["a.go"])
	drain(t, p, p.Update(panetest.Key("ctrl+r")))
	if pv := previewText(p); !strings.Contains(pv, "needle two") || strings.Contains(pv, "needle one") {
		t.Fatalf("after ctrl+r the preview shows the old file:\n%s", pv)
	}
	write(t, o.Search.Root, "a.go", "new first line\nneedle two, edited\n")
	drain(t, p, p.Update(editorMsg{}))
	if pv := previewText(p); !strings.Contains(pv, "needle two, edited") {
		t.Fatalf("back from the editor the preview shows the old file:\n%s", pv)
	}
}
