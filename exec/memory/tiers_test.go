package memory

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tierCorpus is 1,200 memories with the tiers' thresholds scaled down 100x
// (exact 300, rare 100, sample 200, window 50): "alpha" is in every memory (a
// stop word), "kappa" in about a third (common), "omega" in 40 and "sigma" in
// 12 (rare); the rest is filler from a small vocabulary.
func tierCorpus(t *testing.T) *Store {
	t.Helper()
	s, _ := newStore(t)
	s.tiers = tierLimits{exact: 300, rare: 100, sample: 200, window: 50}
	rng := rand.New(rand.NewPCG(11, 12))
	filler := []string{"river", "stone", "cloud", "maple", "ember", "quartz", "willow", "falcon", "copper", "linen"}
	var b bytes.Buffer
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 1200; i++ {
		words := []string{"alpha"}
		for w := 2 + rng.IntN(6); w > 0; w-- {
			words = append(words, filler[rng.IntN(len(filler))])
		}
		if rng.IntN(3) == 0 {
			words = append(words, "kappa")
		}
		if i%30 == 7 {
			words = append(words, "omega")
		}
		if i%100 == 3 {
			words = append(words, "sigma")
		}
		rng.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
		jsonLine(&b, map[string]any{
			"text":       strings.Join(words, " "),
			"tags":       []string{[]string{"red", "blue"}[rng.IntN(2)]},
			"created_at": base.AddDate(0, 0, rng.IntN(300)).Format("2006-01-02"),
		})
	}
	if _, err := s.Import(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	return s
}

// everything is the one statement's full ranking of a query, every match.
func everything(t *testing.T, s *Store, query string, f Filters) []Hit {
	t.Helper()
	return reference(t, s, Request{Query: query, Limit: -1, Filters: f})
}

func keep(hits []Hit, ok func(Hit) bool) []Hit {
	var out []Hit
	for _, h := range hits {
		if ok(h) {
			out = append(out, h)
		}
	}
	return out
}

func has(word string) func(Hit) bool {
	return func(h Hit) bool { return strings.Contains(" "+h.Text+" ", " "+word+" ") }
}

func search(t *testing.T, s *Store, req Request) []Hit {
	t.Helper()
	got, err := s.SearchMemory(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTiersSelectiveQueryIsRankedExactly(t *testing.T) {
	s := tierCorpus(t)
	for _, limit := range []int{1, 10, 100} {
		req := Request{Query: "omega sigma", Limit: limit}
		if got, want := search(t, s, req), reference(t, s, req); !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d:\ngot  %v\nwant %v", limit, ids(got), ids(want))
		}
	}
}

// A rare word with a common one: the memories with the rare word, in exactly
// the order (and with exactly the scores) the full OR query gives them.
func TestTiersRareWordsFirstWithFullScores(t *testing.T) {
	s := tierCorpus(t)
	for _, f := range []Filters{{}, {Tags: []string{"red"}}} {
		for _, limit := range []int{5, 15} {
			got := search(t, s, Request{Query: "kappa omega", Limit: limit, Filters: f})
			want := keep(everything(t, s, "kappa omega", f), has("omega"))
			want = want[:min(limit, len(want))]
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v limit %d:\ngot  %v\nwant %v", f, limit, ids(got), ids(want))
			}
		}
	}
}

// When the rare words' memories run out, the common-words tier fills up: the
// most recent matches, ranked by BM25 among themselves.
func TestTiersCommonWordsFillFromTheRecentWindow(t *testing.T) {
	s := tierCorpus(t)
	got := search(t, s, Request{Query: "kappa omega", Limit: 60})
	omega := keep(everything(t, s, "kappa omega", Filters{}), has("omega"))
	if len(omega) != 40 || !reflect.DeepEqual(got[:40], omega) {
		t.Fatalf("first tier: %v\nwant %v", ids(got[:min(40, len(got))]), ids(omega))
	}
	window := recentWindow(t, s, "kappa", 50)
	var want []Hit
	for _, h := range everything(t, s, "kappa", Filters{}) {
		if window[h.ID] && !has("omega")(h) {
			want = append(want, h)
		}
	}
	if !reflect.DeepEqual(got[40:], want[:20]) {
		t.Fatalf("second tier:\ngot  %v\nwant %v", ids(got[40:]), ids(want[:20]))
	}
}

// recentWindow is the ids of the n most recently stored memories with word.
func recentWindow(t *testing.T, s *Store, word string, n int) map[int64]bool {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(),
		`SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT ?`, `"`+word+`"`, n)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	return out
}

// A word in every memory has no BM25 weight: with other words it is left out
// of the match; alone, the newest memories containing it answer, score 0.
func TestTiersStopWords(t *testing.T) {
	s := tierCorpus(t)
	got := search(t, s, Request{Query: "alpha omega", Limit: 10})
	want := keep(everything(t, s, "omega", Filters{}), has("omega"))[:10]
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("alpha omega:\ngot  %v\nwant %v", ids(got), ids(want))
	}
	got = search(t, s, Request{Query: "alpha", Limit: 5, Filters: Filters{Tags: []string{"blue"}}})
	var gotIDs []int64
	for _, h := range got {
		if h.Score != 0 || !has("alpha")(h) || h.Tags[0] != "blue" {
			t.Fatalf("stop-word hit %+v", h)
		}
		gotIDs = append(gotIDs, h.ID)
	}
	var wantIDs []int64
	if err := func() error {
		rows, err := s.db.Query(`SELECT m.id FROM memories m JOIN memory_tags t ON t.memory_id = m.id AND t.tag = 'blue' ORDER BY m.id DESC LIMIT 5`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			wantIDs = append(wantIDs, id)
		}
		return rows.Err()
	}(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(gotIDs) != fmt.Sprint(wantIDs) {
		t.Fatalf("stop-word tier %v, want newest %v", gotIDs, wantIDs)
	}
}
