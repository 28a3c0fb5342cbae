package memorypane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/vigil-dev/vigil/exec/memory"
)

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("missing %q:\n%s", w, out)
		}
	}
}

func TestGoldenResults(t *testing.T) {
	s := start(t, newPane(demoStore(t)), 100, 30)
	s.keys("python threads<enter>")
	s.waitFor(answered)
	out := s.final()
	mustContain(t, out, "Found 10 results:", "  1 ", "#python", "0.87", "The GIL means threads")
	golden.RequireEqual(t, out)
}

func TestGoldenDetail(t *testing.T) {
	s := start(t, newPane(demoStore(t)), 60, 14)
	s.keys("deliberately long memory<enter>")
	s.waitFor(answered)
	s.keys("<enter>")
	s.waitFor(opened)
	s.keys("j")
	out := s.final()
	// the full text is wrapped, not cut at the 200-character preview, and the
	// person is told how much is left below
	mustContain(t, out, "Memory #", "source notes", "#demo #long", "more lines")
	golden.RequireEqual(t, out)
}

func TestGoldenFilter(t *testing.T) {
	s := start(t, newPane(demoStore(t)), 100, 30)
	s.keys("python<enter>")
	s.waitFor(answered)
	s.keys("/mypy")
	out := s.final()
	mustContain(t, out, "/ mypy", "of 10 match", "mypy")
	golden.RequireEqual(t, out)
}

func TestGoldenEmpty(t *testing.T) {
	s := start(t, newPane(demoStore(t)), 100, 20)
	s.keys("zzyzx quixotic<enter>")
	s.waitFor(answered)
	out := s.final()
	mustContain(t, out, memory.NoResultsText)
	golden.RequireEqual(t, out)
}

// A store that fails under the pane (closed here) answers with the seed's
// Processing error text, not a crash or a blank list.
func TestGoldenClosedStore(t *testing.T) {
	st := demoStore(t)
	p := newPane(st)
	st.Close()
	s := start(t, p, 100, 20)
	s.keys("python<enter>")
	s.waitFor(answered)
	out := s.final()
	mustContain(t, out, "Error: Processing error: Database connection failed: memory database is closed")
	golden.RequireEqual(t, out)
}

// A damaged database file cannot open: the pane says why, and a search still
// answers in the seed's words through memory.Unavailable.
func TestGoldenCorruptedStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not an SQLite database\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := memory.Open(path, memory.Options{Now: clock})
	if err == nil {
		st.Close()
		t.Fatal("a garbage file opened as a database")
	}
	p := typing(New(Options{Tool: memory.NewTool(memory.Unavailable(err), nil), OpenErr: err, Now: clock}, styles()))
	s := start(t, p, 100, 20)
	s.keys("python<enter>")
	s.waitFor(answered)
	out := s.final()
	mustContain(t, out, "memory store unavailable:", "Error: Processing error: Memory database is damaged")
	golden.RequireEqual(t, out)
}

func TestGoldenValidation(t *testing.T) {
	s := start(t, newPane(demoStore(t)), 100, 20)
	s.keys("python<tab><tab><tab>2025-06-02<tab>2025-06-01<tab>abc<enter>")
	s.waitFor(invalid)
	out := s.final()
	mustContain(t, out, "✗ limit: value is not a valid integer", "✗ filters: date_from must be <= date_to",
		"fix the form above to search")
	golden.RequireEqual(t, out)
}
