package memory

import (
	"context"
	"database/sql"
	"strings"
)

// Ranking at scale (issue 21). FTS5 computes bm25() for every memory that
// matches, so "w1 OR w2" costs as much as its commonest word is common: at
// 1,000,000 memories a word in 70% of them makes one query rank 700,000 rows.
// A query that matches few memories is ranked exactly as before; a query
// with common words is ranked in tiers that never score the bulk of them.
// The rules, and what they give up, are in docs/memory.md ("Ranking").
type tierLimits struct {
	// exact: a query matching at most this many memories (any word) is
	// ranked exactly as the one statement ranks it.
	exact int
	// rare: a word in at most this many memories is selective.
	rare int
	// sample is how many of the most recently stored memories the share of
	// a common word is estimated on.
	sample int
	// window is how many of the most recently stored matches the
	// common-words tier ranks by BM25.
	window int
}

// defaultLimits are the tiers' thresholds (a Store's tiers field); tests
// scale them down to reach every tier with a small corpus.
var defaultLimits = tierLimits{exact: 50_000, rare: 10_000, sample: 20_000, window: 5_000}

// tiered answers req with the tiers of docs/memory.md: the exact ranking when
// the query is selective, else memories with a selective word (exactly ranked
// among themselves), then the most recent memories with a common word
// (ranked by BM25 among themselves), then, for words in at least half of the
// memories, the most recent memories containing them.
func tiered(ctx context.Context, tx *sql.Tx, limits tierLimits, terms []string, req Request) ([]ranked, error) {
	all := strings.Join(terms, " OR ")
	if !fastLimit(req.Limit) {
		// The limits the tool never sends keep the one statement's semantics.
		return exact(ctx, tx, plan{match: all}, req)
	}
	n, err := countUpTo(ctx, tx, all, 0, limits.exact+1)
	if err != nil || n <= limits.exact {
		if err != nil {
			return nil, err
		}
		return exact(ctx, tx, plan{match: all}, req)
	}
	rare, common, stop, err := classifyTerms(ctx, tx, limits, terms)
	if err != nil {
		return nil, err
	}
	var out tierResult
	out.limit = req.Limit
	if len(rare) > 0 {
		r := strings.Join(rare, " OR ")
		if len(common) == 0 {
			c, err := exact(ctx, tx, plan{match: r}, req)
			if err != nil {
				return nil, err
			}
			out.add(c)
		} else {
			// Every memory with a selective word, scored with all the
			// non-stop words: those with a common word too, and those
			// without. Each expression names each word once, so FTS5's
			// bm25() of a memory is the one the full OR query gives it.
			c := strings.Join(common, " OR ")
			with, err := exact(ctx, tx, plan{match: "(" + r + ") AND (" + c + ")"}, req)
			if err != nil {
				return nil, err
			}
			without, err := exact(ctx, tx, plan{match: "(" + r + ") NOT (" + c + ")"}, req)
			if err != nil {
				return nil, err
			}
			out.add(best(append(with, without...), req.Limit))
		}
	}
	if !out.full() && len(common) > 0 {
		c := strings.Join(common, " OR ")
		from, err := windowStart(ctx, tx, limits.window, c, req.Filters)
		if err != nil {
			return nil, err
		}
		// Ask for Limit: the tier may repeat up to len(out) memories.
		w, err := exact(ctx, tx, plan{match: c, minRowid: from}, req)
		if err != nil {
			return nil, err
		}
		out.add(w)
	}
	if !out.full() && len(stop) > 0 {
		for _, expr := range []string{strings.Join(stop, " AND "), strings.Join(stop, " OR ")} {
			r, err := newest(ctx, tx, expr, req.Filters, req.Limit)
			if err != nil {
				return nil, err
			}
			out.add(r)
			if out.full() {
				break
			}
		}
	}
	return out.cands, nil
}

