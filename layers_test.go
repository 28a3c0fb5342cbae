package main

import (
	"os/exec"
	"strings"
	"testing"
)

// layerRule: no package matching from may depend, directly or through
// others, on a package matching to.
type layerRule struct {
	from, to []string // import path prefixes relative to the module ("exec/" is a folder, "panes" one package)
	why      string
}

var layerRules = []layerRule{
	{[]string{"exec/", "audit", "preview", "safetext", "config", "internal/"},
		[]string{"charm.land/", "ui", "panes", "themes", "cli"}, "the engine and what is below it know no screen"},
	{[]string{"panes", "panes/", "ui"}, []string{"exec/natsqueue"}, "a screen knows no transport"},
	{[]string{"panes", "panes/panetest"}, []string{"exec/", "audit", "preview"}, "the widget kit knows no engine"},
	{[]string{"preview"}, []string{"exec/"}, "preview returns plain errors"},
	{[]string{"audit"}, []string{"exec/", "preview"}, "the log is below the engine"},
	{[]string{"safetext"}, []string{""}, "safetext is a leaf"},
}

const module = "github.com/vigil-dev/vigil"

// TestLayers holds the import graph to the house's layers (ARCHITECTURE.md),
// transitively, as `go list -deps` reports it.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		for _, r := range layerRules {
			if !matches(pkg, r.from) {
				continue
			}
			for _, dep := range fields[1:] {
				if d := rel(dep); d != dep || strings.HasPrefix(dep, "charm.land/") {
					if d != pkg && matches(d, r.to) {
						t.Errorf("%s depends on %s: %s", pkg, d, r.why)
					}
				}
			}
		}
	}
}

// rel is a module path relative to the module ("exec/search"), or the
// path unchanged for another module.
func rel(p string) string {
	if p == module {
		return "."
	}
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r
	}
	return p
}

// matches: p is one of the packages, or under one of the folders ("exec/"),
// named in set; "" matches any package of the module.
func matches(p string, set []string) bool {
	for _, s := range set {
		switch {
		case s == "":
			return p != "." && !strings.Contains(p, ".")
		case strings.HasSuffix(s, "/") && strings.HasPrefix(p, s):
			return true
		case p == s:
			return true
		}
	}
	return false
}
