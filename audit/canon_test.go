package audit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
)

// trickyEntries hold what a byte-level reader could get wrong: escaped
// quotes and backslashes, every kind of control character, U+2028/9, DEL,
// multi-byte UTF-8, invalid UTF-8 (stored as U+FFFD), HTML characters the
// log leaves raw, and field text that looks like the keys around it.
func trickyEntries() []Entry {
	return []Entry{
		{Actor: `agent "quoted" \ back`, Event: EventSubmitted, TaskID: `task-"7"`, Target: "tab\there\nnew\r\b\f"},
		{Actor: "ctl\x00\x01\x1f\x7f", Event: EventApproved, TaskID: "task-7", Target: "line\u2028para\u2029end"},
		{Actor: "café ☕ 🎉 日本", Event: EventExecuted, TaskID: "task-7x", Target: "bad\xffutf8\xc3"},
		{Actor: "<b>&amp;</b>", Event: EventDenied, TaskID: `","task_id":"task-7`, Target: `","hash":"`},
		{Actor: "a", Event: EventFailed, TaskID: "task-8", ErrorCode: "X",
			Details: json.RawMessage(`{"note":"\",\"prev\":\"","task_id":"task-7","s":"\u2028\u0000é","n":[1,{"a":null}]}`)},
		{Actor: "a", Event: EventSearched, TaskID: "", Target: "", Details: json.RawMessage(`{}`)},
	}
}

