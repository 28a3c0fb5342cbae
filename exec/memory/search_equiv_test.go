package memory

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// reference runs the one-statement search (ORDER BY score, newest, highest id
// over every match) that SearchMemory's fast paths must reproduce.
func reference(t *testing.T, s *Store, req Request) []Hit {
	t.Helper()
	tx, err := s.db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	hits, err := fullHits(t.Context(), tx, ftsQuery(req.Query), req)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// paths reports which fast path settled req, so the test can show that it
// exercised each of them and the fallback.
func paths(t *testing.T, s *Store, req Request) (top, post bool) {
	t.Helper()
	tx, err := s.db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	match := ftsQuery(req.Query)
	_, top, err = topHits(t.Context(), tx, match, req)
	if err != nil {
		t.Fatal(err)
	}
	if !req.Filters.Empty() && len(req.Filters.Tags) == 0 && req.Filters.Source == "" {
		if _, post, err = postFiltered(t.Context(), tx, match, req); err != nil {
			t.Fatal(err)
		}
	}
	return top, post
}

// compareSearches checks SearchMemory against the reference for every
// request: same memories, same order, same scores, same response text.
func compareSearches(t *testing.T, s *Store, reqs []Request) (nTop, nPost, nFallback int) {
	t.Helper()
	for _, req := range reqs {
		want := reference(t, s, req)
		got, err := s.SearchMemory(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%+v:\ngot  %v\nwant %v", req, ids(got), ids(want))
		}
		if g, w := FormatHits(got).Text(), FormatHits(want).Text(); g != w {
			t.Fatalf("%+v: text differs:\n%s\n---\n%s", req, g, w)
		}
		top, post := paths(t, s, req)
		switch {
		case post:
			nPost++
		case top:
			nTop++
		default:
			nFallback++
		}
	}
	return nTop, nPost, nFallback
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%d@%.17g", h.ID, h.Score))
	}
	return out
}

func TestSearchFastPathsMatchOneStatementOnDemo(t *testing.T) {
	s, _ := newStore(t)
	if err := SeedDemo(s, testNow); err != nil {
		t.Fatal(err)
	}
	var reqs []Request
	queries := []string{"docker", "python web", "meeting notes", "the", "deploy kubernetes cluster",
		"coffee", "a the of", "rust borrow", "budget review", "database migration", "test"}
	for _, q := range queries {
		for _, limit := range []int{1, 3, 10, 100} {
			reqs = append(reqs,
				Request{Query: q, Limit: limit},
				Request{Query: q, Limit: limit, Filters: Filters{Tags: []string{"devops"}}},
				Request{Query: q, Limit: limit, Filters: Filters{DateFrom: testNow.AddDate(-3, 0, 0)}},
				Request{Query: q, Limit: limit, Filters: Filters{DateFrom: testNow.AddDate(0, -2, 0), DateTo: testNow}},
			)
		}
	}
	top, post, fb := compareSearches(t, s, reqs)
	t.Logf("%d requests: %d ranked first, %d post-filtered, %d one statement", len(reqs), top, post, fb)
	if top == 0 || post == 0 {
		t.Fatalf("fast paths not exercised: top %d, post %d", top, post)
	}
}

