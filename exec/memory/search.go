package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
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
	DateFrom time.Time `json:"date_from,omitzero"` // the first instant, inclusive (a day's UTC midnight)
	DateTo   time.Time `json:"date_to,omitzero"`   // UTC midnight of the last day, inclusive
	// Until is an exact last instant, inclusive, for a caller that was given
	// a time rather than a day (`vigil memory list --to` with RFC 3339).
	// With DateTo as well, the earlier bound holds.
	Until time.Time `json:"until,omitzero"`
}

// Empty reports whether no filter is set.
func (f Filters) Empty() bool {
	return len(f.Tags) == 0 && f.Source == "" && f.DateFrom.IsZero() && f.DateTo.IsZero() && f.Until.IsZero()
}

// end is the exclusive upper bound of the filters' dates in Unix
// milliseconds (created_at's unit); ok is false when there is none.
func (f Filters) end() (ms int64, ok bool) {
	if !f.DateTo.IsZero() {
		// Inclusive day: everything before the next day's midnight.
		ms, ok = f.DateTo.UTC().AddDate(0, 0, 1).UnixMilli(), true
	}
	if !f.Until.IsZero() {
		// Inclusive instant: created_at is whole milliseconds, so the
		// instant's millisecond is the last one that passes.
		if u := f.Until.UnixMilli() + 1; !ok || u < ms {
			ms, ok = u, true
		}
	}
	return ms, ok
}

// Hit is one search result: the memory and its relevance score in [0, 1].
type Hit struct {
	Memory
	Score float64 `json:"score"`
	// Match says how a hybrid search found the memory: keyword, meaning or
	// both. Empty when no embedder is configured (keyword search only).
	Match string `json:"match,omitempty"`
}

// Searcher is the core the tool delegates to. *Store implements it.
type Searcher interface {
	SearchMemory(ctx context.Context, req Request) ([]Hit, error)
}

// SearchMemory runs req against the store: FTS5 match, filters and limit in
// SQL, best first.
//
// BM25 has to be computed for every matching memory, but the wide memories
// row (text and tags) is needed only for the few that make the page. So a
// search first ranks (id, score) pairs alone and reads full rows only for the
// Limit best, plus every memory tied with the Limit-th score so that the
// newest-first tie-break sees every candidate it would see in one statement.
// When a tie at that boundary runs past the pairs fetched, or anything else
// is unusual, the search falls back to the one-statement form (searchSQL),
// whose result the fast path reproduces exactly. All reads share one read
// transaction, so they see the same snapshot.
func (s *Store) SearchMemory(ctx context.Context, req Request) ([]Hit, error) {
	done, err := s.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	terms := queryTerms(req.Query)
	if len(terms) == 0 {
		// Only punctuation: nothing can match, and that is not an error.
		return nil, nil
	}
	qv, err := s.queryVector(ctx, req.Query)
	if err != nil {
		return nil, err
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, classify(err)
	}
	// Read-only: ending it with a rollback discards nothing.
	defer tx.Rollback()
	var cands []ranked
	if qv != nil {
		cands, err = s.hybrid(ctx, tx, terms, qv, req)
	} else {
		cands, err = tiered(ctx, tx, s.tiers, terms, req)
	}
	if err != nil {
		return nil, err
	}
	return toHits(cands)
}

// plan is the shape of one ranking statement: its FTS5 MATCH expression and,
// for the window tier (tiers.go), the lowest rowid it ranks (0: every rowid).
type plan struct {
	match    string
	minRowid int64
}

// exact is the search of one plan as the one statement (fullHits) orders it,
// through the fast paths when they can prove their answer. The result is in
// rank order and at most req.Limit long (for the limits fastLimit accepts).
func exact(ctx context.Context, tx *sql.Tx, p plan, req Request) ([]ranked, error) {
	if broad, err := broadDates(ctx, tx, req.Filters); err != nil {
		return nil, err
	} else if broad {
		c, ok, err := postFilteredRanked(ctx, tx, p, req)
		if err != nil || ok {
			return c, err
		}
	}
	c, ok, err := topRanked(ctx, tx, p, req)
	if err != nil || ok {
		return c, err
	}
	return fullRanked(ctx, tx, p, req)
}

// tieSlack is how many ranked pairs beyond Limit the fast path fetches to see
// the end of a tie at the Limit-th score. A longer tie is rare and is handled
// by the fallback, so the value only trades a few rows against fallbacks.
const tieSlack = 16

