package searchpane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
)

func TestGoldenEmptyComposer(t *testing.T) {
	needBackend(t, "ugrep")
	p := typing(New(baseOptions(fixtureTree(t), "ugrep"), styles()))
	out := screen(t, p, 100, 30, nil, func(s Snapshot) bool { return !s.Busy })
	for _, want := range []string{"type a pattern", "case:smart", "max:200", "timeout-ms:20000", "ugrep X.Y.Z"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

func TestGoldenValidationError(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(fixtureTree(t), "ugrep")
	o.Initial = search.Request{Pattern: "needle", MaxResults: search.Ptr[int64](0)}
	p := typing(New(o, styles()))
	out := screen(t, p, 100, 30, nil, func(s Snapshot) bool { return !s.Busy && s.Err != "" })
	if !strings.Contains(out, "max_results: must be >= 1, got 0") {
		t.Fatalf("engine message not shown:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenResultsWithContext(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(fixtureTree(t), "ugrep")
	o.Initial = search.Request{Context: search.Ptr[int64](1)}
	p := typing(New(o, styles()))
	out := screen(t, p, 100, 30, typed("needle"), settled("needle"))
	for _, want := range []string{"src/alpha.go (3)", "3: // Find the needle here.", "2- No match", "6 matches in 4 files", "7ms"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

func TestGoldenTruncated(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(fixtureTree(t), "ugrep")
	o.Initial = search.Request{Pattern: "needle", MaxResults: search.Ptr[int64](3)}
	p := typing(New(o, styles()))
	out := screen(t, p, 100, 30, nil, settled("needle"))
	if !strings.Contains(out, "+ more, raise max results") || !strings.Contains(out, "3 matches") {
		t.Fatalf("no truncation mark:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

// bigTree writes n files in nested folders: enough that a 1 ms timeout
// always fires while the backend is still working.
func bigTree(t testing.TB, n int) string {
	root := t.TempDir()
	line := strings.Repeat("some text that does not contain the pattern at all\n", 40)
	for i := range n {
		write(t, root, fmt.Sprintf("d%02d/f%04d.txt", i%50, i), line)
	}
	return root
}

func TestGoldenTimedOut(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(bigTree(t, 3000), "ugrep")
	o.Initial = search.Request{Pattern: "zq_nothing", TimeoutMS: search.Ptr[int64](1)}
	p := typing(New(o, styles()))
	out := screen(t, p, 100, 30, nil, settled("zq_nothing"))
	if !strings.Contains(out, "timed out") {
		t.Fatalf("no timeout mark:\n%s", out)
	}
	// how far a 1 ms search gets varies from run to run; the line keeps the
	// screen's width whatever the count's digits were
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if n := scannedRE.ReplaceAllString(l, "scanned N"); n != l {
			n = strings.TrimRight(n, " ")
			lines[i] = n + strings.Repeat(" ", max(0, ansi.StringWidth(l)-ansi.StringWidth(n)))
		}
	}
	golden.RequireEqual(t, strings.Join(lines, "\n"))
}

func errorTree(t testing.TB) string {
	root := fixtureTree(t)
	if err := os.Symlink("missing-target.txt", filepath.Join(root, "src", "dangling.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(root, "docs", "loop")); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestGoldenFileErrors(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(errorTree(t), "ugrep")
	o.Initial = search.Request{Pattern: "needle", Follow: search.Ptr(true)}
	p := typing(New(o, styles()))
	out := screen(t, p, 100, 30, nil, settled("needle"))
	if !strings.Contains(out, "2 file errors (e)") {
		t.Fatalf("no error mark:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenFileErrorsExpanded(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(errorTree(t), "ugrep")
	o.Initial = search.Request{Pattern: "needle", Follow: search.Ptr(true)}
	p := typing(New(o, styles()))
	waitKeys := keys("esc", "e")
	out := screenAfter(t, p, 100, 30, "needle", waitKeys)
	for _, want := range []string{"File errors (2)", "src/dangling.txt: broken symbolic link", "docs/loop"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

func TestGoldenPreviewOpen(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(fixtureTree(t), "ugrep")
	o.Initial = search.Request{Pattern: "needle"}
	p := typing(New(o, styles()))
	out := screenAfter(t, p, 120, 30, "needle", keys("esc", "j", "j", "j", "p"))
	for _, want := range []string{"│", "package alpha", "src/alpha.go:4"} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

func TestGoldenNarrowLayout(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(fixtureTree(t), "ugrep")
	o.Initial = search.Request{Pattern: "needle"}
	p := typing(New(o, styles()))
	out := screenAfter(t, p, 60, 24, "needle", keys("esc", "j", "j", "j", "p"))
	if !strings.Contains(out, "src/alpha.go:4") {
		t.Fatalf("bottom preview missing:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGolden40x10(t *testing.T) {
	needBackend(t, "ugrep")
	o := baseOptions(fixtureTree(t), "ugrep")
	p := typing(New(o, styles()))
	out := screen(t, p, 40, 10, typed("needle"), settled("needle"))
	golden.RequireEqual(t, out)
}

// screenAfter waits for the initial search, then sends keys.
func screenAfter(t *testing.T, p *Pane, w, h int, pattern string, ks []teaMsg) string {
	t.Helper()
	return screen(t, p, w, h, append([]teaMsg{waitMarker{settled(pattern)}}, ks...), func(s Snapshot) bool {
		return !s.Busy && s.Keys >= len(ks)
	})
}

func TestGoldenScoped(t *testing.T) {
	needBackend(t, "ugrep")
	dir := t.TempDir()
	scopes, err := scope.WriteDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := baseOptions(fixtureTree(t), "ugrep")
	o.Scopes = scopes
	o.InitialScope = "archive"
	p := typing(New(o, styles()))
	out := screen(t, p, 100, 30, typed("Budget"), settled("Budget"))
	if !strings.Contains(out, "scope archive (emails)") || !strings.Contains(out, "Budget meeting moved") {
		t.Fatalf("scoped hits missing:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

func TestGoldenScopedDocument(t *testing.T) {
	needBackend(t, "ugrep")
	dir := t.TempDir()
	scopes, err := scope.WriteDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := baseOptions(fixtureTree(t), "ugrep")
	o.Scopes = scopes
	o.InitialScope = "contacts"
	o.Initial = search.Request{Pattern: "London"}
	p := typing(New(o, styles()))
	out := screenAfter(t, p, 100, 30, "London", keys("esc", "enter"))
	if !strings.Contains(out, "esc back") {
		t.Fatalf("viewer not open:\n%s", out)
	}
	golden.RequireEqual(t, out)
}