// TestSearchFastPathsMatchOneStatementOnGeneratedCorpus uses a tiny
// vocabulary, few lengths and few dates, so scores tie often, ties reach past
// the fetched pairs (the fallback) and equal dates leave the id to decide.
func TestSearchFastPathsMatchOneStatementOnGeneratedCorpus(t *testing.T) {
	s, _ := newStore(t)
	rng := rand.New(rand.NewPCG(7, 8))
	vocab := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
		"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"}
	var b bytes.Buffer
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 1500; i++ {
		var words []string
		for w := 3 + rng.IntN(3); w > 0; w-- {
			// Squared draw: low indexes common, high ones rare.
			words = append(words, vocab[rng.IntN(len(vocab))*rng.IntN(len(vocab))/len(vocab)])
		}
		jsonLine(&b, map[string]any{
			"text":       strings.Join(words, " "),
			"tags":       []string{vocab[rng.IntN(4)]},
			"source":     fmt.Sprintf("s%d", rng.IntN(3)),
			"created_at": base.AddDate(0, 0, rng.IntN(20)).Format("2006-01-02"),
		})
	}
	if _, err := s.Import(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	var reqs []Request
	for i := 0; i < 50; i++ {
		q := vocab[rng.IntN(len(vocab))] + " " + vocab[rng.IntN(len(vocab))]
		limit := []int{1, 2, 10, 37, 100}[rng.IntN(5)]
		from := base.AddDate(0, 0, rng.IntN(20))
		reqs = append(reqs,
			Request{Query: q, Limit: limit},
			Request{Query: q, Limit: limit, Filters: Filters{DateFrom: base.AddDate(0, 0, 2)}},
			Request{Query: q, Limit: limit, Filters: Filters{DateFrom: from, DateTo: from.AddDate(0, 0, 3)}},
			Request{Query: q, Limit: limit, Filters: Filters{Tags: []string{vocab[rng.IntN(4)]}, Source: "s1"}},
			// an exact last instant (memory list --to with a time), alone and with a day
			Request{Query: q, Limit: limit, Filters: Filters{Until: from.Add(36 * time.Hour)}},
			Request{Query: q, Limit: limit, Filters: Filters{DateFrom: base.AddDate(0, 0, 1), DateTo: from, Until: from.Add(-time.Millisecond)}},
		)
	}
	top, post, fb := compareSearches(t, s, reqs)
	t.Logf("%d requests: %d ranked first, %d post-filtered, %d one statement", len(reqs), top, post, fb)
	if top == 0 || post == 0 || fb == 0 {
		t.Fatalf("paths not all exercised: top %d, post %d, fallback %d", top, post, fb)
	}
}

// A search that runs while another connection writes sees one snapshot:
// the fast path's two reads agree (no memory ranked but then missing).
func TestSearchFastPathUnderConcurrentWrites(t *testing.T) {
	s, _ := newStore(t)
	for i := 0; i < 200; i++ {
		addMem(t, s, fmt.Sprintf("shared words item %d", i), nil, "", "2025-01-01")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errs := make(chan error, 1)
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := s.Add(ctx, NewMemory{Text: fmt.Sprintf("shared words new %d", i)}); err != nil && ctx.Err() == nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	for i := 0; i < 20; i++ {
		hits, err := s.SearchMemory(t.Context(), Request{Query: "shared words", Limit: 10})
		if err != nil || len(hits) != 10 {
			t.Fatalf("%d hits, %v", len(hits), err)
		}
	}
	cancel()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// The fast path's ranking statement is driven by the FTS index; without
// filters it never reads the memories table at all, and with filters it only
// probes it by primary key.
func TestRankStatementPlan(t *testing.T) {
	s, _, _ := pythonCorpus(t)
	for _, f := range []Filters{{}, {Tags: []string{"python"}, Source: "documentation",
		DateFrom: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), DateTo: time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)}} {
		q, args := rankSQL(ftsQuery("python web"), f, 26)
		joined := queryPlan(t, s.db, q, args...)
		if !strings.Contains(joined, "memories_fts VIRTUAL TABLE INDEX") || regexp.MustCompile(`SCAN m\b`).MatchString(joined) {
			t.Fatalf("plan:\n%s", joined)
		}
		if f.Empty() && regexp.MustCompile(`\bm\b`).MatchString(joined) {
			t.Fatalf("unfiltered ranking reads memories:\n%s", joined)
		}
	}
}

// Limits the tool never sends still behave as the one statement does.
func TestSearchOddLimitsMatchOneStatement(t *testing.T) {
	s, _, _ := pythonCorpus(t)
	var reqs []Request
	for _, limit := range []int{-1, 0, 1, 1000, 1001, 5000} {
		reqs = append(reqs, Request{Query: "python web", Limit: limit},
			Request{Query: "python web", Limit: limit, Filters: Filters{DateFrom: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}})
	}
	compareSearches(t, s, reqs)
}