// fastLimit reports whether the fast paths serve limit. Others (the tool
// accepts 1 to 100) go to the one statement: SQLite's own LIMIT semantics
// apply (a negative limit is none) and the fast paths' IN lists stay short.
func fastLimit(limit int) bool { return limit >= 1 && limit <= 1000 }

// ranked is one memory as the search statement sees it: its raw bm25 value
// r and its columns, the tags still JSON.
type ranked struct {
	id, created int64
	r           float64
	text, tags  string
	source      string
	found       bool
	fused       float64 // hybrid search: the fused score in [0, 1]
	match       string  // hybrid search: MatchKeyword, MatchMeaning or MatchBoth
}

// topHits ranks the matches that pass the filters, then reads the rows of the
// best. ok is false when the caller must fall back to fullHits.
func topHits(ctx context.Context, tx *sql.Tx, match string, req Request) (hits []Hit, ok bool, err error) {
	c, ok, err := topRanked(ctx, tx, plan{match: match}, req)
	if err != nil || !ok {
		return nil, ok, err
	}
	hits, err = toHits(c)
	return hits, err == nil, err
}

// topRanked is topHits for any plan, before the rows become hits.
func topRanked(ctx context.Context, tx *sql.Tx, p plan, req Request) (cands []ranked, ok bool, err error) {
	if !fastLimit(req.Limit) {
		return nil, false, nil
	}
	n := req.Limit + tieSlack
	q, args := rankPlanSQL(p, req.Filters, n)
	cands, ok, err = rank(ctx, tx, q, args)
	if err != nil || !ok || len(cands) == 0 {
		return nil, ok, err
	}
	// cands is in ascending bm25 order (best first). Every pair up to the last
	// one tied with the Limit-th is a candidate; if the fetch stopped inside
	// that tie, more tied pairs may exist unseen.
	last := cands[min(req.Limit, len(cands))-1].r
	if len(cands) == n && cands[n-1].r <= last {
		return nil, false, nil
	}
	n = 0
	for n < len(cands) && cands[n].r <= last {
		n++
	}
	cands = cands[:n]
	if err := fetch(ctx, tx, cands, Filters{}); err != nil {
		return nil, false, err
	}
	for _, c := range cands {
		if !c.found {
			// The index names a memory the table lacks: the one statement's
			// join drops it and may then reach further down the ranking.
			return nil, false, nil
		}
	}
	return best(cands, req.Limit), true, nil
}

// postFiltersFetch is how many ranked pairs postFiltered fetches at least;
// it reads rows for as few of them as settle the answer.
const postFiltersFetch = 4 * (100 + tieSlack)

// postFiltered is topHits for filters that most memories pass: it ranks every
// match without reading the memories table (the per-match row lookup costs as
// much as BM25 itself) and applies the filters to the best few only. ok is
// false when those few do not settle the answer.
func postFiltered(ctx context.Context, tx *sql.Tx, match string, req Request) (hits []Hit, ok bool, err error) {
	c, ok, err := postFilteredRanked(ctx, tx, plan{match: match}, req)
	if err != nil || !ok {
		return nil, ok, err
	}
	hits, err = toHits(c)
	return hits, err == nil, err
}

// postFilteredRanked is postFiltered for any plan, before the rows become hits.
func postFilteredRanked(ctx context.Context, tx *sql.Tx, p plan, req Request) (cands []ranked, ok bool, err error) {
	if !fastLimit(req.Limit) {
		return nil, false, nil
	}
	n := max(postFiltersFetch, 4*(req.Limit+tieSlack))
	q, args := rankPlanSQL(p, Filters{}, n)
	cands, ok, err = rank(ctx, tx, q, args)
	if err != nil || !ok || len(cands) == 0 {
		return nil, ok, err
	}
	// Filter the ranked pairs a chunk at a time, best first, and stop as soon
	// as the next unexamined pair scores worse than the Limit-th that passed:
	// with most memories passing, the first chunk usually settles it.
	var pass []ranked
	chunk := req.Limit + tieSlack
	for done := 0; ; {
		next := cands[done:min(done+chunk, len(cands))]
		if err := fetch(ctx, tx, next, req.Filters); err != nil {
			return nil, false, err
		}
		for _, c := range next {
			if c.found {
				pass = append(pass, c)
			}
		}
		done += len(next)
		if done == len(cands) {
			break
		}
		if len(pass) >= req.Limit && cands[done].r > pass[req.Limit-1].r {
			break
		}
	}
	if len(pass) == 0 {
		// Settled only if every match was examined.
		return nil, len(cands) < n, nil
	}
	last := pass[min(req.Limit, len(pass))-1].r
	if len(cands) == n && cands[n-1].r <= last {
		// An unranked match may pass the filters and score as well.
		return nil, false, nil
	}
	k := 0
	for k < len(pass) && pass[k].r <= last {
		k++
	}
	return best(pass[:k], req.Limit), true, nil
}

