package search

import (
	"context"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// recStore must keep exactly what fileRecs.add keeps, whatever the order
// in which files' records arrive and however often a slab fills, and cap
// the spans per line alike (some seeds pile hundreds on one line).
func TestRecStoreMatchesFileRecs(t *testing.T) {
	capped := 0 // lines that reached capSpans' limit: the cap was exercised
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		files := make([]*walkFile, 1+r.IntN(6))
		want := make([]fileRecs, len(files))
		for i := range files {
			files[i] = &walkFile{}
		}
		var st recStore
		maxPer := r.IntN(3) * 5 // 0 (no cap), 5 or 10
		lineNo := make([]uint64, len(files))
		cur := 0
		for range 2000 {
			if r.IntN(8) == 0 { // mostly contiguous, like rg; sometimes not
				cur = r.IntN(len(files))
			}
			if r.IntN(4) > 0 {
				lineNo[cur] += uint64(r.IntN(3)) // 0: another match on the same line
			}
			if lineNo[cur] == 0 {
				lineNo[cur] = 1
			}
			text := make([]byte, r.IntN(300))
			for k := range text {
				text[k] = byte('a' + r.IntN(26))
			}
			rec := record{line: lineNo[cur], text: text, spans: []span{{r.IntN(5), 5 + r.IntN(5)}, {1, 2}}[:1+r.IntN(2)]}
			if seed%3 == 0 && r.IntN(3) == 0 { // a minified line's worth of matches
				rec.spans = make([]span, r.IntN(400))
				for k := range rec.spans {
					rec.spans[k] = span{k, k + 1 + r.IntN(3)}
				}
			}
			if !st.inOrder(files[cur], rec.line) {
				t.Fatalf("seed %d: out of order", seed)
			}
			n, ns := len(want[cur].lines), len(want[cur].spans)
			want[cur].add(rec, maxPer)
			newLine, kept := st.add(files[cur], rec, maxPer)
			if newLine != (len(want[cur].lines) > n) || kept != len(want[cur].spans)-ns {
				t.Fatalf("seed %d: add reported %v, %d spans", seed, newLine, kept)
			}
		}
		st.seal()
		for i, f := range files {
			if !sameRecs(f.recs, want[i]) {
				t.Fatalf("seed %d file %d: records differ", seed, i)
			}
			if cap(f.recs.text) != len(f.recs.text) || cap(f.recs.lines) != len(f.recs.lines) || cap(f.recs.spans) != len(f.recs.spans) {
				t.Fatalf("seed %d file %d: capacity not capped", seed, i)
			}
			for _, l := range f.recs.lines {
				if l.span1-l.span0 == maxSubmatches+1 {
					capped++
				}
			}
		}
	}
	if capped == 0 {
		t.Fatal("no line reached maxSubmatches")
	}
}

func sameRecs(a, b fileRecs) bool {
	if len(a.lines) != len(b.lines) {
		return false
	}
	for i := range a.lines {
		la, lb := a.lines[i], b.lines[i]
		if la.line != lb.line || la.span1-la.span0 > maxSubmatches+1 ||
			string(a.text[la.text0:la.text1]) != string(b.text[lb.text0:lb.text1]) ||
			!slices.Equal(a.spans[la.span0:la.span1], b.spans[lb.span0:lb.span1]) {
			return false
		}
	}
	return true
}

// appendWalkEvents must build what appendFileEvents builds without context
// lines, invalid UTF-8 and lines without spans included.
func TestAppendWalkEventsMatchesFileEvents(t *testing.T) {
	var st recStore
	f := &walkFile{}
	texts := []string{"plain err line", "bad \xff utf8 err", "", "tab\tand \u00e9 err", "err err err"}
	for i, tx := range texts {
		sp := []span{{len(tx) / 2, len(tx)}, {0, 1}}[:min(i%3, 2)]
		if len(tx) == 0 {
			sp = nil
		}
		st.add(f, record{line: uint64(3 * (i + 1)), text: []byte(tx), spans: clampSpans(sp, len(tx))}, 0)
	}
	st.seal()
	p := &prepared{}
	want, why := p.appendFileEventsWhy(nil, item{rel: "d/x.go"}, &f.recs)
	if why != "" {
		t.Fatalf("appendFileEventsWhy failed: %s", why)
	}
	got := appendWalkEvents(nil, "d/x.go", &f.recs)
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		a, b := got[i].AppendJSON(nil), want[i].AppendJSON(nil)
		if string(a) != string(b) {
			t.Errorf("event %d:\n got %s\nwant %s", i, a, b)
		}
	}
}

// BenchmarkWriteJSONDense encodes the dense Go-tree response ('err', every
// match): the encoder's share of `vigil search` time.
func BenchmarkWriteJSONDense(b *testing.B) {
	req, err := DecodeRequest([]byte(`{"pattern":"err","case":"sensitive","max_results":1000000}`))
	if err != nil {
		b.Fatal(err)
	}
	opts := DefaultOptions(goSrc(b))
	opts.Backend = "rg"
	opts.Search.MaxFiles = 0
	resp, err := Run(context.Background(), req, opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(resp.AppendJSON(nil))))
	for b.Loop() {
		_ = resp.WriteJSON(io.Discard)
	}
}

// BenchmarkParseRGDense is the rg walk's loop body over captured output
// in its own format (rgPlainArgs): parse each match line and keep its
// records in the slabs.
func BenchmarkParseRGDense(b *testing.B) {
	args := append(append([]string{"rg", "--no-config", "-a", "-s"}, rgPlainArgs...), "-e", "err", "--", goSrc(b))
	lines := captured(b, args...)
	b.ResetTimer()
	for b.Loop() {
		var st recStore
		var pb parseBuf
		files := map[string]*walkFile{}
		for _, l := range lines {
			rec, ok, err := parseRGPlainMatch(l, &pb)
			if err != nil || !ok {
				continue
			}
			f := files[string(rec.path)]
			if f == nil {
				f = &walkFile{}
				files[string(rec.path)] = f
			}
			st.add(f, rec, 0)
		}
		st.seal()
	}
}
