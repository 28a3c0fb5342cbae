package auditpane

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/sahilm/fuzzy"

	"github.com/vigil-dev/vigil/audit"
)

// hostileLog writes a log of entries with every kind of text the filter must
// get right, then damages some lines in every way a line can be damaged, and
// returns its lines (without newlines).
func hostileLog(t *testing.T) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := audit.Open(path, func() time.Time { return t0 })
	if err != nil {
		t.Fatal(err)
	}
	entries := []audit.Entry{
		{Actor: "agent:planner", Event: audit.EventSubmitted, TaskID: "task-0000123", Target: "living-room", Success: true},
		{Actor: "operator:ada", Event: audit.EventDenied, TaskID: "task-0000123", Target: "kitchen", ErrorCode: "APPROVAL_DENIED"},
		{Actor: "agent\x1b]0;owned\x07", Event: audit.EventSubmitted, TaskID: "t\u202egnp.exe", Target: "tv", Success: true},
		{Actor: "agent:ünï", Event: audit.EventExecuted, TaskID: "täsk", Target: "Kelvin", Success: true},
		{Actor: `back\slash`, Event: audit.EventFailed, TaskID: `"quoted"`, Target: "garage"},
		{Actor: "agent:x", Event: audit.EventSearched, TaskID: "task-9", Target: "mail", Success: true,
			Details: audit.Details(map[string]any{"prev": "x", "time": "evil", "note": `,"prev":"`})},
		{Actor: "agent:y", Event: audit.EventRejected, TaskID: "TASK-UPPER", Target: "den", ErrorCode: "Invalid_Lease"},
	}
	for i := 0; i < 4; i++ {
		for _, e := range entries {
			if _, err := l.Append(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	raw, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	valid := append([]byte(nil), lines[0]...)
	damage := []func([]byte) []byte{
		func(b []byte) []byte { return bytes.Replace(b, []byte("living-room"), []byte("living-ROOM"), 1) }, // edited: still canonical
		func(b []byte) []byte { return bytes.Replace(b, []byte(`{"seq":`), []byte(`{"seq": `), 1) },        // spacing
		func(b []byte) []byte { return bytes.Replace(b, []byte(`"time"`), []byte(`"TIME"`), 1) },           // key case
		func(b []byte) []byte { return []byte("not an entry at all") },
		func(b []byte) []byte { return nil }, // empty line
		func(b []byte) []byte {
			return bytes.Replace(b, []byte(`,"prev":"`), []byte(`,"time":"evil","prev":"`), 1)
		}, // a duplicate key after details
		func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"details":{}`), []byte(`"details":{},"event":"denied"`), 1)
		},
		func(b []byte) []byte { return bytes.Replace(b, []byte(`"success":true`), []byte(`"success":tru`), 1) },
		func(b []byte) []byte { return bytes.Replace(b, []byte(`{"seq":0`), []byte(`{"seq":00`), 1) },
		func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"actor":"agent:planner"`), []byte(`"actor":"agent:pl\u0061nner"`), 1)
		}, // an escape
		func(b []byte) []byte { return append(append([]byte(nil), b...), " "...) },
		func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"seq":0`), []byte(`"seq":99999999999999999999`), 1)
		}, // overflows int64
	}
	for _, d := range damage {
		lines = append(lines, d(valid))
	}
	if err := os.WriteFile(path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

// The pane reads the lines it shows by offset with its own parser: it must
// give what the audit package's readers give, line for line.
func TestParseLineAgreesWithAudit(t *testing.T) {
	path, lines := hostileLog(t)
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

var filterQueries = []string{"", "task", "TASK", "den", "(damaged)", "dmg", "evil", "\u212a", "ſ", "ok", "fail",
	"x1b", "tv", " ", "a b", "approval_denied", "ü", "zzz", "task-0000123", `\`, `"`, "prev", "kelvin", "u0061"}

func filterSpecs() []filterSpec {
	var out []filterSpec
	for _, q := range filterQueries {
		for _, ev := range []string{"", "submitted", "denied", damagedEvent} {
			for _, o := range outcomes {
				out = append(out, filterSpec{event: ev, outcome: o, query: q})
			}
		}
	}
	return out
}

// TestByteScanAgreesWithParsing: the filter's byte scan keeps exactly the
// lines whose rows the filter keeps, for every kind of line (valid, edited,
// non-canonical, garbage, hostile text, hidden duplicate keys) and spec,
// whether the chain has verified the line or not.
func TestByteScanAgreesWithParsing(t *testing.T) {
	_, lines := hostileLog(t)
	for _, sp := range filterSpecs() {
		lf := newLineFilter(sp)
		for i, line := range lines {
			want := sp.keeps(rowOf(line))
			if got := lf.keeps(line, false); got != want {
				t.Errorf("spec %+v, line %d %q: kept %v, want %v", sp, i, line, got, want)
			}
			if _, ok := parseLine(line); ok {
				if got := lf.keeps(line, true); got != want {
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
	writeValidLog(t, path, 4000)
	raw, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	lf := newLineFilter(filterSpec{query: "task-0000123"})
	before := linesParsed.Load()
	kept := 0
	for _, l := range lines {
		if lf.keeps(l, false) {
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

// bigEnough is a log above inMemoryLog, so the filter runs as a pass.
func bigEnough(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	writeValidLog(t, path, n)
	if st, _ := os.Stat(path); st.Size() <= inMemoryLog {
		t.Fatalf("the log is %d bytes: too small for a pass", st.Size())
	}
	return path
}

func typeKeys(p *Pane, s string) {
	for _, r := range s {
		p.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// TestFilterKeystrokeCancelsThePass: a key typed while a pass runs cancels
// it — its goroutine returns having scanned part of the log, its results are
// never shown — and the new pass starts scanning only once the old one has
// stopped: one pass at a time. The old pass is held after its first chunk
// by a hook, so the test does not depend on timing.
func TestFilterKeystrokeCancelsThePass(t *testing.T) {
	path := bigEnough(t, 40000)
	p := New(path, benchStyles())
	defer p.Close()
	p.LoadSync()
	total := int64(len(p.offs))

	type event struct {
		fp       *filterPass
		oldEnded bool
	}
	var first *filterPass // set before any pass but the first runs
	var held atomic.Bool
	seen := make(chan event, 64)
	release := make(chan struct{})
	passHook = func(fp *filterPass) {
		ev := event{fp: fp}
		if !held.Swap(true) { // the first pass's first chunk: hold it there
			seen <- ev
			<-release
			return
		}
		select {
		case <-first.done:
			ev.oldEnded = true
		default:
		}
		seen <- ev
	}
	defer func() { passHook = nil }()

	typeKeys(p, "/t")
	first = p.pass
	if first == nil || !p.passing {
		t.Fatal("no pass started")
	}
	ev := <-seen // the first pass has judged its first chunk and waits
	if ev.fp != first {
		t.Fatal("an unexpected pass ran")
	}
	typeKeys(p, "ask-0000123")
	second := p.pass
	if second == first {
		t.Fatal("the keystroke did not start a new pass")
	}
	close(release)
	select {
	case <-first.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled pass never returned")
	}
	stopped := first.scanned.Load()
	if stopped <= 0 || stopped >= total {
		t.Fatalf("the cancelled pass judged %d lines of %d", stopped, total)
	}
	// the passes typed in between were cancelled before judging anything
	runSync(p, p.pass.wait())
	if p.passing || len(p.view) != 4 {
		t.Fatalf("after the last key: %d matches, passing %v", len(p.view), p.passing)
	}
	if got := first.scanned.Load(); got != stopped {
		t.Fatalf("the cancelled pass went on judging: %d then %d lines", stopped, got)
	}
	if got := second.scanned.Load(); got != 0 && p.pass != second {
		t.Fatalf("an intermediate pass judged %d lines", got)
	}
	if p.pass.scanned.Load() != total {
		t.Fatalf("the last pass judged %d lines of %d", p.pass.scanned.Load(), total)
	}
	close(seen)
	for ev := range seen {
		if ev.fp != first && !ev.oldEnded {
			t.Fatal("a pass scanned while the cancelled one still ran")
		}
	}
	// a batch from the cancelled pass, arriving late, changes nothing
	p.Update(filterBatchMsg{filterBatch: filterBatch{gen: first.gen, matches: []int{0, 1, 2}, next: 3}, pass: first})
	if len(p.view) != 4 {
		t.Fatal("a cancelled pass's batch was applied")
	}
	for _, line := range p.view {
		if r, ok := p.rows.get(p.offs[line]); !ok || r.task != "task-0000123" {
			t.Fatalf("line %d shows %+v", line, r)
		}
	}
}

// TestFilteredViewOfAHostileLog: through the pane — pass, offsets, the chain's
// verified lines — the view holds exactly the lines whose rows pass, held in
// memory or read from the file.
func TestFilteredViewOfAHostileLog(t *testing.T) {
	for _, large := range []bool{false, true} {
		t.Run(map[bool]string{false: "small", true: "large"}[large], func(t *testing.T) {
			if large {
				largePath(t)
			}
			path, lines := hostileLog(t)
			p := New(path, benchStyles())
			defer p.Close()
			p.LoadSync()
			for _, sp := range filterSpecs() {
				p.event = sp.event
				p.outcome = map[string]int{"": 0, "ok": 1, "failed": 2}[sp.outcome]
				p.filter.SetValue(sp.query)
				runSync(p, p.refilter())
				var want []int
				for i, l := range lines {
					if sp.keeps(rowOf(l)) {
						want = append(want, i)
					}
				}
				if sp.empty() {
					continue // no filter: every line shows, no view is kept
				}
				if got := p.view; !reflect.DeepEqual(got, want) {
					t.Fatalf("spec %+v: view %v, want %v", sp, got, want)
				}
			}
		})
	}
}

// TestFilterPassOnAShrunkLog: a log cut short under the index ends the pass
// with an error shown in the pane, with the matches before the cut; no line
// is judged from bytes the file no longer has.
func TestFilterPassOnAShrunkLog(t *testing.T) {
	path := bigEnough(t, 40000)
	p := New(path, benchStyles())
	defer p.Close()
	p.LoadSync()
	st, _ := os.Stat(path)
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	p.filter.SetValue("task-0000123")
	runSync(p, p.refilter())
	if !errors.Is(p.filterErr, io.ErrUnexpectedEOF) {
		t.Fatalf("filter error %v, want the short read", p.filterErr)
	}
	if len(p.view) != 4 || p.view[0] != 492 {
		t.Fatalf("view %v, want the 4 lines of task-0000123 before the cut", p.view)
	}
	if !strings.Contains(p.View(120, 20), "filter: unexpected EOF") {
		t.Fatal("the pane does not show the error")
	}
}