// broadDates reports whether the filters are a date range only (no tags, no
// source) spanning at least half of the stored memories' dates: most matches
// then pass, and postFiltered beats joining every match. Only the strategy
// depends on this estimate, never the result.
func broadDates(ctx context.Context, tx *sql.Tx, f Filters) (bool, error) {
	end, hasEnd := f.end()
	if len(f.Tags) > 0 || f.Source != "" || (f.DateFrom.IsZero() && !hasEnd) {
		return false, nil
	}
	// Two scalar subqueries: each min() or max() alone is one index probe.
	var lo, hi sql.NullInt64
	if err := tx.QueryRowContext(ctx,
		`SELECT (SELECT min(created_at) FROM memories), (SELECT max(created_at) FROM memories)`).Scan(&lo, &hi); err != nil {
		return false, classify(err)
	}
	if !lo.Valid || !hi.Valid {
		return false, nil
	}
	from, to := lo.Int64, hi.Int64+1 // [from, to) in Unix ms
	if !f.DateFrom.IsZero() {
		from = max(from, f.DateFrom.UTC().UnixMilli())
	}
	if hasEnd {
		to = min(to, end)
	}
	return 2*(to-from) >= hi.Int64+1-lo.Int64, nil
}

// rank runs a rankSQL statement. ok is false for a NULL or NaN score, which
// the one statement orders its own way.
func rank(ctx context.Context, tx *sql.Tx, q string, args []any) (cands []ranked, ok bool, err error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, false, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var r sql.NullFloat64
		if err := rows.Scan(&id, &r); err != nil {
			return nil, false, classify(err)
		}
		if !r.Valid || math.IsNaN(r.Float64) {
			return nil, false, nil
		}
		cands = append(cands, ranked{id: id, r: r.Float64})
	}
	if err := rows.Err(); err != nil {
		return nil, false, classify(err)
	}
	return cands, true, nil
}

// fetch reads the columns of the candidates that exist and pass f, marking
// them found.
func fetch(ctx context.Context, tx *sql.Tx, cands []ranked, f Filters) error {
	pos := make(map[int64]int, len(cands))
	args := make([]any, len(cands), len(cands)+8)
	var b strings.Builder
	b.WriteString(`SELECT m.id, m.text, m.tags, m.source, m.created_at FROM memories m WHERE m.id IN (`)
	for i, c := range cands {
		pos[c.id] = i
		args[i] = c.id
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('?')
	}
	b.WriteByte(')')
	args = filterSQL(&b, args, f)
	rows, err := tx.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c ranked
		if err := rows.Scan(&c.id, &c.text, &c.tags, &c.source, &c.created); err != nil {
			return classify(err)
		}
		if i, ok := pos[c.id]; ok {
			c.r, c.found = cands[i].r, true
			cands[i] = c
		}
	}
	if err := rows.Err(); err != nil {
		return classify(err)
	}
	return nil
}

// before reports whether a ranks above b in the one statement's ORDER BY
// r ASC, created_at DESC, id DESC.
func before(a, b *ranked) bool {
	if a.r != b.r {
		return a.r < b.r
	}
	if a.created != b.created {
		return a.created > b.created
	}
	return a.id > b.id
}

// best orders complete candidates as the one statement does and keeps the
// first limit.
func best(cands []ranked, limit int) []ranked {
	sort.Slice(cands, func(i, j int) bool { return before(&cands[i], &cands[j]) })
	return cands[:min(limit, len(cands))]
}

// toHits turns complete candidates into hits, keeping their order.
func toHits(cands []ranked) ([]Hit, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		h, err := c.hit()
		if err != nil {
			return nil, err
		}
		hits[i] = h
	}
	return hits, nil
}

// fullHits is the one-statement search: exact in every case, slower when a
// query matches many memories because every match's row is read.
func fullHits(ctx context.Context, tx *sql.Tx, match string, req Request) ([]Hit, error) {
	c, err := fullRanked(ctx, tx, plan{match: match}, req)
	if err != nil {
		return nil, err
	}
	return toHits(c)
}

