package ui_test

import (
	"os"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/exec/search"
	approvalspane "github.com/vigil-dev/vigil/panes/approvals"
	auditpane "github.com/vigil-dev/vigil/panes/audit"
	memorypane "github.com/vigil-dev/vigil/panes/memory"
	searchpane "github.com/vigil-dev/vigil/panes/search"
	"github.com/vigil-dev/vigil/themes"
	"github.com/vigil-dev/vigil/ui"
)

// The README's key table is generated from the keymaps' rows: when a row
// changes and the README does not, this fails. `go run . keybindings --markdown`
// prints the section to paste between the markers.
func TestReadmeKeyTableIsGenerated(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- keys:begin -->\n", "<!-- keys:end -->"
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q … %q markers", strings.TrimSpace(begin), end)
	}
	got := s[i+len(begin) : j]
	pal, _ := themes.Palettes("dark")
	st := themes.New(pal)
	sp := searchpane.New(searchpane.Options{Search: search.DefaultOptions(t.TempDir())}, st)
	defer sp.Close()
	want := ui.KeysMarkdown(4, sp, memorypane.New(memorypane.Options{}, st), approvalspane.New(approvalspane.Options{}, st), auditpane.New("", st))
	if got != want {
		t.Fatalf("README.md's key table differs from the keymaps; run `go run . keybindings --markdown` and paste it between the markers.\nwant:\n%s\ngot:\n%s", want, got)
	}
	for _, k := range []string{"`tab`", "`?`", "`alt+1–4`", "`/`", "`y`"} {
		if !strings.Contains(want, k) {
			t.Errorf("the table lacks %s:\n%s", k, want)
		}
	}
}
