package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestGetReturnsFullText(t *testing.T) {
	s, _ := newStore(t)
	long := strings.Repeat("long text ", 100)
	id := addMem(t, s, long, []string{"b", "a", "b"}, "notes", "2025-05-06T07:08:09+02:00")
	m, err := s.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := Memory{ID: id, Text: strings.TrimSpace(long), Tags: []string{"b", "a"}, Source: "notes",
		CreatedAt: time.Date(2025, 5, 6, 5, 8, 9, 0, time.UTC)}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("got %+v\nwant %+v", m, want)
	}
	if _, err := s.Get(t.Context(), id+1000); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing id: %v", err)
	}
}

func TestAddValidates(t *testing.T) {
	s, _ := newStore(t)
	for _, c := range []struct {
		m    NewMemory
		want string
	}{
		{NewMemory{Text: "  "}, "text: must not be empty"},
		{NewMemory{Text: "x", Tags: []string{""}}, "tags: ensure each tag has at least 1 character"},
		{NewMemory{Text: "x", Source: strings.Repeat("s", 101)}, "source: ensure this value has at most 100 characters"},
		{NewMemory{Text: "a\xffb"}, "text: must be valid UTF-8 text"},
	} {
		_, err := s.Add(t.Context(), c.m)
		var inv *InvalidError
		if !errors.As(err, &inv) || err.Error() != c.want {
			t.Errorf("%+v: got %v, want %q", c.m, err, c.want)
		}
	}
	// No date means the injected clock.
	id := addMem(t, s, "dated by the clock", nil, "", "")
	if m, _ := s.Get(t.Context(), id); !m.CreatedAt.Equal(testNow) {
		t.Fatalf("created_at %v", m.CreatedAt)
	}
}

func TestFilterSemantics(t *testing.T) {
	s, _ := newStore(t)
	addFiller(t, s, 20)
	both := addMem(t, s, "alpha note one", []string{"x", "y", "z"}, "Docs", "2025-01-31T23:59:59Z")
	onlyX := addMem(t, s, "alpha note two", []string{"x"}, "docs", "2025-02-01T00:00:00Z")
	early := addMem(t, s, "alpha note three", []string{"y", "x"}, "Docs", "2025-01-01T00:00:00Z")
	ids := func(args string) []int64 {
		out := run(t, NewTool(s, nil), args)
		if out.Result.IsError {
			t.Fatal(out.Result.Text())
		}
		var r []int64
		for _, h := range out.Hits {
			r = append(r, h.ID)
		}
		return r
	}
	set := func(xs ...int64) map[int64]bool {
		m := map[int64]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	for args, want := range map[string]map[int64]bool{
		`{"query": "alpha", "filters": {"tags": ["x", "y"]}}`:                                 set(both, early),
		`{"query": "alpha", "filters": {"tags": ["x"]}}`:                                      set(both, onlyX, early),
		`{"query": "alpha", "filters": {"tags": ["X"]}}`:                                      set(),
		`{"query": "alpha", "filters": {"source": "Docs"}}`:                                   set(both, early),
		`{"query": "alpha", "filters": {"source": "docs"}}`:                                   set(onlyX),
		`{"query": "alpha", "filters": {"source": "Doc"}}`:                                    set(),
		`{"query": "alpha", "filters": {"date_to": "2025-01-31"}}`:                            set(both, early),
		`{"query": "alpha", "filters": {"date_from": "2025-02-01"}}`:                          set(onlyX),
		`{"query": "alpha", "filters": {"date_from": "2025-01-31", "date_to": "2025-01-31"}}`: set(both),
		`{"query": "alpha", "filters": {"date_from": "2025-01-01", "date_to": "2025-01-01"}}`: set(early),
	} {
		if got := set(ids(args)...); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v want %v", args, got, want)
		}
	}
	// Tags come back in the order they were stored.
	if out := run(t, NewTool(s, nil), `{"query": "three"}`); len(out.Hits) != 1 || !reflect.DeepEqual(out.Hits[0].Tags, []string{"y", "x"}) {
		t.Fatalf("%+v", out.Hits)
	}
}

func TestScoreFormula(t *testing.T) {
	for bm, want := range map[float64]float64{0: 0, 1: 0, -1: 0.5, -4: 0.8, -9: 0.9} {
		if got := Score(bm); got != want {
			t.Errorf("Score(%v) = %v, want %v", bm, got, want)
		}
	}
	// Ranking: the memory that matches more (and rarer) words scores higher.
	s, _ := newStore(t)
	addFiller(t, s, 30)
	a := addMem(t, s, "rust borrow checker explained", nil, "", "2025-01-01")
	addMem(t, s, "rust on the garden gate", nil, "", "2025-01-01")
	out := run(t, NewTool(s, nil), `{"query": "rust borrow checker"}`)
	if len(out.Hits) != 2 || out.Hits[0].ID != a || !(out.Hits[0].Score > out.Hits[1].Score) {
		t.Fatalf("%+v", out.Hits)
	}
}