// fullRanked is fullHits for any plan, before the rows become hits.
func fullRanked(ctx context.Context, tx *sql.Tx, p plan, req Request) ([]ranked, error) {
	sqlText, args := searchPlanSQL(p, req)
	rows, err := tx.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []ranked
	for rows.Next() {
		c := ranked{found: true}
		if err := rows.Scan(&c.id, &c.text, &c.tags, &c.source, &c.created, &c.r); err != nil {
			return nil, classify(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return out, nil
}

func (c ranked) hit() (Hit, error) {
	h := Hit{Memory: Memory{ID: c.id, Text: c.text, Source: c.source, CreatedAt: time.UnixMilli(c.created).UTC()},
		Score: Score(c.r), Match: c.match}
	if c.match != "" {
		h.Score = c.fused
	}
	// A tags column that is not a JSON array was written by something other
	// than this package: an unexpected state, reported in the generic category.
	if err := json.Unmarshal([]byte(c.tags), &h.Tags); err != nil {
		return Hit{}, fmt.Errorf("memory %d: tags column: %w", c.id, err)
	}
	return h, nil
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

// searchSQL builds the one statement of the exact, slower search (see
// SearchMemory). Only placeholders carry values; the text varies only in how
// many tag conditions it has. CROSS JOIN pins the FTS index as the outer loop:
// otherwise a broad date range makes the planner walk the created_at index
// over every memory and probe FTS per row (20x slower at 100,000 memories).
func searchSQL(match string, req Request) (string, []any) {
	return searchPlanSQL(plan{match: match}, req)
}

// searchPlanSQL is searchSQL for any plan.
func searchPlanSQL(p plan, req Request) (string, []any) {
	var b strings.Builder
	args := []any{p.match}
	b.WriteString(`SELECT m.id, m.text, m.tags, m.source, m.created_at, bm25(memories_fts, 1.0, 0.5) AS r
FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH ?`)
	args = windowSQL(&b, args, p)
	args = filterSQL(&b, args, req.Filters)
	b.WriteString(` ORDER BY r ASC, m.created_at DESC, m.id DESC LIMIT ?`)
	args = append(args, req.Limit)
	return b.String(), args
}

// rankSQL builds the fast path's first statement: the ids and bm25 values of
// the n best matches passing the filters, best first, without the memories'
// text. The memories table is joined only when a filter needs its columns.
func rankSQL(match string, f Filters, n int) (string, []any) {
	return rankPlanSQL(plan{match: match}, f, n)
}

// rankPlanSQL is rankSQL for any plan.
func rankPlanSQL(p plan, f Filters, n int) (string, []any) {
	var b strings.Builder
	args := []any{p.match}
	b.WriteString(`SELECT memories_fts.rowid, bm25(memories_fts, 1.0, 0.5) AS r
FROM memories_fts`)
	if !f.Empty() {
		b.WriteString(` CROSS JOIN memories m ON m.id = memories_fts.rowid`)
	}
	b.WriteString(`
WHERE memories_fts MATCH ?`)
	args = windowSQL(&b, args, p)
	args = filterSQL(&b, args, f)
	b.WriteString(` ORDER BY r ASC LIMIT ?`)
	args = append(args, n)
	return b.String(), args
}

// windowSQL appends the plan's rowid bound, which FTS5 applies while it walks
// its doclists (the rows below it are never ranked).
func windowSQL(b *strings.Builder, args []any, p plan) []any {
	if p.minRowid > 0 {
		b.WriteString(` AND memories_fts.rowid >= ?`)
		args = append(args, p.minRowid)
	}
	return args
}

// filterSQL appends the filters' conditions on memories m to a WHERE clause.
func filterSQL(b *strings.Builder, args []any, f Filters) []any {
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
	if end, ok := f.end(); ok {
		b.WriteString(` AND m.created_at < ?`)
		args = append(args, end)
	}
	return args
}

// ftsQuery turns free text into an FTS5 expression: each distinct word quoted
// (so AND, NEAR, *, ^ and quotes are plain data) and joined with OR.
func ftsQuery(q string) string { return strings.Join(queryTerms(q), " OR ") }

// queryTerms is the query's distinct words, lowercased and quoted as FTS5
// strings, in order of first appearance, at most maxQueryTerms.
func queryTerms(q string) []string {
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
	return terms
}
