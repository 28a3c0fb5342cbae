package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/exec/search"
)

// benchSession connects a go-sdk client to srv over "stdio" (StdioTransport
// on pipes) or "http".
func benchSession(b *testing.B, srv *mcp.Server, kind string) *mcp.ClientSession {
	var tr mcp.Transport
	switch kind {
	case "stdio":
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go srv.Run(context.Background(), &StdioTransport{Reader: inR, Writer: outW})
		b.Cleanup(func() { inW.Close() })
		tr = &mcp.IOTransport{Reader: outR, Writer: inW}
	case "http":
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		b.Cleanup(hs.Close)
		tr = &mcp.StreamableClientTransport{Endpoint: hs.URL}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkMCPSearchGoSource compares Search over MCP (stdio and HTTP, the
// client decoding the whole result) with search.Run plus the JSON `vigil
// search` prints, on GOROOT/src. The issue's bar: MCP within 1.1x of direct.
func BenchmarkMCPSearchGoSource(b *testing.B) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	root := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	reqJSON := `{"pattern":"func \\w+Context\\(","case":"sensitive","max_results":1000}`
	opts := search.DefaultOptions(root)
	b.Run("direct", func(b *testing.B) {
		req, err := search.DecodeRequest([]byte(reqJSON))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			r, err := search.Run(context.Background(), req, opts, nil)
			if err != nil {
				b.Fatal(err)
			}
			_ = r.WriteJSON(io.Discard)
		}
	})
	srv := New(Deps{SearchOptions: opts})
	var args map[string]any
	json.Unmarshal([]byte(reqJSON), &args)
	for _, kind := range []string{"stdio", "http"} {
		b.Run(kind, func(b *testing.B) {
			cs := benchSession(b, srv, kind)
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Search", Arguments: args})
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

// BenchmarkMCPSearchMemory100k reports search_memory's P50 and P95 latency
// over both transports on 100,000 memories (seed 002's vocabulary shape).
func BenchmarkMCPSearchMemory100k(b *testing.B) {
	s, err := memory.Open(filepath.Join(b.TempDir(), "memory.db"), memory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Import(context.Background(), bytes.NewReader(corpus100k())); err != nil {
		b.Fatal(err)
	}
	srv := New(Deps{Memory: s})
	vocab := vocabulary()
	for _, kind := range []string{"stdio", "http"} {
		b.Run(kind, func(b *testing.B) {
			cs := benchSession(b, srv, kind)
			rng := rand.New(rand.NewPCG(5, 6))
			var lat []time.Duration
			for b.Loop() {
				q := vocab[rng.IntN(len(vocab))] + " " + vocab[rng.IntN(len(vocab))]
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_memory",
					Arguments: map[string]any{"query": q, "limit": 10}})
				lat = append(lat, time.Since(t0))
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
}

func vocabulary() []string {
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "gu"}
	var out []string
	for _, a := range syll {
		for _, b := range syll {
			for _, c := range syll {
				out = append(out, a+b+c)
			}
		}
	}
	return out
}

// corpus100k is 100,000 memories as JSONL, Zipf-distributed words.
func corpus100k() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := vocabulary()
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 2, uint64(len(vocab)-1))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	base := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 100_000 {
		var words []byte
		for w := 15 + rng.IntN(30); w > 0; w-- {
			words = append(append(words, vocab[zipf.Uint64()]...), ' ')
		}
		enc.Encode(map[string]any{"text": string(words), "tags": []string{fmt.Sprintf("tag%02d", rng.IntN(50))},
			"source":     fmt.Sprintf("source%d", rng.IntN(10)),
			"created_at": base.Add(time.Duration(rng.IntN(3*365*24)) * time.Hour).Format(time.RFC3339)})
	}
	return buf.Bytes()
}
