package memory

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// The loopback embedding server stands in for the model only: it checks the
// exact request each kind sends and answers deterministic vectors in which
// chosen synonyms share a dimension, so "vehicle" lies close to "car" and
// "reservation" to "booked". Other words land on hashed dimensions.
const fakeDims = 64

var fakeConcepts = map[string]int{
	"car": 0, "vehicle": 0, "automobile": 0,
	"booked": 1, "reservation": 1, "booking": 1, "reserved": 1,
	"friday":  2,
	"dentist": 3, "teeth": 3, "dental": 3,
	"invoice": 4, "bill": 4, "payment": 4,
}

// fakeVector is the fake model: concept words weigh 1, other words 0.15.
func fakeVector(text string) []float32 {
	v := make([]float32, fakeDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if c, ok := fakeConcepts[w]; ok {
			v[c]++
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[16+int(h.Sum32()%(fakeDims-16))] += 0.15
	}
	return v
}

type fakeServer struct {
	t      *testing.T
	kind   string
	model  string
	apiKey string // openai: the bearer token it insists on
	dims   int    // openai: the "dimensions" it expects (0: none sent)

	mu     sync.Mutex
	calls  int
	texts  int
	models []string
	// fail, when set, answers instead of the vectors.
	fail func(w http.ResponseWriter, r *http.Request, inputs []string) bool
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	wantPath := map[string]string{KindOllama: "/api/embed", KindOpenAI: "/v1/embeddings"}[f.kind]
	if r.Method != http.MethodPost || r.URL.Path != wantPath {
		t.Errorf("%s %s, want POST %s", r.Method, r.URL.Path, wantPath)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	auth := r.Header.Get("Authorization")
	switch {
	case f.kind == KindOpenAI && f.apiKey != "" && auth != "Bearer "+f.apiKey:
		t.Errorf("Authorization %q, want the bearer key", auth)
	case (f.kind == KindOllama || f.apiKey == "") && auth != "":
		t.Errorf("Authorization %q sent where no key belongs", auth)
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Errorf("body %q: %v", raw, err)
	}
	wantKeys := []string{"input", "model"}
	if f.kind == KindOpenAI && f.dims > 0 {
		wantKeys = []string{"dimensions", "input", "model"}
	}
	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	slicesSort(keys)
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("body keys %v, want %v", keys, wantKeys)
	}
	var model string
	var inputs []string
	_ = json.Unmarshal(body["model"], &model)
	if err := json.Unmarshal(body["input"], &inputs); err != nil || len(inputs) == 0 {
		t.Errorf("input %s: %v", body["input"], err)
	}
	if f.kind == KindOpenAI && f.dims > 0 && string(body["dimensions"]) != itoa(f.dims) {
		t.Errorf("dimensions %s, want %d", body["dimensions"], f.dims)
	}
	f.mu.Lock()
	f.calls++
	f.texts += len(inputs)
	f.models = append(f.models, model)
	fail := f.fail
	f.mu.Unlock()
	if fail != nil && fail(w, r, inputs) {
		return
	}
	vecs := make([][]float32, len(inputs))
	for i, in := range inputs {
		vecs[i] = fakeVector(in)
	}
	w.Header().Set("Content-Type", "application/json")
	if f.kind == KindOllama {
		json.NewEncoder(w).Encode(map[string]any{"model": model, "embeddings": vecs})
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i := len(vecs) - 1; i >= 0; i-- { // out of order: the index field decides
		data = append(data, item{"embedding", i, vecs[i]})
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": model, "data": data})
}

func slicesSort(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// newFake starts a loopback embedding server of kind.
func newFake(t *testing.T, kind string) (*fakeServer, *httptest.Server) {
	f := &fakeServer{t: t, kind: kind, model: "fake-embed"}
	if kind == KindOpenAI {
		f.apiKey, f.dims = "sk-test-SECRET-0123456789", fakeDims
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) embedder(url string) *HTTPEmbedder {
	return &HTTPEmbedder{Kind: f.kind, URL: url, ModelName: f.model, APIKey: f.apiKey, Dimensions: f.dims,
		Batch: 8, Timeout: 2 * time.Second}
}

// hybridStore opens a store with the embedder and a log buffer.
func hybridStore(t *testing.T, emb Embedder, required bool, path string) (*Store, *bytes.Buffer) {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "memory.db")
	}
	var logBuf bytes.Buffer
	s, err := Open(path, Options{Now: func() time.Time { return testNow }, Embedder: emb, EmbedRequired: required,
		Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, &logBuf
}

func seedHybrid(t *testing.T, s *Store) map[string]int64 {
	t.Helper()
	ids := map[string]int64{}
	for _, m := range []struct{ key, text, tag string }{
		{"car", "The car is booked for Friday", "errands"},
		{"dentist", "Dentist appointment moved to the 14th", "health"},
		{"invoice", "Send the invoice to Acme by the end of the month", "work"},
		{"python", "Python virtual environments keep dependencies apart", "programming"},
		{"garden", "Water the tomatoes twice a week in summer", "home"},
	} {
		ids[m.key] = addMem(t, s, m.text, []string{m.tag}, "notes", "2025-06-01")
	}
	return ids
}

func TestHybridFindsWhatKeywordsMiss(t *testing.T) {
	for _, kind := range []string{KindOllama, KindOpenAI} {
		t.Run(kind, func(t *testing.T) {
			f, srv := newFake(t, kind)
			s, _ := hybridStore(t, f.embedder(srv.URL), true, "")
			ids := seedHybrid(t, s)
			// Keyword search alone: no word in common, nothing found.
			kwOnly, err := Open(s.pathForTest(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer kwOnly.Close()
			if hits, err := kwOnly.SearchMemory(t.Context(), Request{Query: "vehicle reservation", Limit: 5}); err != nil || len(hits) != 0 {
				t.Fatalf("BM25 found %v, %v", hits, err)
			}
			hits, err := s.SearchMemory(t.Context(), Request{Query: "vehicle reservation", Limit: 5})
			if err != nil || len(hits) == 0 || hits[0].ID != ids["car"] || hits[0].Match != MatchMeaning {
				t.Fatalf("hybrid: %+v, %v", hits, err)
			}
			// The question shares only "is" with the memory.
			hits, err = s.SearchMemory(t.Context(), Request{Query: "when is my vehicle reservation", Limit: 5})
			if err != nil || hits[0].ID != ids["car"] || hits[0].Match != MatchBoth || hits[0].Score != 1 {
				t.Fatalf("hybrid: %+v, %v", hits, err)
			}
			for _, h := range hits {
				if h.Score < 0 || h.Score > 1 {
					t.Fatalf("score %v", h.Score)
				}
			}
			// Filters apply to meaning hits too.
			hits, err = s.SearchMemory(t.Context(), Request{Query: "vehicle reservation", Limit: 5, Filters: Filters{Tags: []string{"work"}}})
			if err != nil || len(hits) != 0 {
				t.Fatalf("filtered: %+v, %v", hits, err)
			}
			hits, _ = s.SearchMemory(t.Context(), Request{Query: "dental bill", Limit: 5, Filters: Filters{Source: "notes"}})
			got := map[int64]bool{}
			for _, h := range hits {
				got[h.ID] = true
			}
			if !got[ids["dentist"]] || !got[ids["invoice"]] || got[ids["garden"]] {
				t.Fatalf("dental bill: %+v", hits)
			}
			// The tool's text marks how each hit matched.
			r := NewTool(s, nil).Execute(t.Context(), []byte(`{"query": "vehicle reservation", "limit": 1}`))
			if want := "Found 1 results:\n\n1. [Score: 0.50] [Match: meaning] [Tags: errands]\nThe car is booked for Friday\n"; r.Text() != want {
				t.Fatalf("%q", r.Text())
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, m := range f.models {
				if m != "fake-embed" {
					t.Fatalf("model %q sent", m)
				}
			}
		})
	}
}

func (s *Store) pathForTest(t *testing.T) string {
	t.Helper()
	var file string
	if err := s.db.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestHybridImportThenReindexInBatches(t *testing.T) {
	f, srv := newFake(t, KindOllama)
	s, _ := hybridStore(t, f.embedder(srv.URL), true, "")
	var b bytes.Buffer
	for i := 0; i < 20; i++ {
		jsonLine(&b, map[string]any{"text": "filler memory number " + itoa(i)})
	}
	jsonLine(&b, map[string]any{"text": "The car is booked for Friday"})
	if _, err := s.Import(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	var seen [][2]int
	st, err := s.Reindex(t.Context(), func(done, total int) { seen = append(seen, [2]int{done, total}) })
	if err != nil || st.Embedded != 21 || st.Total != 21 {
		t.Fatalf("%+v %v", st, err)
	}
	// Batches of 8: 8, 16, 21, and the start.
	if want := [][2]int{{0, 21}, {8, 21}, {16, 21}, {21, 21}}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("progress %v", seen)
	}
	if f.calls != 3 || f.texts != 21 {
		t.Fatalf("%d calls, %d texts", f.calls, f.texts)
	}
	if st, err := s.Reindex(t.Context(), nil); err != nil || st.Embedded != 0 {
		t.Fatalf("second reindex %+v %v", st, err)
	}
	hits, err := s.SearchMemory(t.Context(), Request{Query: "vehicle reservation", Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Match != MatchMeaning {
		t.Fatalf("%+v %v", hits, err)
	}
}

func TestHybridReindexAfterModelChange(t *testing.T) {
	f, srv := newFake(t, KindOllama)
	path := filepath.Join(t.TempDir(), "memory.db")
	s, _ := hybridStore(t, f.embedder(srv.URL), true, path)
	seedHybrid(t, s) // embedded on add with "fake-embed"
	s.Close()
	e2 := f.embedder(srv.URL)
	e2.ModelName = "fake-embed-v2"
	s2, _ := hybridStore(t, e2, true, path)
	// Vectors of the old model are not compared with the new model's.
	if hits, err := s2.SearchMemory(t.Context(), Request{Query: "vehicle reservation", Limit: 5}); err != nil || len(hits) != 0 {
		t.Fatalf("before reindex: %+v %v", hits, err)
	}
	st, err := s2.Reindex(t.Context(), nil)
	if err != nil || st.Embedded != 5 {
		t.Fatalf("%+v %v", st, err)
	}
	var n int
	if err := s2.db.QueryRow(`SELECT count(*) FROM memory_vectors WHERE model = 'fake-embed-v2' AND dim = ?`, fakeDims).Scan(&n); err != nil || n != 5 {
		t.Fatalf("%d vectors of the new model, %v", n, err)
	}
	if hits, err := s2.SearchMemory(t.Context(), Request{Query: "vehicle reservation", Limit: 5}); err != nil || len(hits) != 1 {
		t.Fatalf("after reindex: %+v %v", hits, err)
	}
}

// Every way the embedder can fail: the seed's error when required, the
// keyword answer and one log line otherwise, and never the API key.
func TestHybridEmbedderFailures(t *testing.T) {
	cases := []struct {
		name string
		fail func(w http.ResponseWriter, r *http.Request, inputs []string) bool
		want string
	}{
		{"http error echoing the key", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			http.Error(w, `{"error":"invalid key sk-test-SECRET-0123456789"}`, http.StatusUnauthorized)
			return true
		}, "HTTP 401: {\"error\":\"invalid key ****\"}"},
		{"not json", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			io.WriteString(w, "<html>")
			return true
		}, "not an OpenAI embeddings response"},
		{"too few vectors", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			io.WriteString(w, `{"data":[]}`)
			return true
		}, "asked for 1 vectors, got 0"},
		{"wrong dimension", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2,3]}]}`)
			return true
		}, "expected 64 dimensions, got 3"},
		// never answers: the embedder gives up at its timeout (the request
		// ends when it hangs up)
		{"slow", func(_ http.ResponseWriter, r *http.Request, _ []string) bool { <-r.Context().Done(); return true }, "no answer within 300ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, srv := newFake(t, KindOpenAI)
			emb := f.embedder(srv.URL)
			emb.Timeout = 300 * time.Millisecond
			s, logBuf := hybridStore(t, emb, true, "")
			addMem(t, s, "The car is booked for Friday", nil, "", "2025-06-01")
			f.mu.Lock()
			f.fail = c.fail
			f.mu.Unlock()
			r := NewTool(s, nil).Execute(t.Context(), []byte(`{"query": "car booked"}`))
			if !r.IsError || !strings.HasPrefix(r.Text(), "Error: Search failed: Embedding generation failed: openai embedder: ") ||
				!strings.Contains(r.Text(), c.want) {
				t.Fatalf("%q", r.Text())
			}
			// Not required: the keyword answer, and one log line for two searches.
			s2, logBuf2 := hybridStore(t, emb, false, s.pathForTest(t))
			for i := 0; i < 2; i++ {
				hits, err := s2.SearchMemory(t.Context(), Request{Query: "car booked", Limit: 5})
				if err != nil || len(hits) != 1 || hits[0].Match != "" {
					t.Fatalf("keyword fallback: %+v %v", hits, err)
				}
			}
			if n := strings.Count(logBuf2.String(), "embedding_failed"); n != 1 {
				t.Fatalf("%d log lines:\n%s", n, logBuf2)
			}
			for _, out := range []string{r.Text(), logBuf.String(), logBuf2.String()} {
				if strings.Contains(out, f.apiKey) {
					t.Fatalf("API key leaked: %s", out)
				}
			}
		})
	}
}

func TestHybridEmbedderUnreachable(t *testing.T) {
	f, srv := newFake(t, KindOllama)
	emb := f.embedder(srv.URL)
	s, _ := hybridStore(t, emb, true, "")
	addMem(t, s, "The car is booked for Friday", nil, "", "2025-06-01")
	srv.Close()
	r := NewTool(s, nil).Execute(t.Context(), []byte(`{"query": "car"}`))
	if !strings.HasPrefix(r.Text(), "Error: Search failed: Embedding generation failed: ollama embedder: ") {
		t.Fatalf("%q", r.Text())
	}
	// Adding while the embedder is down stores the memory; reindex fills in later.
	s2, logBuf := hybridStore(t, emb, false, s.pathForTest(t))
	id := addMem(t, s2, "Dentist appointment moved to the 14th", nil, "", "2025-06-02")
	if _, err := s2.Get(t.Context(), id); err != nil || !strings.Contains(logBuf.String(), "embedding_failed") {
		t.Fatalf("%v %s", err, logBuf)
	}
	if _, err := s2.Reindex(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "Embedding generation failed") {
		t.Fatalf("reindex: %v", err)
	}
}

func TestVectorsAreUnitLengthFloat32(t *testing.T) {
	v := []float32{3, 4}
	b := encodeVector(v)
	got := make([]float32, 2)
	decodeVector(b, got)
	if len(b) != 8 || math.Abs(float64(got[0])-0.6) > 1e-7 || math.Abs(float64(got[1])-0.8) > 1e-7 {
		t.Fatalf("%v %v", b, got)
	}
}
