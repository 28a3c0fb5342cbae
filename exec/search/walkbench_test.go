package search

import (
	"context"
	"testing"
)

// goSrcRequest is a request over GOROOT/src, ready for the walkers.
func goSrcRequest(b *testing.B) *prepared {
	req, _ := DecodeRequest([]byte(`{"pattern":"x"}`))
	opts := DefaultOptions(goSrc(b))
	opts.Search.MaxFiles = 0
	p, err := prepareUnchecked(req, opts)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkWalk measures the ordered walk alone over GOROOT/src.
func BenchmarkWalk(b *testing.B) {
	p := goSrcRequest(b)
	for b.Loop() {
		n := 0
		w := &walker{ctx: context.Background(), pl: p.pl, e: p.e, deny: p.deny, include: p.include, exclude: p.exclude,
			emit: func(item) bool { n++; return true }}
		w.run()
		if n < 10000 {
			b.Fatal(n)
		}
	}
}

// BenchmarkTallyWalk is the rg walk's concurrent count of eligible files.
func BenchmarkTallyWalk(b *testing.B) {
	p := goSrcRequest(b)
	for b.Loop() {
		if t := p.tallyWalk(context.Background(), func() {}, false); t.files < 10000 {
			b.Fatal(t.files)
		}
	}
}
