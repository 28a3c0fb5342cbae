package approvalspane

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// A long task id (up to 128 characters are valid) is cut in the rows that
// are not selected, so their deadline stays on screen from 60 columns (the
// row of a 64-character id lost its 40-second lease deadline at 60).
func TestLongIDKeepsTheDeadline(t *testing.T) {
	env := approvaltest.New(t)
	env.Submit(env.Play("aaa", "/media/a.mkv"))
	long := strings.Repeat("x", 60) + "-end"
	env.Submit(env.Manifest(long, "MEDIA_PLAY", map[string]any{"media_uri": "/m/a.mkv", "target_device": "living-room"}, 40*time.Second))
	p := loadedPane(t, env)
	if p.queue.selID != "aaa" {
		t.Fatalf("selected %q", p.queue.selID)
	}
	for w := 60; w <= 140; w++ {
		out := ansi.Strip(p.View(w, 14))
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "xxxxxxxxxx") {
				row = l
			}
		}
		for _, want := range []string{"xxxxxxxxxx", "living-room", "lease", "0:40"} {
			if !strings.Contains(row, want) {
				t.Fatalf("%d cols: the long id's row %q lacks %q:\n%s", w, row, want, out)
			}
		}
	}
}
