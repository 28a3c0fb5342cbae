package searchpane

import (
	"strings"
	"testing"
)

// An editor that fails says which command ran: $VISUAL or $EDITOR may not
// be what the person thinks it is.
func TestEditorFailureNamesTheCommand(t *testing.T) {
	needBackend(t, "ugrep")
	root := fixtureTree(t)
	o := baseOptions(root, "ugrep")
	o.Getenv = func(k string) string {
		if k == "EDITOR" {
			return "/nonexistent/editor -w"
		}
		return ""
	}
	p := New(o, styles())
	msgs := append(keys("/"), typed("needle")...)
	msgs = append(msgs, kp("enter"), waitMarker{settled("needle")}, kp("esc"), kp("enter"))
	out := screen(t, p, 120, 20, msgs, func(s Snapshot) bool { return s.Notice != "" })
	want := "editor failed: /nonexistent/editor -w +3 " + p.root + "/docs/guide.md"
	if !strings.Contains(p.Snapshot().Notice, want) {
		t.Fatalf("notice %q, want it to start %q", p.Snapshot().Notice, want)
	}
	if !strings.Contains(out, "editor failed: /nonexistent/editor -w +3") {
		t.Fatalf("the failure is not on screen:\n%s", out)
	}
}
