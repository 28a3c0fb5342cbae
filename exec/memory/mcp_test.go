package memory

import (
	"errors"
	"testing"
	"time"
)

// TestMCPListNewestFirstWithCursor pages through the newest-first listing
// (list_memories) with filters, and checks that every page is what one
// unpaged listing holds.
func TestMCPListNewestFirstWithCursor(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	var ids []int64
	for i, d := range []string{"2025-01-01", "2025-01-02", "2025-01-02", "2025-01-03", "2025-01-04"} {
		tags := []string{"a"}
		if i%2 == 0 {
			tags = append(tags, "even")
		}
		ids = append(ids, addMem(t, s, "memory text", tags, "notes", d))
	}
	all, next, err := s.List(ctx, Filters{}, 100, nil)
	if err != nil || next != nil || len(all) != 5 {
		t.Fatalf("%v %v %d", err, next, len(all))
	}
	want := []int64{ids[4], ids[3], ids[2], ids[1], ids[0]} // same day: highest id first
	for i, m := range all {
		if m.ID != want[i] {
			t.Fatalf("order %d: got %d want %d", i, m.ID, want[i])
		}
	}
	var paged []int64
	var after *Cursor
	for {
		page, next, err := s.List(ctx, Filters{}, 2, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			paged = append(paged, m.ID)
		}
		if next == nil {
			break
		}
		c, err := ParseCursor(next.String())
		if err != nil {
			t.Fatal(err)
		}
		after = &c
	}
	if len(paged) != 5 || paged[2] != want[2] || paged[4] != want[4] {
		t.Fatalf("paged %v want %v", paged, want)
	}
	even, _, _ := s.List(ctx, Filters{Tags: []string{"a", "even"}}, 10, nil)
	if len(even) != 3 {
		t.Fatalf("tag filter: %d", len(even))
	}
	day := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	mid, _, _ := s.List(ctx, Filters{DateFrom: day("2025-01-02"), DateTo: day("2025-01-03")}, 10, nil)
	if len(mid) != 3 {
		t.Fatalf("date filter: %d", len(mid))
	}
	if _, err := ParseCursor("x"); err == nil {
		t.Fatal("bad cursor accepted")
	}
}

// TestMCPDelete removes a memory from the table, its tags and the index.
func TestMCPDelete(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	id := addMem(t, s, "the zebra crossing", []string{"z"}, "notes", "2025-01-01")
	if err := s.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := s.Delete(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	hits, err := s.SearchMemory(ctx, Request{Query: "zebra", Limit: 10})
	if err != nil || len(hits) != 0 {
		t.Fatalf("index still finds it: %v %d", err, len(hits))
	}
	tagged, _, _ := s.List(ctx, Filters{Tags: []string{"z"}}, 10, nil)
	if len(tagged) != 0 {
		t.Fatal("tags left behind")
	}
}
