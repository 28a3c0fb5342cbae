package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// maxQueryTerms bounds the OR-expression handed to FTS5; later words of a
// very long query add cost and almost no ranking signal.
const maxQueryTerms = 64

// Request is a validated search_memory request.
type Request struct {
	Query   string  `json:"query"`
	Limit   int     `json:"limit"`
	Filters Filters `json:"filters"`
}

// Filters narrow a search. Zero values mean "no filter".
type Filters struct {
	Tags     []string  `json:"tags,omitempty"`     // memories carrying all of them
	Source   string    `json:"source,omitempty"`   // exact, case-sensitive
	DateFrom time.Time `json:"date_from,omitzero"` // UTC midnight of the first day, inclusive
	DateTo   time.Time `json:"date_to,omitzero"`   // UTC midnight of the last day, inclusive
}

// Empty reports whether no filter is set.
func (f Filters) Empty() bool {
	return len(f.Tags) == 0 && f.Source == "" && f.DateFrom.IsZero() && f.DateTo.IsZero()
}

// Hit is one search result: the memory and its relevance score in [0, 1].
type Hit struct {
	Memory
	Score float64 `json:"score"`
}

// Searcher is the core the tool delegates to. *Store implements it.
type Searcher interface {
	SearchMemory(ctx context.Context, req Request) ([]Hit, error)
}

// SearchMemory runs req against the store: FTS5 match, filters and limit in
// one SQL statement, best first.
func (s *Store) SearchMemory(ctx context.Context, req Request) ([]Hit, error) {
	done, err := s.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	match := ftsQuery(req.Query)
	if match == "" {
		// Only punctuation: nothing can match, and that is not an error.
		return nil, nil
	}
	sqlText, args := searchSQL(match, req)
	rows, err := s.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var tags string
		var created int64
		var bm25 float64
		if err := rows.Scan(&h.ID, &h.Text, &tags, &h.Source, &created, &bm25); err != nil {
			return nil, classify(err)
		}
		// A tags column that is not a JSON array was written by something other
		// than this package: an unexpected state, reported in the generic category.
		if err := json.Unmarshal([]byte(tags), &h.Tags); err != nil {
			return nil, fmt.Errorf("memory %d: tags column: %w", h.ID, err)
		}
		h.CreatedAt = time.UnixMilli(created).UTC()
		h.Score = Score(bm25)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return hits, nil
}

// Score maps an FTS5 bm25() value (≤ 0, more negative is better) to [0, 1];
// see the package documentation for the formula.
func Score(bm25 float64) float64 {
	s := -bm25
	if !(s > 0) { // also catches NaN
		return 0
	}
	return s / (s + 1)
}

// searchSQL builds the one statement a search runs. Only placeholders carry
// values; the text varies only in how many tag conditions it has. CROSS JOIN
// pins the FTS index as the outer loop: otherwise a broad date range makes the
// planner walk the created_at index over every memory and probe FTS per row
// (20x slower at 100,000 memories).
func searchSQL(match string, req Request) (string, []any) {
	var b strings.Builder
	args := []any{match}
	b.WriteString(`SELECT m.id, m.text, m.tags, m.source, m.created_at, bm25(memories_fts, 1.0, 0.5) AS r
FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH ?`)
	f := req.Filters
	for _, t := range f.Tags {
		b.WriteString(` AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.tag = ? AND t.memory_id = m.id)`)
		args = append(args, t)
	}
	if f.Source != "" {
		b.WriteString(` AND m.source = ?`)
		args = append(args, f.Source)
	}
	if !f.DateFrom.IsZero() {
		b.WriteString(` AND m.created_at >= ?`)
		args = append(args, f.DateFrom.UTC().UnixMilli())
	}
	if !f.DateTo.IsZero() {
		// Inclusive day: everything before the next day's midnight.
		b.WriteString(` AND m.created_at < ?`)
		args = append(args, f.DateTo.UTC().AddDate(0, 0, 1).UnixMilli())
	}
	b.WriteString(` ORDER BY r ASC, m.created_at DESC, m.id DESC LIMIT ?`)
	args = append(args, req.Limit)
	return b.String(), args
}

// ftsQuery turns free text into an FTS5 expression: each distinct word quoted
// (so AND, NEAR, *, ^ and quotes are plain data) and joined with OR.
func ftsQuery(q string) string {
	var terms []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(q, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
	}) {
		w = strings.ToLower(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, `"`+w+`"`)
		if len(terms) == maxQueryTerms {
			break
		}
	}
	return strings.Join(terms, " OR ")
}
