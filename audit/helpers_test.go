package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// stepClock is the injected clock of every test: it starts at a fixed instant
// and moves one second per call, so entries differ but runs are identical.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// sampleEntry varies every field so the tamper matrix touches strings,
// numbers, booleans, nested details and multi-byte UTF-8.
func sampleEntry(i int) Entry {
	events := []string{EventSubmitted, EventApproved, EventExecuted, EventDenied, EventFailed, EventSearched}
	e := Entry{
		Actor:      fmt.Sprintf("agent-%d", i%3),
		Event:      events[i%len(events)],
		TaskID:     fmt.Sprintf("task-%03d", i/2),
		Capability: "media.play",
		Target:     "living-room",
		TokenJTI:   fmt.Sprintf("jti-%d", i),
		Success:    i%2 == 0,
		Details: Details(map[string]any{
			"n": i, "note": "café ☕", "nested": map[string]any{"z": []any{1, "two", true, nil}, "a": 1.5},
		}),
	}
	if !e.Success {
		e.ErrorCode = "APPROVAL_DENIED"
	}
	if i%4 == 1 {
		e.ContentHashBefore = fmt.Sprintf("sha256:%064x", i)
		e.ContentHashAfter = fmt.Sprintf("sha256:%064x", i+1)
	}
	return e
}

// newLog writes n sample entries through Append and returns the log's path.
func newLog(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := Open(path, stepClock())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := l.Append(sampleEntry(i)); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	return path
}

func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustVerify(t testing.TB, path string) Report {
	t.Helper()
	rep, err := Verify(path)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