func TestMigrationsAreVersioned(t *testing.T) {
	s, path := newStore(t)
	addMem(t, s, "survives reopening", nil, "", "2025-01-01")
	s.Close()
	var v int
	if err := rawDB(t, path).QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version %d (%v), want %d", v, err, SchemaVersion)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := s2.Count(t.Context()); n != 1 {
		t.Fatalf("count after reopen %d", n)
	}
	s2.Close()
	// A database from a newer Vigil is refused, not half-used.
	if _, err := rawDB(t, path).Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{})
	r := NewTool(Unavailable(err), nil).Execute(t.Context(), []byte(`{"query": "x"}`))
	if r.Text() != "Error: Processing error: Memory database schema version 99 is newer than this build's 1" {
		t.Fatalf("%q", r.Text())
	}
}

func TestImportAllOrNothing(t *testing.T) {
	s, _ := newStore(t)
	good := `{"text": "first", "tags": ["a"], "source": "s", "created_at": "2025-01-02"}
{"text": "second", "created_at": "2025-01-02T03:04:05Z"}

{"text": "third", "tags": null, "source": null}
`
	n, err := s.Import(t.Context(), strings.NewReader(good))
	if err != nil || n != 3 {
		t.Fatalf("n=%d err=%v", n, err)
	}
	for body, want := range map[string]string{
		"{\"text\": \"ok\"}\n{\"text\": \"ok2\"}\n{\"text\": \"\"}\n":       "line 3: text: must not be empty",
		"{\"text\": \"ok\"}\n{\"txt\": \"typo\"}\n":                         "line 2: txt: extra fields not permitted",
		"{\"text\": \"ok\"}\n{\"text\": \"x\", \"tags\": \"a\"}\n":          "line 2: tags: value is not a valid list of strings",
		"{\"text\": \"ok\"}\n{\"text\": \"x\", \"created_at\": \"soon\"}\n": "line 2: created_at: invalid date format, expected RFC 3339 or YYYY-MM-DD",
		"{\"text\": \"ok\"}\n\n{broken\n":                                   "line 3: not a JSON object",
		"{\"source\": \"s\"}\n":                                             "line 1: text: field required",
		"{\"text\": \"ok\"}\n{\"text\": 5}\n":                               "line 2: text: wrong type (number)",
	} {
		_, err := s.Import(t.Context(), strings.NewReader(body))
		var ie *ImportError
		if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want prefix %q", body, err, want)
		}
		if c, _ := s.Count(t.Context()); c != 3 {
			t.Fatalf("a failed import left %d memories, want 3", c)
		}
	}
	// An over-long line fails with its number, without reading the whole file first.
	big := "{\"text\": \"ok\"}\n{\"text\": \"" + strings.Repeat("x", MaxLineBytes+10) + "\"}\n"
	if _, err := s.Import(t.Context(), strings.NewReader(big)); err == nil || !strings.HasPrefix(err.Error(), "line 2: line longer than") {
		t.Fatalf("big line: %v", err)
	}
	// Imported memories are searchable.
	if out := run(t, NewTool(s, nil), `{"query": "second"}`); len(out.Hits) != 1 {
		t.Fatalf("%+v", out)
	}
}

func TestSeedDemo(t *testing.T) {
	s1, _ := newStore(t)
	s2, _ := newStore(t)
	for _, s := range []*Store{s1, s2} {
		if err := SeedDemo(s, testNow); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := s1.Count(t.Context())
	if n < 280 || n > 320 {
		t.Fatalf("demo has %d memories, want about 300", n)
	}
	tags, sources, days := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for id := int64(1); id <= int64(n); id++ {
		a, err1 := s1.Get(t.Context(), id)
		b, err2 := s2.Get(t.Context(), id)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("demo not deterministic at %d: %+v vs %+v", id, a, b)
		}
		for _, tg := range a.Tags {
			tags[tg] = true
		}
		sources[a.Source] = true
		days[a.CreatedAt.Format("2006-01")] = true
	}
	if len(tags) < 15 || len(sources) < 8 || len(days) < 10 {
		t.Fatalf("not varied: %d tags, %d sources, %d months", len(tags), len(sources), len(days))
	}
	if r := NewTool(s1, nil).Execute(context.Background(), []byte(`{"query": "docker", "filters": {"tags": ["devops"]}}`)); r.IsError || !strings.HasPrefix(r.Text(), "Found ") {
		t.Fatalf("%q", r.Text())
	}
}

// TestOpenCreatesAPrivateFile: memory.db and its WAL are 0600 whatever the umask.
func TestOpenCreatesAPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Add(context.Background(), NewMemory{Text: "the boiler code is 4471"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(p), mode)
		}
	}
}
