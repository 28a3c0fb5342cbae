package index

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sahilm/fuzzy"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index/indextest"
)

// A viewer reads the lines it shows by offset with parseLine: it must give
// what the audit package's readers give, line for line.
func TestParseLineAgreesWithAudit(t *testing.T) {
	path, lines := indextest.HostileLog(t)
	i := 0
	audit.Scan(path, 0, func(l audit.Line) bool {
		e, ok := parseLine(lines[i])
		if ok != (l.Err == nil) || !reflect.DeepEqual(e, l.Entry) {
			t.Errorf("line %d %q: ok %v, entry %+v; audit: err %v, entry %+v", i, lines[i], ok, e, l.Err, l.Entry)
		}
		i++
		return true
	})
	if i != len(lines) {
		t.Fatalf("audit read %d lines of %d", i, len(lines))
	}
}

// filters are every combination of indextest.Queries with the event and
// outcome filters, and a task.
func filters() []Filter {
	var out []Filter
	for _, q := range indextest.Queries {
		for _, ev := range []string{"", "submitted", "denied", DamagedEvent} {
			for _, o := range []string{"", "ok", "failed"} {
				out = append(out, Filter{Query: audit.Query{Event: ev}, Outcome: o, Text: q})
			}
		}
		out = append(out, Filter{Query: audit.Query{TaskID: "task-0000123"}, Text: q})
	}
	return out
}

// TestByteScanAgreesWithParsing: the filter's byte scan keeps exactly the
// lines whose rows the filter keeps, for every kind of line (valid, edited,
// non-canonical, garbage, hostile text, hidden duplicate keys) and spec,
// whether the chain has verified the line or not.
func TestByteScanAgreesWithParsing(t *testing.T) {
	_, lines := indextest.HostileLog(t)
	for _, sp := range filters() {
		lf := NewLineFilter(sp)
		for i, line := range lines {
			want := sp.Keeps(RowOf(line))
			if got := lf.Keeps(line, false); got != want {
				t.Errorf("spec %+v, line %d %q: kept %v, want %v", sp, i, line, got, want)
			}
			if _, ok := parseLine(line); ok {
				if got := lf.Keeps(line, true); got != want {
					t.Errorf("spec %+v, verified line %d %q: kept %v, want %v", sp, i, line, got, want)
				}
			}
		}
	}
}

// TestByteScanParsesOnlyCandidates: on an ordinary log the byte scan decides
// nearly every line without parsing it.
func TestByteScanParsesOnlyCandidates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, 4000)
	raw, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	lf := NewLineFilter(Filter{Text: "task-0000123"})
	before := linesParsed.Load()
	kept := 0
	for _, l := range lines {
		if lf.Keeps(l, false) {
			kept++
		}
	}
	if parsed := linesParsed.Load() - before; kept != 4 || parsed > 4 {
		t.Fatalf("kept %d lines (want 4), parsed %d of %d", kept, parsed, len(lines))
	}
}

// TestPatternPassesEveryFuzzyMatch: the byte test is a necessary condition
// of the fuzzy matcher's, on random ASCII, Unicode and case-folding text.
func TestPatternPassesEveryFuzzyMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aAbBkKsS \u212a\u017f-_:0129ü(")
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	matched := 0
	for range 20000 {
		q, hay := word(1+rng.IntN(3)), word(rng.IntN(12))
		if !plain([]byte(hay)) {
			continue // the byte test is only asked about plain text
		}
		if len(fuzzy.Find(q, []string{hay})) == 1 {
			matched++
			if !newPattern(q).within([]byte(hay)) {
				t.Fatalf("fuzzy matches %q in %q; the byte test says no", q, hay)
			}
		}
	}
	if matched < 100 {
		t.Fatalf("only %d matches: the test proves little", matched)
	}
}
