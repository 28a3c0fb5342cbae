package memory

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/viterin/vek"
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

// dotReference is the inner product in plain Go, summed in float64: what
// vek's SIMD kernel must agree with.
func dotReference(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(rng.NormFloat64())
	}
	return unit(v)
}

// simTolerance bounds how far a float32 dot product of unit vectors may lie
// from the float64 sum, whatever order the SIMD lanes add in.
const simTolerance = 1e-5

// dot (vek32's SIMD kernel) agrees with a plain-Go sum at every length,
// including those that leave a tail past the 8- and 32-wide blocks, and
// gives 0 for empty vectors instead of vek's panic.
func TestDotMatchesPlainGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 3, 7, 8, 9, 15, 16, 31, 32, 33, 64, 100, 384, 768, 1536} {
		for range 20 {
			a, b := randomUnit(rng, dim), randomUnit(rng, dim)
			got, want := dot(a, b), dotReference(a, b)
			if math.Abs(float64(got)-want) > simTolerance {
				t.Fatalf("dim %d: dot %v, plain Go %v", dim, got, want)
			}
		}
		a := randomUnit(rng, dim)
		if got := dot(a, a); math.Abs(float64(got)-1) > simTolerance {
			t.Fatalf("dim %d: a unit vector's dot with itself is %v, want 1", dim, got)
		}
	}
	if got := dot(nil, nil); got != 0 {
		t.Fatalf("dot of empty vectors: %v, want 0", got)
	}
}

// The SIMD scan returns the top k of a plain-Go reference: the same ids in
// the same order (two neighbours may swap only where their reference
// similarities lie within float tolerance), similarities within tolerance,
// and exact ties (identical vectors) ordered as today, higher id first.
func TestNearestMatchesPlainGoReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, dim = 60_000, 384
	set := &vectorSet{dim: dim}
	q := randomUnit(rng, dim)
	for i := 0; i < n; i++ {
		v := randomUnit(rng, dim)
		if i%7_000 == 0 { // five copies of one vector near q: exact ties
			v = make([]float32, dim)
			for j := range v {
				v[j] = q[j] + 0.05*float32(rng.NormFloat64())
			}
			v = unit(v)
			for c := 0; c < 4; c++ {
				set.ids = append(set.ids, int64(len(set.ids)+1))
				set.data = append(set.data, v...)
			}
		}
		set.ids = append(set.ids, int64(len(set.ids)+1))
		set.data = append(set.data, v...)
	}
	ref := map[int64]float64{}
	type refHit struct {
		id  int64
		sim float64
	}
	var all []refHit
	for i, id := range set.ids {
		s := dotReference(q, set.data[i*dim:(i+1)*dim])
		ref[id] = s
		all = append(all, refHit{id, s})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].sim != all[j].sim {
			return all[i].sim > all[j].sim
		}
		return all[i].id > all[j].id
	})
	odd := func(id int64) bool { return id%2 == 1 }
	for _, c := range []struct {
		k      int
		minSim float32
		allow  func(int64) bool
	}{{10, -1, nil}, {60, -1, nil}, {200, 0.05, nil}, {30, -1, odd}} {
		var want []refHit
		for _, h := range all {
			if float32(h.sim) >= c.minSim && (c.allow == nil || c.allow(h.id)) {
				want = append(want, h)
			}
		}
		want = want[:min(c.k, len(want))]
		got := set.nearest(q, c.k, c.minSim, c.allow)
		if len(got) != len(want) {
			t.Fatalf("k %d: %d hits, want %d", c.k, len(got), len(want))
		}
		for i := range got {
			if math.Abs(float64(got[i].sim)-ref[got[i].id]) > simTolerance {
				t.Fatalf("k %d, #%d: id %d similarity %v, plain Go %v", c.k, i, got[i].id, got[i].sim, ref[got[i].id])
			}
			if got[i].id != want[i].id && math.Abs(ref[got[i].id]-want[i].sim) > simTolerance {
				t.Fatalf("k %d, #%d: id %d (%v), plain Go ranks id %d (%v) here", c.k, i, got[i].id, ref[got[i].id], want[i].id, want[i].sim)
			}
			if i > 0 && got[i].sim == got[i-1].sim && got[i].id > got[i-1].id {
				t.Fatalf("k %d, #%d: tie between ids %d and %d not broken higher id first", c.k, i, got[i-1].id, got[i].id)
			}
		}
		// The copies tie exactly and lie nearest q, so each group of five
		// comes out whole, consecutive, higher id first.
		if c.allow == nil && c.k >= 10 {
			for i := 0; i+4 < 10; i += 5 {
				for j := i + 1; j < i+5; j++ {
					if got[j].sim != got[i].sim || got[j].id != got[j-1].id-1 {
						t.Fatalf("k %d: tied copies at #%d..#%d not consecutive, higher id first: %v", c.k, i, i+4, got[i:i+5])
					}
				}
			}
		}
	}
}

// Without AVX2 and FMA (an older CPU, or GODEBUG=cpu.avx2=off) vek takes its
// pure-Go loop; the scan's tests run again, in a child process started that
// way, and pass there too.
func TestScanWithoutAVX2(t *testing.T) {
	if os.Getenv("VIGIL_TEST_NO_AVX2") == "1" {
		if vek.Info().Acceleration {
			t.Fatal("GODEBUG=cpu.avx2=off,cpu.fma=off left vek's AVX2 path on")
		}
		return
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("vek has SIMD only on amd64; elsewhere the other tests already run its pure-Go loop")
	}
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.v",
		"-test.run", "^(TestScanWithoutAVX2|TestDotMatchesPlainGo|TestNearestMatchesPlainGoReference|TestNearestMatchesSortingEverything)$")
	cmd.Env = append(os.Environ(), "GODEBUG=cpu.avx2=off,cpu.fma=off", "VIGIL_TEST_NO_AVX2=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("without AVX2: %v\n%s", err, out)
	}
	for _, name := range []string{"TestScanWithoutAVX2", "TestDotMatchesPlainGo", "TestNearestMatchesPlainGoReference", "TestNearestMatchesSortingEverything"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Fatalf("without AVX2, %s did not pass:\n%s", name, out)
		}
	}
}
