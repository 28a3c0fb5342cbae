package memory

import (
	"context"
	"slices"
	"testing"
	"time"
)

// listCorpus is five memories on known days, sources and tags.
func listCorpus(t *testing.T) (*Store, string, map[string]int64) {
	t.Helper()
	s, path := newStore(t)
	ids := map[string]int64{
		"old":    addMem(t, s, "old note about go", []string{"go"}, "notes", "2025-01-01"),
		"jan":    addMem(t, s, "january standup", []string{"work", "meeting"}, "slack", "2025-01-15T09:00:00Z"),
		"jan2":   addMem(t, s, "january retro", []string{"work"}, "slack", "2025-01-15T17:30:00Z"),
		"feb":    addMem(t, s, "february plan", []string{"work", "plan"}, "notes", "2025-02-03"),
		"latest": addMem(t, s, "newest idea about go", []string{"go", "idea"}, "notes", "2025-03-01"),
	}
	return s, path, ids
}

func findIDs(t *testing.T, s *Store, req Request) []int64 {
	t.Helper()
	hits, err := s.Find(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, h := range hits {
		if req.Query == "" && (h.Score != 0 || h.Match != "") {
			t.Fatalf("a listing without a query carries a score: %+v", h)
		}
		out = append(out, h.ID)
	}
	return out
}

func day(s string) time.Time { d, _ := time.Parse("2006-01-02", s); return d }

// Without a query the filters alone choose, newest first, and the limit
// keeps the newest.
func TestFindWithoutQueryFiltersNewestFirst(t *testing.T) {
	s, _, id := listCorpus(t)
	cases := []struct {
		name string
		req  Request
		want []int64
	}{
		{"all", Request{Limit: 10}, []int64{id["latest"], id["feb"], id["jan2"], id["jan"], id["old"]}},
		{"limit", Request{Limit: 2}, []int64{id["latest"], id["feb"]}},
		{"tag", Request{Limit: 10, Filters: Filters{Tags: []string{"work"}}}, []int64{id["feb"], id["jan2"], id["jan"]}},
		{"tags all", Request{Limit: 10, Filters: Filters{Tags: []string{"work", "meeting"}}}, []int64{id["jan"]}},
		{"source", Request{Limit: 10, Filters: Filters{Source: "notes"}}, []int64{id["latest"], id["feb"], id["old"]}},
		{"days inclusive", Request{Limit: 10, Filters: Filters{DateFrom: day("2025-01-15"), DateTo: day("2025-02-03")}},
			[]int64{id["feb"], id["jan2"], id["jan"]}},
		{"from instant", Request{Limit: 10, Filters: Filters{DateFrom: time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)}},
			[]int64{id["latest"], id["feb"], id["jan2"]}},
		{"until instant inclusive", Request{Limit: 10, Filters: Filters{Until: time.Date(2025, 1, 15, 17, 30, 0, 0, time.UTC)}},
			[]int64{id["jan2"], id["jan"], id["old"]}},
		{"until before the day's end", Request{Limit: 10, Filters: Filters{DateTo: day("2025-01-15"), Until: time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)}},
			[]int64{id["jan"], id["old"]}},
		{"none", Request{Limit: 10, Filters: Filters{Source: "email"}}, nil},
	}
	for _, c := range cases {
		if got := findIDs(t, s, c.req); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// With a query Find is the search: scored, best first, filters applied.
func TestFindWithQueryIsTheSearch(t *testing.T) {
	s, _, id := listCorpus(t)
	req := Request{Query: "go idea", Limit: 10, Filters: Filters{Source: "notes"}}
	hits, err := s.Find(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := s.SearchMemory(context.Background(), req)
	if len(hits) != 2 || hits[0].ID != id["latest"] || hits[0].Score <= 0 || len(want) != len(hits) {
		t.Fatalf("hits %+v", hits)
	}
}

// The until bound also narrows the search and its fast paths.
func TestSearchHonoursUntil(t *testing.T) {
	s, _, id := listCorpus(t)
	req := Request{Query: "january", Limit: 10, Filters: Filters{Until: time.Date(2025, 1, 15, 9, 0, 0, 0, time.UTC)}}
	if got := findIDs(t, s, req); !slices.Equal(got, []int64{id["jan"]}) {
		t.Fatalf("got %v", got)
	}
}

func TestParseListArgumentsQueryOptional(t *testing.T) {
	req, errs := ParseListArguments([]byte(`{"filters":{"tags":["work"]},"limit":3}`))
	if len(errs) > 0 || req.Query != "" || req.Limit != 3 || !slices.Equal(req.Filters.Tags, []string{"work"}) {
		t.Fatalf("req %+v errs %v", req, errs)
	}
	if _, errs := ParseListArguments([]byte(`{}`)); len(errs) > 0 {
		t.Fatalf("no query, no filters: %v", errs)
	}
	if _, errs := ParseListArguments([]byte(`{"query":"  "}`)); len(errs) != 1 || errs[0].Field != "query" {
		t.Fatalf("a blank query given: %v", errs)
	}
	if _, errs := ParseListArguments([]byte(`{"filters":{"date_from":"2025-13-01"}}`)); len(errs) != 1 || errs[0].Field != "filters.date_from" {
		t.Fatalf("a bad date: %v", errs)
	}
	// the tool itself still needs its query
	if _, errs := ParseArguments([]byte(`{"filters":{"tags":["work"]}}`)); len(errs) != 1 || errs[0].Message != "field required" {
		t.Fatalf("search_memory without a query: %v", errs)
	}
}

// A memory added through another connection to the file (another process's
// `vigil memory add`) is signalled by Changes.
func TestChangesSignalsAnotherConnectionsAdd(t *testing.T) {
	s, path := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	addMem(t, other, "added elsewhere", nil, "mcp", "")
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no change signalled after another connection added a memory")
	}
	if n, _ := s.Count(context.Background()); n != 1 {
		t.Fatalf("count %d after the signal", n)
	}
	cancel()
	for range ch { // closes once ctx ends
	}
}
