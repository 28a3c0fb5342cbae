package searchpane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Path completion lists directories off the UI goroutine and never offers
// one the [sandbox] deny globs hide; → at the end of the field accepts it.
func TestPathCompletionHonoursDenyGlobs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"src", "secrets", "Secret-keys", ".ssh", "sample"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := fakeOptions(t)
	o.Search.Root = root
	o.Search.Deny = []string{"**/secret*/", "**/.ssh/"}
	p := New(o, styles())
	defer p.Close()
	p.Update(kp("/"))
	for p.composer.field != fPath {
		p.Update(kp("tab"))
	}
	if cmd := p.Update(kp("s")); cmd == nil {
		t.Fatal("no listing asked for")
	}
	if dir, names := p.composer.completions(); dir != "" || names != nil {
		t.Fatal("completions were read on the UI goroutine")
	}
	c := listDirs(p.root, "s", conservativeDeny(o.Search.Deny))
	p.Update(completionMsg{c: c})
	if got := strings.Join(c.names, ","); got != "sample,src" {
		t.Fatalf("completions %q: a denied directory was offered", got)
	}
	if view := ansi.Strip(p.View(120, 36)); !strings.Contains(view, "dirs: sample/  src/") || strings.Contains(view, "secret") {
		t.Fatalf("view:\n%s", view)
	}
	p.Update(kp("r"))
	p.Update(completionMsg{c: listDirs(p.root, "sr", conservativeDeny(o.Search.Deny))})
	p.Update(kp("right"))
	if got := p.composer.inputs[fPath].Value(); got != "src/" {
		t.Fatalf("→ completed to %q", got)
	}
	if c := listDirs(p.root, ".", conservativeDeny(o.Search.Deny)); len(c.names) != 0 {
		t.Fatalf(".ssh offered: %v", c.names)
	}
	// a stale listing (for an older value) is not shown
	p.Update(completionMsg{c: completion{value: "zz", names: []string{"zzz"}}})
	if _, names := p.composer.completions(); names != nil {
		t.Fatal("a listing for another value was used")
	}
}
