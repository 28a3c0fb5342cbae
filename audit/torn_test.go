package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTornLastLineOnOpen: a crash mid-write leaves an unterminated line. Open
// moves it aside to audit.log.torn-<time>, records a torn entry, and the chain
// verifies; appends continue on the repaired chain.
func TestTornLastLineOnOpen(t *testing.T) {
	path := newLog(t, 5)
	whole, _ := os.ReadFile(path)
	torn := []byte(`{"seq":5,"time":"2026-03-14T15:09:32Z","actor":"agent-2","ev`)
	writeFile(t, path, append(bytes.Clone(whole), torn...))
	if rep := mustVerify(t, path); rep.OK || rep.Index != 5 || rep.Reason != ReasonTruncated {
		t.Fatalf("before repair: %s", rep)
	}

	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	asides, _ := filepath.Glob(path + ".torn-*")
	if len(asides) != 1 {
		t.Fatalf("torn files: %v", asides)
	}
	if want := path + ".torn-20260314T150927.000000000Z"; asides[0] != want {
		t.Fatalf("aside is %s, want %s (named from the injected clock)", asides[0], want)
	}
	got, _ := os.ReadFile(asides[0])
	if !bytes.Equal(got, torn) {
		t.Fatalf("aside holds %q, want the torn bytes %q", got, torn)
	}
	rep := mustVerify(t, path)
	if !rep.OK || rep.Entries != 6 {
		t.Fatalf("after repair: %s", rep)
	}
	lines, _, err := ReadTail(path, 1)
	if err != nil || len(lines) != 1 {
		t.Fatalf("tail: %v %v", lines, err)
	}
	e := lines[0].Entry
	if e.Event != EventTorn || e.Seq != 5 || e.Actor != "vigil" {
		t.Fatalf("torn entry: %+v", e)
	}
	var d struct {
		MovedTo string `json:"moved_to"`
		Bytes   int    `json:"bytes"`
	}
	if err := json.Unmarshal(e.Details, &d); err != nil || d.MovedTo != filepath.Base(asides[0]) || d.Bytes != len(torn) {
		t.Fatalf("torn details %s: %+v %v", e.Details, d, err)
	}
	if !bytes.HasPrefix(mustRead(t, path), whole) {
		t.Fatal("the complete entries before the torn line changed")
	}
	if _, err := l.Append(sampleEntry(6)); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, path); !rep.OK || rep.Entries != 7 {
		t.Fatalf("after another append: %s", rep)
	}
}

// TestTornLineOnAppend: a torn tail left by another process is repaired by
// the next Append too, and a second torn tail at the same clock instant gets
// its own file instead of overwriting the first.
func TestTornLineOnAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	at := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	l, err := Open(path, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(sampleEntry(0)); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"seq":`)
		f.Close()
		if _, err := l.Append(sampleEntry(1)); err != nil {
			t.Fatal(err)
		}
	}
	asides, _ := filepath.Glob(path + ".torn-*")
	if len(asides) != 2 {
		t.Fatalf("torn files: %v", asides)
	}
	rep := mustVerify(t, path)
	if !rep.OK || rep.Entries != 5 {
		t.Fatalf("%s", rep)
	}
	events := []string{}
	Scan(path, 0, func(l Line) bool { events = append(events, l.Entry.Event); return true })
	if got := strings.Join(events, ","); got != "submitted,torn,approved,torn,approved" {
		t.Fatalf("events: %s", got)
	}
}

// TestAppendRefusesDamagedTail: a complete but invalid last line is not built
// upon; Append fails and names the way out.
func TestAppendRefusesDamagedTail(t *testing.T) {
	path := newLog(t, 3)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("garbage\n")
	f.Close()
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Append(sampleEntry(3))
	if err == nil || !strings.Contains(err.Error(), "vigil audit verify") {
		t.Fatalf("append on a damaged tail: %v", err)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVerifyWaitsForInFlightAppend: Verify meeting a half-written last line
// while an appender holds the lock waits for it instead of calling the log
// truncated.
func TestVerifyWaitsForInFlightAppend(t *testing.T) {
	path := newLog(t, 4)
	full := mustRead(t, path)
	lines := readLines(t, path)
	half := len(full) - len(lines[3])/2
	writeFile(t, path, full[:half])
	l, err := Open(path+".other", stepClock()) // only for its lock helper
	if err != nil {
		t.Fatal(err)
	}
	l.path = path
	lk, err := l.lock()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Report, 1)
	go func() {
		rep, _ := Verify(path)
		got <- rep
	}()
	// let Verify reach the half line (ordering only; the result below must
	// hold either way)
	time.Sleep(100 * time.Millisecond)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(full[half:])
	f.Close()
	lk()
	if rep := <-got; !rep.OK || rep.Entries != 4 {
		t.Fatalf("Verify during an append: %s", rep)
	}
}