// tierResult collects tiers in order, each memory once, up to limit.
type tierResult struct {
	cands []ranked
	seen  map[int64]bool
	limit int
}

func (t *tierResult) full() bool { return len(t.cands) >= t.limit }

func (t *tierResult) add(cs []ranked) {
	if t.seen == nil {
		t.seen = map[int64]bool{}
	}
	for _, c := range cs {
		if t.full() {
			return
		}
		if !t.seen[c.id] {
			t.seen[c.id] = true
			t.cands = append(t.cands, c)
		}
	}
}

// countUpTo counts the memories matching expr (with rowid > above), stopping
// at limit: walking a doclist without bm25() is cheap, and the cap bounds it.
func countUpTo(ctx context.Context, tx *sql.Tx, expr string, above int64, limit int) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM memories_fts
WHERE memories_fts MATCH ? AND memories_fts.rowid > ? LIMIT ?)`, expr, above, limit).Scan(&n)
	return n, classify(err)
}

// classifyTerms sorts a query's words: rare ones are in at most limits.rare
// memories (counted exactly); the others are stop words when they are in at
// least half of the most recent limits.sample memories (FTS5 floors the idf of a
// word in half of the memories at 1e-6, so bm25() gives them no weight) and
// common otherwise. Only the strategy depends on the sample.
func classifyTerms(ctx context.Context, tx *sql.Tx, limits tierLimits, terms []string) (rare, common, stop []string, err error) {
	var maxID sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM memories`).Scan(&maxID); err != nil {
		return nil, nil, nil, classify(err)
	}
	above := max(maxID.Int64-int64(limits.sample), 0)
	var rows int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE id > ?`, above).Scan(&rows); err != nil {
		return nil, nil, nil, classify(err)
	}
	for _, t := range terms {
		n, err := countUpTo(ctx, tx, t, 0, limits.rare+1)
		if err != nil {
			return nil, nil, nil, err
		}
		if n <= limits.rare {
			rare = append(rare, t)
			continue
		}
		k, err := countUpTo(ctx, tx, t, above, limits.sample)
		if err != nil {
			return nil, nil, nil, err
		}
		if rows > 0 && 2*k >= rows {
			stop = append(stop, t)
		} else {
			common = append(common, t)
		}
	}
	return rare, common, stop, nil
}

// windowStart is the lowest rowid of the window most recently stored
// memories matching expr and passing f, or 0 when fewer match.
func windowStart(ctx context.Context, tx *sql.Tx, window int, expr string, f Filters) (int64, error) {
	var b strings.Builder
	args := []any{expr}
	b.WriteString(`SELECT memories_fts.rowid FROM memories_fts`)
	if !f.Empty() {
		b.WriteString(` CROSS JOIN memories m ON m.id = memories_fts.rowid`)
	}
	b.WriteString(` WHERE memories_fts MATCH ?`)
	args = filterSQL(&b, args, f)
	b.WriteString(` ORDER BY memories_fts.rowid DESC LIMIT 1 OFFSET ?`)
	args = append(args, window-1)
	var id int64
	err := tx.QueryRowContext(ctx, b.String(), args...).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return id, classify(err)
}

// newest is the stop-word tier: the limit most recently stored memories
// matching expr and passing f, newest first, with score 0 (bm25() gives
// these words no weight).
func newest(ctx context.Context, tx *sql.Tx, expr string, f Filters, limit int) ([]ranked, error) {
	var b strings.Builder
	args := []any{expr}
	b.WriteString(`SELECT m.id, m.text, m.tags, m.source, m.created_at
FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH ?`)
	args = filterSQL(&b, args, f)
	b.WriteString(` ORDER BY memories_fts.rowid DESC LIMIT ?`)
	args = append(args, limit)
	rows, err := tx.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []ranked
	for rows.Next() {
		c := ranked{found: true}
		if err := rows.Scan(&c.id, &c.text, &c.tags, &c.source, &c.created); err != nil {
			return nil, classify(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return out, nil
}
