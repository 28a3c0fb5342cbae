package searchpane

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// underlined is an SGR sequence turning underline on before a match's first letter.
var underlined = regexp.MustCompile(`\x1b\[(?:[0-9:]+;)*4(?:;[0-9:]+)*m[Nn]`)

// Under NO_COLOR the results still mark their matches: underlined (the
// theme's colours are gone and bold alone is often drawn like plain text).
func TestNoColorUnderlinesMatches(t *testing.T) {
	needBackend(t, "ugrep")
	root := fixtureTree(t)
	for _, noColor := range []bool{false, true} {
		o := baseOptions(root, "ugrep")
		o.Getenv = func(k string) string {
			if k == "NO_COLOR" && noColor {
				return "1"
			}
			return ""
		}
		p := typing(New(o, styles()))
		runLive(t, p, "needle")
		var b bytes.Buffer
		w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.Ascii}
		if _, err := w.WriteString(p.View(100, 20)); err != nil {
			t.Fatal(err)
		}
		if got := underlined.MatchString(b.String()); got != noColor {
			t.Errorf("NO_COLOR %v: matches underlined %v:\n%q", noColor, got, b.String())
		}
		p.Close()
	}
}