func trickyLog(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range trickyEntries() {
		if _, err := l.Append(e); err != nil {
			t.Fatalf("append %+v: %v", e, err)
		}
	}
	for i := 0; i < 6; i++ {
		if _, err := l.Append(sampleEntry(i)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestScanCanonicalReadsWhatParseLineReads: every line Append writes takes
// the fast path, and it reads the same entry as the JSON decoder.
func TestScanCanonicalReadsWhatParseLineReads(t *testing.T) {
	for i, l := range readLines(t, trickyLog(t)) {
		line := bytes.TrimSuffix(l, []byte("\n"))
		var r rawLine
		if !scanCanonical(line, &r) {
			t.Fatalf("line %d: the fast path refused a line Append wrote: %s", i, line)
		}
		want, err := parseLine(line)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if got := r.entry(); !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d:\nfast %#v\nfull %#v", i, got, want)
		}
	}
}

// TestScanCanonicalNeverAcceptsWhatParseLineRefuses mutates every line of
// the tricky log thousands of ways (flip, drop, insert, swap a byte; swap in
// another escape) and checks that the fast path agrees with parseLine on each:
// accepted by both with the same entry, or left to parseLine.
func TestScanCanonicalNeverAcceptsWhatParseLineRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	inserts := []string{`\`, `"`, " ", `\u0041`, `\u00e9`, `\u001F`, `\u001f`, `\n`, `\/`, "\x00", "\xff", "\u2028", `\u2028`, `\ufffd`, "0", "-", ","}
	accepted, refused := 0, 0
	for _, l := range readLines(t, trickyLog(t)) {
		line := bytes.TrimSuffix(l, []byte("\n"))
		for n := 0; n < 3000; n++ {
			m := bytes.Clone(line)
			p := rng.IntN(len(m))
			switch n % 4 {
			case 0:
				m[p] ^= byte(1 << rng.IntN(8))
			case 1:
				m = append(m[:p], m[p+1:]...)
			case 2:
				m = append(m[:p], append([]byte(inserts[rng.IntN(len(inserts))]), m[p:]...)...)
			case 3:
				q := rng.IntN(len(m))
				m[p], m[q] = m[q], m[p]
			}
			var r rawLine
			fast := scanCanonical(m, &r)
			want, err := parseLine(m)
			if fast && err != nil {
				t.Fatalf("fast path accepted %q; parseLine: %v", m, err)
			}
			if fast {
				accepted++
				if got := r.entry(); !reflect.DeepEqual(got, want) {
					t.Fatalf("%q:\nfast %#v\nfull %#v", m, got, want)
				}
			} else {
				refused++
			}
			got, gerr := parseLineFast(m)
			if (gerr == nil) != (err == nil) || gerr != nil && gerr != err || !reflect.DeepEqual(got, want) && err == nil {
				t.Fatalf("parseLineFast(%q) = %v, parseLine %v", m, gerr, err)
			}
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("mutations exercised one side only: %d accepted, %d refused", accepted, refused)
	}
}

// TestFeedLineAgreesWithFeed: the verifier's allocation-free path and the
// pane's Feed find the same first bad entry, for the same reason, on clean
// and damaged logs.
func TestFeedLineAgreesWithFeed(t *testing.T) {
	lines := readLines(t, trickyLog(t))
	variants := map[string][][]byte{"clean": lines}
	edit := func(i int, f func([]byte) []byte) [][]byte {
		out := append([][]byte{}, lines...)
		out[i] = f(bytes.Clone(lines[i]))
		return out
	}
	variants["hash digit"] = edit(3, func(b []byte) []byte { b[len(b)-4] ^= 1; return b })
	variants["prev digit"] = edit(4, func(b []byte) []byte {
		i := bytes.Index(b, []byte(`"prev":"`)) + 9
		b[i] ^= 1
		return b
	})
	variants["target"] = edit(2, func(b []byte) []byte { return bytes.Replace(b, []byte("bad"), []byte("bod"), 1) })
	variants["upper-case hash"] = edit(5, func(b []byte) []byte {
		return bytes.ToUpper(b)
	})
	variants["swap"] = append(append(append([][]byte{}, lines[:2]...), lines[3], lines[2]), lines[4:]...)
	for name, ls := range variants {
		a, b := NewChain(), NewChain()
		for _, l := range ls {
			l = bytes.TrimSuffix(l, []byte("\n"))
			_, okA := a.Feed(l)
			okB := b.feedLine(l)
			if okA != okB {
				t.Fatalf("%s: Feed %v, feedLine %v", name, okA, okB)
			}
		}
		if !reflect.DeepEqual(a.Bad(), b.Bad()) || a.Len() != b.Len() || a.Last() != b.Last() {
			t.Fatalf("%s: Feed %+v %d, feedLine %+v %d", name, a.Bad(), a.Len(), b.Bad(), b.Len())
		}
		if name != "clean" && a.Bad() == nil {
			t.Fatalf("%s: damage not found", name)
		}
	}
}

func TestAppendStringValueIsTheLogsEncoding(t *testing.T) {
	for _, e := range trickyEntries() {
		line, err := e.Line()
		if err != nil {
			t.Fatal(err)
		}
		needle := append(append([]byte(`"task_id":"`), appendStringValue(nil, e.TaskID)...), '"')
		if !bytes.Contains(line, needle) {
			t.Fatalf("needle %s not in %s", needle, line)
		}
	}
}

// compactByEncoder is what jsonValue must decide: valid JSON that
// json.Compact (the encoder's path for a RawMessage) leaves unchanged.
func compactByEncoder(v []byte) bool {
	var buf bytes.Buffer
	return json.Compact(&buf, v) == nil && bytes.Equal(buf.Bytes(), v)
}

// TestJSONValueAgreesWithCompact: on valid, spaced, broken and mutated
// values, jsonValue never accepts what json.Compact would refuse or
// change, and accepts the compact values it is given.
func TestJSONValueAgreesWithCompact(t *testing.T) {
	seeds := []string{`{}`, `[]`, `{"a":1}`, `{"a":[1,2.5,-0.1e+3,true,false,null,"x"]}`, `"s"`, `0`, `-1`,
		`{"k":"\"\\\/\b\f\n\r\t\u00e9\uD83D"}`, "{\"k\":\"caf\xc3\xa9 \xff\"}", `{"a":{"b":{"c":[[],{}]}}}`,
		`{"a" :1}`, `{"a":1,}`, `[1 ,2]`, `01`, `1.`, `.5`, `-`, `1e`, `{"a":tru}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}",
		`{"a":1}}`, `[`, `"\u12"`, `{"a":1,"a":2}`, `nul`}
	rng := rand.New(rand.NewPCG(8, 8))
	alphabet := []byte(`{}[]":,.-+eE0123456789tfnul\ ` + "\x01\xff")
	check := func(v []byte) {
		end, ok := jsonValue(v, 0, 0, false)
		got := ok && end == len(v)
		if want := compactByEncoder(v); got && !want || !got && want && bytes.Count(v, []byte("[")) < 500 {
			t.Fatalf("jsonValue(%q) = %v, json.Compact says %v", v, got, want)
		}
		if plainLine(v) && !bytes.Contains(v, []byte{'\\'}) {
			pend, pok := jsonValue(v, 0, 0, true)
			if pok != ok || pok && pend != end {
				t.Fatalf("plain jsonValue(%q) = %d %v, careful %d %v", v, pend, pok, end, ok)
			}
		}
	}
	for _, s := range seeds {
		check([]byte(s))
		for n := 0; n < 2000; n++ {
			m := []byte(s)
			p := rng.IntN(len(m) + 1)
			switch n % 3 {
			case 0:
				m = append(m[:p:p], append([]byte{alphabet[rng.IntN(len(alphabet))]}, m[p:]...)...)
			case 1:
				if p < len(m) {
					m = append(m[:p:p], m[p+1:]...)
				}
			case 2:
				if p < len(m) {
					m[p] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			check(m)
		}
	}
}

// TestPlainRunFindsTheFirstSpecialByte: the eight-at-a-time scans decide
// what byte-by-byte ones do.
func TestPlainRunFindsTheFirstSpecialByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	special := []byte{'"', '\\', 0x00, 0x1f, 0x80, 0xff, 0xc3}
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.IntN(100))
		for i := range b {
			b[i] = byte(0x20 + rng.IntN(0x5f))
			if rng.IntN(30) == 0 {
				b[i] = special[rng.IntN(len(special))]
			}
		}
		want := 0
		for want < len(b) && b[want] >= 0x20 && b[want] < 0x80 && b[want] != '"' && b[want] != '\\' {
			want++
		}
		if got := plainRun(b); got != want {
			t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
		}
		if plainLine(b) != plainLineRef(b) {
			t.Fatalf("plainLine(%q) = %v", b, plainLine(b))
		}
	}
}

func plainLineRef(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}
