package memory

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// nearest (split across CPUs, each part keeping its own top k) returns what
// sorting every similarity returns.
func TestNearestMatchesSortingEverything(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, dim = 50_000, 16
	set := &vectorSet{dim: dim}
	for i := 0; i < n; i++ {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		set.ids = append(set.ids, int64(i+1))
		set.data = append(set.data, unit(v)...)
	}
	q := make([]float32, dim)
	for j := range q {
		q[j] = float32(rng.NormFloat64())
	}
	q = unit(q)
	odd := func(id int64) bool { return id%2 == 1 }
	for _, c := range []struct {
		k      int
		minSim float32
		allow  func(int64) bool
	}{{10, -1, nil}, {100, 0.3, nil}, {50, 0, odd}, {5, 0.99, nil}} {
		var want []near
		for i, id := range set.ids {
			if c.allow != nil && !c.allow(id) {
				continue
			}
			if s := dot(q, set.data[i*dim:(i+1)*dim]); s >= c.minSim {
				want = append(want, near{id, s})
			}
		}
		sort.Slice(want, func(i, j int) bool { return want[i].sim > want[j].sim })
		want = want[:min(c.k, len(want))]
		got := set.nearest(q, c.k, c.minSim, c.allow)
		if len(got) != len(want) {
			t.Fatalf("k %d: %d hits, want %d", c.k, len(got), len(want))
		}
		for i := range got {
			if got[i].sim != want[i].sim {
				t.Fatalf("k %d, #%d: %v, want %v", c.k, i, got[i], want[i])
			}
		}
	}
}
