package memory

import (
	"context"
	"database/sql"
	"sort"
)

// How a hit was found (Hit.Match), in hybrid search only.
const (
	MatchKeyword = "keyword" // by its words (FTS5)
	MatchMeaning = "meaning" // by its vector's nearness to the query's
	MatchBoth    = "both"
)

// Hybrid ranking (issue 27); docs/memory.md ("Hybrid search") explains the
// score a person sees.
const (
	// rrfK is reciprocal rank fusion's constant: a memory at rank r of a
	// list gets 1/(rrfK + r) from it (Cormack et al. use 60).
	rrfK = 60
	// MinSimilarity is the least cosine similarity a memory needs to be a
	// "meaning" candidate, so a query unrelated to everything stored does
	// not answer with whatever happens to be nearest.
	MinSimilarity = 0.3
)

// hybridCandidates is how many memories each list contributes to the fusion.
func hybridCandidates(limit int) int { return min(max(2*limit, 50), 1000) }

// hybrid ranks req by keyword and by meaning and fuses the two lists. qv is
// the query's vector (unit length).
func (s *Store) hybrid(ctx context.Context, tx *sql.Tx, terms []string, qv []float32, req Request) ([]ranked, error) {
	k := hybridCandidates(req.Limit)
	set, err := s.vectors(ctx, tx, s.emb.Model(), len(qv))
	if err != nil {
		return nil, err
	}
	allow, err := allowedIDs(ctx, tx, req.Filters)
	if err != nil {
		return nil, err
	}
	// The scan reads only set and allow, never the transaction, so it runs
	// while FTS5 ranks the keywords on it: a query costs the longer of the
	// two rather than their sum.
	nearest := make(chan []near, 1)
	go func() { nearest <- set.nearest(qv, k, MinSimilarity, allow) }()
	var kw []ranked
	if len(terms) > 0 {
		kreq := req
		kreq.Limit = k
		if kw, err = tiered(ctx, tx, s.tiers, terms, kreq); err != nil {
			<-nearest
			return nil, err
		}
	}
	nn := <-nearest

	order, byID := fuseRRF(kw, nn)
	if err := fetchMeaningOnly(ctx, tx, order, byID); err != nil {
		return nil, err
	}
	live := order[:0]
	for _, f := range order {
		if f.c.found || f.kw {
			live = append(live, f)
		}
	}
	return rankFused(live, req.Limit), nil
}

// fused is one memory in the fusion of the keyword and meaning lists.
type fused struct {
	c       ranked
	score   float64 // reciprocal rank fusion: the sum over the lists it is in
	kw, vec bool    // found by keyword, by meaning
}

// fuseRRF scores each memory of the two lists by reciprocal rank fusion;
// order is first seen first, byID the same entries by id.
func fuseRRF(kw []ranked, nn []near) (order []*fused, byID map[int64]*fused) {
	byID = map[int64]*fused{}
	get := func(id int64) *fused {
		f := byID[id]
		if f == nil {
			f = &fused{c: ranked{id: id}}
			byID[id] = f
			order = append(order, f)
		}
		return f
	}
	for i, c := range kw {
		f := get(c.id)
		f.c, f.kw = c, true
		f.score += 1.0 / float64(rrfK+i+1)
	}
	for i, n := range nn {
		f := get(n.id)
		f.vec = true
		f.score += 1.0 / float64(rrfK+i+1)
	}
	return order, byID
}

// fetchMeaningOnly reads the rows of the meaning-only candidates, for the
// tie-break by date and for the hits; one deleted since its vector was
// read stays not found, and is dropped.
func fetchMeaningOnly(ctx context.Context, tx *sql.Tx, order []*fused, byID map[int64]*fused) error {
	var missing []ranked
	for _, f := range order {
		if !f.kw {
			missing = append(missing, f.c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fetch(ctx, tx, missing, Filters{}); err != nil {
		return err
	}
	for _, m := range missing {
		if m.found {
			byID[m.id].c = m
		}
	}
	return nil
}

// rankFused orders the fused memories by score, then newest first, then
// by id, and keeps the first limit, each with its score scaled to 0..1 and
// which lists found it.
func rankFused(live []*fused, limit int) []ranked {
	sort.Slice(live, func(i, j int) bool {
		a, b := live[i], live[j]
		if a.score != b.score {
			return a.score > b.score
		}
		if a.c.created != b.c.created {
			return a.c.created > b.c.created
		}
		return a.c.id > b.c.id
	})
	live = live[:min(limit, len(live))]
	out := make([]ranked, len(live))
	best := 2.0 / float64(rrfK+1) // first in both lists
	for i, f := range live {
		out[i] = f.c
		out[i].fused = min(f.score/best, 1)
		switch {
		case f.kw && f.vec:
			out[i].match = MatchBoth
		case f.vec:
			out[i].match = MatchMeaning
		default:
			out[i].match = MatchKeyword
		}
	}
	return out
}

// queryVector embeds the query when an embedder is configured. A failure is
// the search's error when embedding is required; otherwise it is logged once
// and the search answers by keyword (nil vector).
func (s *Store) queryVector(ctx context.Context, query string) ([]float32, error) {
	if s.emb == nil {
		return nil, nil
	}
	vecs, err := s.emb.Embed(ctx, []string{query})
	if err == nil && len(vecs) != 1 {
		err = &EmbedError{Msg: "the embedder answered no vector"}
	}
	if err != nil {
		if s.required {
			return nil, embedFailure(err)
		}
		s.warnEmbed("search", err)
		return nil, nil
	}
	return unit(vecs[0]), nil
}

// embedOne gives a newly added memory its vector. The memory is stored
// either way: a failure is logged once and `vigil memory reindex` fills the
// gap later.
func (s *Store) embedOne(ctx context.Context, id int64, text string) {
	if s.emb == nil {
		return
	}
	vecs, err := s.emb.Embed(ctx, []string{text})
	if err == nil && len(vecs) != 1 {
		err = &EmbedError{Msg: "the embedder answered no vector"}
	}
	if err == nil {
		err = s.putVectors(ctx, s.emb.Model(), []int64{id}, vecs)
	}
	if err != nil {
		s.warnEmbed("add", err)
	}
}

// warnEmbed logs an embedder failure the first time only: a person whose
// model server is down sees one line, not one a query. Embedder errors never
// hold the API key (HTTPEmbedder masks it).
func (s *Store) warnEmbed(during string, err error) {
	if s.warnedOnce.CompareAndSwap(false, true) {
		s.log.Warn("embedding_failed", "during", during, "error", err.Error(),
			"effect", "keyword search only until the embedder answers; run `vigil memory reindex` for memories added meanwhile")
	}
}
