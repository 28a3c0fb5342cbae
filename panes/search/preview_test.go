package searchpane

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// longOptions is the pane over one file of 200 lines whose hits are lines
// 100 and 150.
func longOptions(t *testing.T) Options {
	lines := make([]string, 200)
	for i := range lines {
		lines[i] = "line " + strconv.Itoa(i+1)
	}
	lines[99], lines[149] = "needle at 100", "needle at 150"
	files := map[string]string{"long.go": strings.Join(lines, "\n") + "\n"}
	root := t.TempDir()
	write(t, root, "long.go", files["long.go"])
	o := baseOptions(root, "")
	o.Engine = fakeEngine(files)
	o.Backends = func(search.Options) []search.BackendInfo { return []search.BackendInfo{{Name: "fake", OK: true}} }
	return o
}

var previewRow = regexp.MustCompile(`│[ ›]\s*(\d+)│`)

// previewLines is the line numbers the side-by-side preview shows, top to
// bottom, and the screen row of its first body line.
func previewLines(t *testing.T, p *Pane) (nums []int, firstY int) {
	t.Helper()
	firstY = -1
	for y, l := range strings.Split(ansi.Strip(p.View(120, 36)), "\n") {
		if m := previewRow.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
			if firstY < 0 {
				firstY = y
			}
		}
	}
	if len(nums) == 0 {
		t.Fatalf("no preview drawn:\n%s", ansi.Strip(p.View(120, 36)))
	}
	return nums, firstY
}

// The preview opens centred on the hit; the wheel over it and J/K scroll it
// without moving the selection; a new selection centres again.
func TestPreviewCentresOnTheHitAndScrolls(t *testing.T) {
	p := New(longOptions(t), styles())
	defer p.Close()
	runTyped(t, p, "needle")
	drain(t, p, p.Update(panetest.Key("p")))
	nums, y := previewLines(t, p)
	mid := nums[len(nums)/2]
	if mid < 99 || mid > 101 {
		t.Fatalf("preview lines %v: the hit (100) is not in the middle", nums)
	}
	sel := p.results.list.Cursor()
	p.Update(panetest.WheelDown(90, y+2)) // over the preview, right of the list
	after, _ := previewLines(t, p)
	if after[0] != nums[0]+3 || p.results.list.Cursor() != sel {
		t.Fatalf("wheel over the preview: first line %d → %d, cursor %d → %d", nums[0], after[0], sel, p.results.list.Cursor())
	}
	p.Update(panetest.Key("K"))
	if again, _ := previewLines(t, p); again[0] != after[0]-1 {
		t.Fatalf("K: first line %d, want %d", again[0], after[0]-1)
	}
	p.Update(panetest.WheelDown(10, y+2)) // over the list: the selection moves
	if p.results.list.Cursor() == sel {
		t.Fatal("wheel over the list did not move the selection")
	}
	drain(t, p, nil)
	next, _ := previewLines(t, p)
	if mid := next[len(next)/2]; mid < 149 || mid > 151 {
		t.Fatalf("after moving to the second hit the preview shows %v", next)
	}
}

// The document viewer pages by its own height.
func TestDocumentPagesByItsHeight(t *testing.T) {
	p := New(fakeOptions(t), styles())
	defer p.Close()
	var body []string
	for i := range 100 {
		body = append(body, "body line "+strconv.Itoa(i))
	}
	p.viewer.loading = true // as enter on a hit does: the answer is awaited
	p.Update(docMsg{doc: scope.Document{Scope: "notes", Kind: "files", ID: "a.txt", Title: "a.txt", Text: strings.Join(body, "\n")}})
	first := func() string {
		return strings.TrimSpace(strings.Split(ansi.Strip(p.View(80, 21)), "\n")[1])
	}
	if got := first(); got != "body line 0" {
		t.Fatalf("opened at %q", got)
	}
	p.Update(panetest.Key("pgdown"))
	if got := first(); got != "body line 19" { // 20 body rows, one kept
		t.Fatalf("page down: %q", got)
	}
	p.Update(panetest.Key("G"))
	if got := first(); got != "body line 80" {
		t.Fatalf("end: %q", got)
	}
	p.Update(panetest.WheelUp(3, 5))
	if got := first(); got != "body line 77" {
		t.Fatalf("wheel up: %q", got)
	}
}

// The file errors scroll by line, page and wheel; a new list of errors is
// laid out anew, not appended to the old one's lines.
func TestFileErrorsScrollAndRelayout(t *testing.T) {
	p := New(fakeOptions(t), styles())
	defer p.Close()
	for i := range 40 {
		p.results.fileErrs = append(p.results.fileErrs, search.FileError{Path: "dir/f" + strconv.Itoa(i), Error: "permission denied"})
	}
	p.results.showErrs, p.focus = true, focusResults
	first := func() string {
		for _, l := range strings.Split(ansi.Strip(p.View(80, 20)), "\n") {
			if strings.HasPrefix(l, "  dir/") {
				return strings.Fields(l)[0]
			}
		}
		return ""
	}
	if got := first(); got != "dir/f0:" {
		t.Fatalf("first %q", got)
	}
	p.Update(panetest.Key("j"))
	p.Update(panetest.WheelDown(3, 8))
	if got := first(); got != "dir/f4:" {
		t.Fatalf("after j and a notch: %q", got)
	}
	p.Update(panetest.Key("pgdown"))
	if got := first(); got == "dir/f4:" || got == "" {
		t.Fatalf("pgdn did not move: %q", got)
	}
	p.results.fileErrs = []search.FileError{{Path: "other/x", Error: "broken symbolic link"}}
	if v := ansi.Strip(p.View(80, 20)); strings.Contains(v, "dir/f") || !strings.Contains(v, "other/x: broken symbolic link") {
		t.Fatalf("a new list kept the old one's lines:\n%s", v)
	}
}
