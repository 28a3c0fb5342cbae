package memory

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/viterin/vek/vek32"

	"github.com/vigil-dev/vigil/internal/crashpoint"
)

// encodeVector scales v to unit length and packs it as little-endian float32.
func encodeVector(v []float32) []byte {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	scale := float32(1)
	if n > 0 {
		scale = float32(1 / math.Sqrt(n))
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x*scale))
	}
	return b
}

func decodeVector(b []byte, into []float32) {
	for i := range into {
		into[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// putVectors stores one vector per id, replacing any older one, in one
// transaction.
func (s *Store) putVectors(ctx context.Context, model string, ids []int64, vecs [][]float32) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO memory_vectors(memory_id, model, dim, vec)
SELECT id, ?, ?, ? FROM memories WHERE id = ?`) // a memory deleted meanwhile gets no vector
	if err != nil {
		return classify(err)
	}
	defer st.Close()
	for i, id := range ids {
		if _, err := st.ExecContext(ctx, model, len(vecs[i]), encodeVector(vecs[i]), id); err != nil {
			return classify(err)
		}
	}
	return classify(tx.Commit())
}

// vectorSet is an in-memory copy of one model's vectors: ids ascending and
// their unit vectors back to back. Exact search over it is a dot product a
// row; 100,000 vectors of 384 dimensions are 154 MB.
type vectorSet struct {
	version int64
	model   string
	dim     int
	ids     []int64
	data    []float32
}

// vectorCache holds the vectorSet of the last search, reloaded when the
// stored vectors change (memory_vectors_version) or the model or dimension
// differs.
type vectorCache struct {
	mu  sync.Mutex
	set *vectorSet
}

func (s *Store) vectors(ctx context.Context, tx *sql.Tx, model string, dim int) (*vectorSet, error) {
	var version int64
	if err := tx.QueryRowContext(ctx, `SELECT version FROM memory_vectors_version WHERE id = 1`).Scan(&version); err != nil {
		return nil, classify(err)
	}
	s.vcache.mu.Lock()
	defer s.vcache.mu.Unlock()
	if v := s.vcache.set; v != nil && v.version == version && v.model == model && v.dim == dim {
		return v, nil
	}
	s.vcache.set = nil // let the old copy go before the new one is read
	// Sized once from a count taken in the same snapshot, and read through
	// RawBytes, so loading holds the vectors once, not a doubling slice's
	// copies and a copy of every blob.
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM memory_vectors WHERE model = ? AND dim = ?`, model, dim).Scan(&n); err != nil {
		return nil, classify(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT memory_id, vec FROM memory_vectors WHERE model = ? AND dim = ? ORDER BY memory_id`, model, dim)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	set := &vectorSet{version: version, model: model, dim: dim, ids: make([]int64, 0, n), data: make([]float32, 0, n*dim)}
	for rows.Next() {
		var id int64
		var b sql.RawBytes
		if err := rows.Scan(&id, &b); err != nil {
			return nil, classify(err)
		}
		if len(b) != 4*dim {
			return nil, fmt.Errorf("memory %d: vector of %d bytes, want %d", id, len(b), 4*dim)
		}
		set.ids = append(set.ids, id)
		k := len(set.data)
		if k+dim <= cap(set.data) {
			set.data = set.data[:k+dim]
		} else {
			set.data = append(set.data, make([]float32, dim)...)
		}
		decodeVector(b, set.data[k:])
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	s.vcache.set = set
	return set, nil
}

// near is one vector hit: its id and cosine similarity.
type near struct {
	id  int64
	sim float32
}

// nearest returns the k vectors most similar to q (unit length) whose id
// allow accepts (nil: all), most similar first, each at least minSim. The
// scan is split across the CPUs; each part keeps its own top k.
func (v *vectorSet) nearest(q []float32, k int, minSim float32, allow func(int64) bool) []near {
	parts := max(1, min(runtime.GOMAXPROCS(0), len(v.ids)/20_000))
	tops := make([][]near, parts)
	var wg sync.WaitGroup
	per := (len(v.ids) + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := p*per, min((p+1)*per, len(v.ids))
		wg.Add(1)
		go func() {
			defer wg.Done()
			tops[p] = v.scan(q, lo, hi, k, minSim, allow)
		}()
	}
	wg.Wait()
	var all []near
	for _, t := range tops {
		all = append(all, t...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].sim != all[j].sim {
			return all[i].sim > all[j].sim
		}
		return all[i].id > all[j].id
	})
	return all[:min(k, len(all))]
}

// scan is nearest over rows [lo, hi): a top-k kept in ascending order.
func (v *vectorSet) scan(q []float32, lo, hi, k int, minSim float32, allow func(int64) bool) []near {
	var top []near // ascending similarity, at most k
	d := v.dim
	for i := lo; i < hi; i++ {
		id := v.ids[i]
		if allow != nil && !allow(id) {
			continue
		}
		sim := dot(q, v.data[i*d:(i+1)*d])
		if sim < minSim || (len(top) == k && sim <= top[0].sim) {
			continue
		}
		j := sort.Search(len(top), func(j int) bool { return top[j].sim >= sim })
		if len(top) < k {
			top = append(top, near{})
			copy(top[j+1:], top[j:])
			top[j] = near{id, sim}
		} else {
			// drop the least similar (index 0), insert at j-1
			copy(top[:j-1], top[1:j])
			top[j-1] = near{id, sim}
		}
	}
	return top
}

// dot is the inner product of two vectors of one length: vek's AVX2+FMA
// kernel where the CPU has both, its pure-Go loop otherwise (and on other
// architectures). Vectors are stored unit length, so this is the cosine.
// vek32.Dot panics on empty input; a zero-dimension vector has no
// similarity to offer, so it is 0 here.
func dot(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	return vek32.Dot(a, b[:len(a)])
}

func unit(v []float32) []float32 {
	b := encodeVector(v)
	out := make([]float32, len(v))
	decodeVector(b, out)
	return out
}

// allowedIDs is the set of memories passing f, as a bitmap over ids, or nil
// when f is empty (every memory passes).
func allowedIDs(ctx context.Context, tx *sql.Tx, f Filters) (func(int64) bool, error) {
	if f.Empty() {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString(`SELECT m.id FROM memories m WHERE 1`)
	args := filterSQL(&b, nil, f)
	rows, err := tx.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var bits []uint64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, classify(err)
		}
		if id < 0 {
			continue
		}
		w := int(id / 64)
		if w >= len(bits) {
			bits = append(bits, make([]uint64, w+1-len(bits))...)
		}
		bits[w] |= 1 << (id % 64)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	return func(id int64) bool {
		w := int(id / 64)
		return id >= 0 && w < len(bits) && bits[w]&(1<<(id%64)) != 0
	}, nil
}

// ReindexStats is what Reindex did.
type ReindexStats struct {
	Embedded int `json:"embedded"` // memories given a vector now
	Total    int `json:"total"`    // memories stored
}

// Progress is told how far a long operation is: done of total items.
type Progress func(done, total int)

// Reindex embeds every memory that has no vector from the configured model
// (none yet, another model's, or another dimension's), a batch at a time;
// each batch is stored in its own transaction, so an interrupted reindex
// keeps what it did and the next one carries on.
func (s *Store) Reindex(ctx context.Context, progress Progress) (ReindexStats, error) {
	done, err := s.begin()
	if err != nil {
		return ReindexStats{}, err
	}
	defer done()
	if s.emb == nil {
		return ReindexStats{}, &CoreError{Msg: "No [memory.embedder] is configured"}
	}
	var st ReindexStats
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM memories`).Scan(&st.Total); err != nil {
		return st, classify(err)
	}
	model, dims := s.emb.Model(), s.wantDims
	stale := `FROM memories m LEFT JOIN memory_vectors v ON v.memory_id = m.id
WHERE (v.memory_id IS NULL OR v.model != ? OR (? > 0 AND v.dim != ?))`
	var todo int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) `+stale, model, dims, dims).Scan(&todo); err != nil {
		return st, classify(err)
	}
	if progress != nil {
		progress(0, todo)
	}
	after := int64(-1)
	for {
		ids, texts, err := s.staleBatch(ctx, stale, model, dims, after)
		if err != nil {
			return st, err
		}
		if len(ids) == 0 {
			return st, nil
		}
		vecs, err := s.emb.Embed(ctx, texts)
		if err != nil {
			return st, embedFailure(err)
		}
		if err := s.putVectors(ctx, model, ids, vecs); err != nil {
			return st, err
		}
		crashpoint.Hit("memory.reindex.batch") // a batch's vectors are committed
		st.Embedded += len(ids)
		after = ids[len(ids)-1]
		if progress != nil {
			progress(st.Embedded, max(todo, st.Embedded))
		}
	}
}

func (s *Store) staleBatch(ctx context.Context, stale, model string, dims int, after int64) ([]int64, []string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT m.id, m.text `+stale+` AND m.id > ? ORDER BY m.id LIMIT ?`,
		model, dims, dims, after, s.emb.BatchSize())
	if err != nil {
		return nil, nil, classify(err)
	}
	defer rows.Close()
	var ids []int64
	var texts []string
	for rows.Next() {
		var id int64
		var t string
		if err := rows.Scan(&id, &t); err != nil {
			return nil, nil, classify(err)
		}
		ids, texts = append(ids, id), append(texts, t)
	}
	return ids, texts, classify(rows.Err())
}

// embedFailure puts an embedder's failure in the seed's "Search failed:
// Embedding generation failed: …" category.
func embedFailure(err error) error {
	return &SearchError{Msg: "Embedding generation failed: " + err.Error(), Err: err}
}
