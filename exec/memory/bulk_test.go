package memory

import (
	"bytes"
	"strings"
	"testing"
)

func indexNames(t *testing.T, s *Store) string {
	t.Helper()
	rows, err := s.db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND name IN
('memories_source_created', 'memories_created', 'memory_tags_memory') ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	return strings.Join(names, ",")
}

const allIndexes = "memories_created,memories_source_created,memory_tags_memory"

// A bulk import drops the secondary indexes and builds them again before
// its commit; a failed one rolls the drop back. Ids continue after the
// stored ones and every tag reaches memory_tags.
func TestBulkImportRebuildsIndexesAndAssignsIDs(t *testing.T) {
	s, _ := newStore(t)
	first := addMem(t, s, "stored before", []string{"x"}, "", "2025-01-01")
	var b bytes.Buffer
	for i := 0; i < 300; i++ { // more than two batches of batchRows
		jsonLine(&b, map[string]any{"text": "bulk memory", "tags": []string{"a", "b"}, "source": "s"})
	}
	if n, err := s.Import(t.Context(), &b); err != nil || n != 300 {
		t.Fatal(n, err)
	}
	if got := indexNames(t, s); got != allIndexes {
		t.Fatalf("indexes after import: %q", got)
	}
	var lo, hi, tags int64
	s.db.QueryRow(`SELECT min(id), max(id) FROM memories WHERE id > ?`, first).Scan(&lo, &hi)
	s.db.QueryRow(`SELECT count(*) FROM memory_tags WHERE memory_id > ?`, first).Scan(&tags)
	if lo != first+1 || hi != first+300 || tags != 600 {
		t.Fatalf("ids %d..%d, %d tags", lo, hi, tags)
	}
	if hits, err := s.SearchMemory(t.Context(), Request{Query: "bulk", Limit: 3, Filters: Filters{Tags: []string{"b"}, Source: "s"}}); err != nil || len(hits) != 3 {
		t.Fatalf("%v %v", hits, err)
	}
	b.Reset()
	jsonLine(&b, map[string]any{"text": "fine"})
	b.WriteString("{not json}\n")
	if _, err := s.Import(t.Context(), &b); err == nil {
		t.Fatal("bad line accepted")
	}
	if got := indexNames(t, s); got != allIndexes {
		t.Fatalf("indexes after a failed import: %q", got)
	}
	if n, _ := s.Count(t.Context()); n != 301 {
		t.Fatalf("count %d", n)
	}
}
