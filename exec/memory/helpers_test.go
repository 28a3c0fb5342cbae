package memory

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var testNow = time.Date(2025, 11, 20, 12, 0, 0, 0, time.UTC)

// newStore opens a real SQLite file in a temp dir.
func newStore(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path, Options{Now: func() time.Time { return testNow }, BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func addMem(t testing.TB, s *Store, text string, tags []string, source, date string) int64 {
	t.Helper()
	m := NewMemory{Text: text, Tags: tags, Source: source}
	if date != "" {
		d, err := ParseTime(date)
		if err != nil {
			t.Fatal(err)
		}
		m.CreatedAt = d
	}
	id, err := s.Add(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// addFiller stores memories sharing no words with the test queries, so BM25's
// idf for the queried words is positive (FTS5 floors it for words in half the corpus).
func addFiller(t testing.TB, s *Store, n int) {
	t.Helper()
	words := []string{"garden", "tomato", "bicycle", "harbour", "violin", "granite", "lantern", "meadow"}
	for i := 0; i < n; i++ {
		addMem(t, s, words[i%len(words)]+" "+words[(i*3+1)%len(words)]+" notes number "+string(rune('a'+i%26)),
			[]string{"misc"}, "filler", "2024-06-01")
	}
}

// pythonCorpus is scenario 1's three memories plus filler.
func pythonCorpus(t testing.TB) (*Store, string, map[string]int64) {
	s, path := newStore(t)
	addFiller(t, s, 24)
	ids := map[string]int64{
		"a": addMem(t, s, "Python is a programming language", []string{"python"}, "documentation", "2025-03-01"),
		"b": addMem(t, s, "Python was created by Guido", nil, "notes", "2025-03-02"),
		"c": addMem(t, s, "Python is used for web development", []string{"python", "web"}, "documentation", "2025-03-03"),
	}
	return s, path, ids
}

func run(t testing.TB, tool *Tool, args string) Outcome {
	t.Helper()
	return tool.Run(context.Background(), []byte(args))
}

// rawDB opens a second, independent connection to the same file, the way
// another process or a damaged tool would touch it.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=100")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// logRecords captures a tool's structured logs.
type logRecords struct{ buf bytes.Buffer }

func (l *logRecords) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&l.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logRecords) records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(l.buf.Bytes()))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (l *logRecords) find(t testing.TB, msg string) map[string]any {
	t.Helper()
	for _, r := range l.records(t) {
		if r["msg"] == msg {
			return r
		}
	}
	t.Fatalf("no log record %q in:\n%s", msg, l.buf.String())
	return nil
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// corruptPages overwrites the file after its first page with garbage, leaving
// the header readable so the damage shows up only when data pages are read.
func corruptPages(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	garbage := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, int(st.Size()-4096)/4)
	if _, err := f.WriteAt(garbage, 4096); err != nil {
		t.Fatal(err)
	}
}
