// Package demotree writes the demo home's sample source tree: a few hundred
// small, varied, deterministic files for the Search pane to search.
package demotree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var (
	modules = []string{"billing", "catalog", "checkout", "inventory", "media", "notify", "search", "session", "shipping", "users"}
	nouns   = []string{"Order", "Invoice", "Track", "Playlist", "Device", "Query", "Lease", "Audit", "Cart", "Profile", "Token", "Session"}
	verbs   = []string{"Load", "Save", "Find", "Apply", "Verify", "Render", "Queue", "Resolve", "Cancel", "Refresh"}
	words   = strings.Fields("the agent reads a request and checks every field before it acts; errors name the field and the rule; " +
		"nothing half-writes a file; a lease expires; the person approves or denies; results are signed and stored once")
)

// Write fills dir with the tree and returns how many files it wrote. The same
// seed always gives the same bytes.
func Write(dir string) (int, error) {
	r := rand.New(rand.NewPCG(42, 1))
	n := 0
	write := func(rel, body string) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(p, []byte(body), 0o644)
	}
	for _, mod := range modules {
		for i := 0; i < 24; i++ {
			noun := nouns[r.IntN(len(nouns))]
			if err := write(fmt.Sprintf("src/%s/%s_%02d.go", mod, strings.ToLower(noun), i), goFile(r, mod, noun)); err != nil {
				return n, err
			}
		}
		if err := write(fmt.Sprintf("docs/%s.md", mod), doc(r, mod)); err != nil {
			return n, err
		}
		if err := write(fmt.Sprintf("config/%s.toml", mod), fmt.Sprintf("[%s]\nenabled = true\nmax_items = %d\ntimeout = \"%ds\"\n", mod, 10+r.IntN(990), 1+r.IntN(59))); err != nil {
			return n, err
		}
	}
	for i := 0; i < 30; i++ {
		if err := write(fmt.Sprintf("logs/2026-11-%02d.log", i+1), logFile(r, i)); err != nil {
			return n, err
		}
	}
	extras := map[string]string{
		"README.md":            "# Demo workspace\n\nA small service tree for trying Vigil's search: try `func \\w+Context`, `TODO`, or `lease`.\n",
		"notes/ünïcödé.txt":    "Unicode names are searched too: café, naïve, Zürich.\n",
		"notes/with space.txt": "A file name with a space. TODO: rename me.\n",
		".hidden/secret.txt":   "hidden files are skipped unless hidden is on. TODO hidden\n",
		".gitignore":           "build/\n",
		"build/output.txt":     "ignored by .gitignore unless no-ignore is on. TODO ignored\n",
	}
	for rel, body := range extras {
		if err := write(rel, body); err != nil {
			return n, err
		}
	}
	return n, nil
}

func goFile(r *rand.Rand, mod, noun string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n)\n\n", mod)
	fmt.Fprintf(&b, "// %s is part of the %s module.\ntype %s struct {\n\tID   string\n\tName string\n}\n\n", noun, mod, noun)
	for j := 0; j < 3+r.IntN(5); j++ {
		verb := verbs[r.IntN(len(verbs))]
		fmt.Fprintf(&b, "// %s%s %s.\n", verb, noun, sentence(r, 8))
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "func %s%sContext(ctx context.Context, id string) (*%s, error) {\n", verb, noun, noun)
		} else {
			fmt.Fprintf(&b, "func %s%s(id string) (*%s, error) {\n", verb, noun, noun)
		}
		fmt.Fprintf(&b, "\tif id == \"\" {\n\t\treturn nil, errors.New(\"%s: id is required\")\n\t}\n", strings.ToLower(noun))
		if r.IntN(4) == 0 {
			fmt.Fprintf(&b, "\t// TODO: %s\n", sentence(r, 6))
		}
		fmt.Fprintf(&b, "\treturn &%s{ID: id}, nil\n}\n\n", noun)
	}
	return b.String()
}

func doc(r *rand.Rand, mod string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mod)
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, "%s.\n\n", sentence(r, 14))
	}
	return b.String()
}

func logFile(r *rand.Rand, day int) string {
	var b strings.Builder
	levels := []string{"INFO", "INFO", "INFO", "WARN", "ERROR"}
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "2026-11-%02dT%02d:%02d:00Z %s %s %s\n", day+1, i%24, (i*7)%60, levels[r.IntN(len(levels))],
			modules[r.IntN(len(modules))], sentence(r, 7))
	}
	return b.String()
}

func sentence(r *rand.Rand, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = words[r.IntN(len(words))]
	}
	return strings.Join(out, " ")
}
