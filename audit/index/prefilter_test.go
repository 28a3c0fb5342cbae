package index

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index/indextest"
)

// randomLine is an entry's line with fields drawn from text the prefilter
// must get right (case, the Kelvin sign and long s, escapes, quotes, controls,
// spaces, the words of the damaged row), damaged at random bytes half the time.
func randomLine(rng *rand.Rand) []byte {
	alphabet := []string{"a", "A", "k", "K", "s", "S", "t", "-", "0", "1", " ", ":", "(", ")", "d", "m", "g",
		"ok", "fail", "damaged", "task", "\u212a", "\u017f", "ü", `"`, `\`, "\x1b", "\u202e", "<"}
	// half the lines are plain text, which the prefilter judges
	plainText := rng.IntN(2) == 0
	word := func(n int) string {
		var b strings.Builder
		for range n {
			if plainText {
				b.WriteString(alphabet[rng.IntN(len(alphabet)-8)])
			} else {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
		}
		return b.String()
	}
	e := audit.Entry{Seq: rng.Int64N(1000), Time: word(rng.IntN(4)), Actor: word(rng.IntN(4)),
		Event: word(rng.IntN(3)), TaskID: word(rng.IntN(4)), Capability: word(rng.IntN(2)), Target: word(rng.IntN(3)),
		TokenJTI: word(rng.IntN(2)), Success: rng.IntN(2) == 0, Details: json.RawMessage("{}"), Prev: "p", Hash: "h"}
	if rng.IntN(2) == 0 {
		e.ErrorCode = word(rng.IntN(3))
	}
	if rng.IntN(4) == 0 {
		e.Details = audit.Details(map[string]any{word(1): word(2)})
	}
	line, err := e.Line()
	if err != nil {
		panic(err)
	}
	switch rng.IntN(5) {
	case 0, 1:
		return line
	case 3: // still in shape, yet not canonical: the damaged row
		if rng.IntN(2) == 0 {
			return bytes.Replace(line, []byte(`{"seq":`), []byte(`{"seq":0`), 1)
		}
		return bytes.Replace(line, []byte(`,"details":{`), []byte(`,"details":{ `), 1)
	case 2: // a duplicate key after the details: a decoder sees its value
		key := []string{"time", "actor", "event", "task_id", "target", "success", "error_code"}[rng.IntN(7)]
		value := strconv.Quote(word(1 + rng.IntN(3)))
		if key == "success" {
			value = "false"
		}
		return bytes.Replace(line, []byte(`,"prev":"`), []byte(`,"`+key+`":`+value+`,"prev":"`), 1)
	}
	// damage: replace, insert or delete bytes, some of them JSON's own
	edits := []string{`"`, `\`, `,`, `:`, `{`, `}`, ` `, `"time":"x",`, `,"event":"denied"`, "k", "\x00", "é"}
	for range 1 + rng.IntN(3) {
		at := rng.IntN(len(line) + 1)
		switch ed := []byte(edits[rng.IntN(len(edits))]); rng.IntN(3) {
		case 0:
			line = append(line[:at:at], append(ed, line[at:]...)...)
		case 1:
			if at < len(line) {
				line = append(line[:at:at], line[at+1:]...)
			}
		default:
			if at < len(line) {
				line[at] = ed[0]
			}
		}
	}
	return line
}

// randomQuery is a piece of the line's row (which matches), the same with a
// character put in (a near miss, the boundary the prefilter must respect), or
// a few characters of those the lines hold.
func randomQuery(rng *rand.Rand, r Row) string {
	chars := []rune("aAkKsS t-01:()dmg\u212a\u017fü\"\\okfil")
	char := func() rune { return chars[rng.IntN(len(chars))] }
	hay := []rune(r.Hay())
	i := rng.IntN(len(hay) + 1)
	piece := hay[i : i+rng.IntN(len(hay)-i+1)]
	switch rng.IntN(3) {
	case 0:
		return string(piece)
	case 1:
		at := rng.IntN(len(piece) + 1)
		return string(piece[:at]) + string(char()) + string(piece[at:])
	}
	q := make([]rune, 1+rng.IntN(5))
	for i := range q {
		q[i] = char()
	}
	return string(q)
}

// TestPrefilterNeverRejectsAKeptRow: on random valid and damaged lines and
// random queries, whatever the prefilter rejects the full match rejects too,
// verified (only for lines that are valid, as the chain's verified lines
// are) or not; and it does reject, or it would prove nothing.
func TestPrefilterNeverRejectsAKeptRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var rejected, kept [2]int
	for range 30000 {
		line := randomLine(rng)
		r := RowOf(line)
		q := randomQuery(rng, r)
		sp := Filter{Text: q}
		want := sp.Keeps(r)
		pre := newPrefilter(q)
		_, valid := parseLine(line)
		for v, verified := range []bool{false, true} {
			if verified && !valid {
				continue
			}
			if pre.rejects(line, verified) {
				rejected[v]++
				if want {
					t.Fatalf("query %q, line %q (verified %v): rejected, but its row %q matches", q, line, verified, RowOf(line).Hay())
				}
			} else if want {
				kept[v]++
			}
		}
	}
	for v := range 2 {
		t.Logf("verified=%v: %d rejected, %d kept", v == 1, rejected[v], kept[v])
		if rejected[v] < 1000 || kept[v] < 1000 {
			t.Fatalf("verified=%v: %d rejected, %d kept: the test proves little", v == 1, rejected[v], kept[v])
		}
	}
}

// FuzzPrefilter: the same property for any line and query.
func FuzzPrefilter(f *testing.F) {
	for i, l := range seedLines(f) {
		f.Add(l, indextest.Queries[i%len(indextest.Queries)])
	}
	f.Fuzz(func(t *testing.T, line []byte, q string) {
		want := Filter{Text: q}.Keeps(RowOf(line))
		pre := newPrefilter(q)
		if pre.rejects(line, false) && want {
			t.Fatalf("query %q, line %q: rejected, but its row matches", q, line)
		}
		if _, valid := parseLine(line); valid && pre.rejects(line, true) && want {
			t.Fatalf("query %q, verified line %q: rejected, but its row matches", q, line)
		}
	})
}

// seedLines are a fuzz target's seeds: valid lines and random ones.
func seedLines(f *testing.F) [][]byte {
	f.Helper()
	path := filepath.Join(f.TempDir(), "seed.log")
	indextest.WriteValidLog(f, path, 16)
	raw, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	rng := rand.New(rand.NewPCG(5, 6))
	for range 32 {
		lines = append(lines, randomLine(rng))
	}
	return lines
}

// TestPrefilterRejectsAnOrdinaryLog: on a log shaped like a busy one, the
// prefilter alone rejects every line but the query's, verified or not.
func TestPrefilterRejectsAnOrdinaryLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	indextest.WriteValidLog(t, path, 4000)
	raw, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	for q, want := range map[string]int{"task-0000123": 4, "ü": 0} {
		pre := newPrefilter(q)
		for _, verified := range []bool{false, true} {
			passed := 0
			for _, l := range lines {
				if !pre.rejects(l, verified) {
					passed++
				}
			}
			if passed != want {
				t.Fatalf("query %q, verified=%v: %d lines passed the prefilter, want %d", q, verified, passed, want)
			}
		}
	}
}

// TestPlainHeadAgreesWithPlain: the eight-bytes-at-a-time test is the byte
// test, for every byte value at every position of a word.
func TestPlainHeadAgreesWithPlain(t *testing.T) {
	base := []byte(`{"seq":1,"time":"2026-01-01T00:00:00Z","actor":"agent:x"`)
	for at := range 17 {
		for c := range 256 {
			b := append([]byte(nil), base[:17]...)
			b[at%len(b)] = byte(c)
			for n := 1; n <= len(b); n++ {
				if plainHead(b[:n]) != plain(b[:n]) {
					t.Fatalf("%q: plainHead %v, plain %v", b[:n], plainHead(b[:n]), plain(b[:n]))
				}
			}
		}
	}
}

// TestPrefilterAtTheHeadsEnd: text that is not plain ASCII in the last
// bytes of a head (which the eight-bytes-at-a-time scan reads one by one)
// keeps the line from being rejected: the Kelvin sign and the long s match
// k and s, and a control character shows as an escape.
func TestPrefilterAtTheHeadsEnd(t *testing.T) {
	tried := 0
	for _, odd := range []string{"\u212a", "\u017f", "\x7f", "\x1b", "ü"} {
		for pad := range 9 {
			for field := range 2 {
				e := audit.Entry{Time: "t", Actor: "a", Event: "e", TaskID: "x", Target: "g", Details: json.RawMessage("{}"), Prev: "p"}
				text := strings.Repeat("-", pad) + odd + strings.Repeat("-", 8-pad)
				if field == 0 {
					e.ErrorCode = text
				} else {
					e.Target, e.ErrorCode = text, strings.Repeat("E", pad)
				}
				line, _ := e.Line()
				for _, q := range []string{"k", "s", "x1b", "x7f", "\\", RowOf(line).Hay()} {
					want := Filter{Text: q}.Keeps(RowOf(line))
					if !want {
						continue
					}
					tried++
					pre := newPrefilter(q)
					if pre.rejects(line, true) || pre.rejects(line, false) {
						t.Fatalf("query %q, line %q: rejected, but its row %q matches", q, line, RowOf(line).Hay())
					}
				}
			}
		}
	}
	if tried < 100 {
		t.Fatalf("only %d matching rows tried", tried)
	}
}
