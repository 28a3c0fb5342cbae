// Package indextest writes the audit logs the tests of the log's readers
// and viewers share: a valid busy log, and one with every kind of text and
// damage a filter must get right.
package indextest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
)

// WriteValidLog writes a valid chain of n entries (and its head) to path,
// shaped like a busy log: tasks submitted, approved, executed, some denied
// or failed.
func WriteValidLog(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	prev := audit.Genesis
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	events := []string{audit.EventSubmitted, audit.EventApproved, audit.EventExecuted, audit.EventDenied}
	var last audit.Entry
	for i := 0; i < n; i++ {
		e := audit.Entry{Seq: int64(i), Time: t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
			Actor: "agent:bench", Event: events[i%len(events)], TaskID: fmt.Sprintf("task-%07d", i/len(events)),
			Capability: "MEDIA_PLAY", Target: "living-room", Success: i%len(events) != 3, Details: json.RawMessage("{}"), Prev: prev}
		if !e.Success {
			e.ErrorCode = "APPROVAL_DENIED"
		}
		if e.Hash, err = e.ComputeHash(); err != nil {
			tb.Fatal(err)
		}
		line, _ := e.Line()
		w.Write(append(line, '\n'))
		prev, last = e.Hash, e
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	if n > 0 {
		head, _ := json.Marshal(map[string]any{"seq": last.Seq, "hash": last.Hash, "size": st.Size()})
		if err := os.WriteFile(audit.HeadPath(path), head, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// HostileLog writes a log of entries with every kind of text the filter must
// get right, then damages some lines in every way a line can be damaged, and
// returns its lines (without newlines).
func HostileLog(t testing.TB) (string, [][]byte) {
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

// Queries are fuzzy filter texts that probe every case a byte scan must get
// right: case folding (the Kelvin sign, the long s), spaces, escapes as
// typed, quotes, the damaged row's words, and no match at all.
var Queries = []string{"", "task", "TASK", "den", "(damaged)", "dmg", "evil", "\u212a", "ſ", "ok", "fail",
	"x1b", "tv", " ", "a b", "approval_denied", "ü", "zzz", "task-0000123", `\`, `"`, "prev", "kelvin", "u0061"}
