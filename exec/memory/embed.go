package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/config"
	mask "github.com/vigil-dev/vigil/preview"
)

// Embedder turns texts into vectors (issue 27). Vigil bundles no model: an
// HTTPEmbedder talks to one the person runs (Ollama, llama.cpp's server, LM
// Studio, vLLM, or a hosted OpenAI-compatible API).
type Embedder interface {
	// Embed returns one vector per text, in order, all of one dimension.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the model; stored with every vector so that reindex finds
	// vectors another model made.
	Model() string
	// BatchSize is how many texts one Embed call should carry.
	BatchSize() int
}

// Embedder kinds: the request shapes Vigil speaks.
const (
	KindOllama = "ollama" // POST {url}/api/embed {"model","input":[…]} → {"embeddings":[[…]]}
	KindOpenAI = "openai" // POST {url}/v1/embeddings {"model","input":[…]} → {"data":[{"index","embedding"}]}
)

// HTTPEmbedder is an Embedder over HTTP. APIKey is sent only by the openai
// kind, as a bearer token, and never appears in an error.
type HTTPEmbedder struct {
	Kind       string
	URL        string // base URL, e.g. http://127.0.0.1:11434
	ModelName  string
	APIKey     string
	Dimensions int // openai: asks for this many dimensions; both: checked when > 0
	Batch      int
	Timeout    time.Duration // per request
	Client     *http.Client  // nil: http.DefaultClient
	// AllowPlainHTTP lets APIKey go over plain http:// to a host that is not
	// this machine ([memory.embedder] allow_plain_http); refused otherwise.
	AllowPlainHTTP bool
}

// maxEmbedResponse bounds what an embedder's answer may take in memory.
const maxEmbedResponse = 256 << 20

func (e *HTTPEmbedder) Model() string { return e.ModelName }

func (e *HTTPEmbedder) BatchSize() int {
	if e.Batch <= 0 {
		return 32
	}
	return e.Batch
}

// EmbedError is an embedder failure: the seed's "Embedding generation
// failed" category. Its text never holds the API key.
type EmbedError struct{ Msg string }

func (e *EmbedError) Error() string { return e.Msg }

// Embed posts texts in one request and checks the answer's shape.
func (e *HTTPEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	var path string
	body := map[string]any{"model": e.ModelName, "input": texts}
	switch e.Kind {
	case KindOllama:
		path = "/api/embed"
	case KindOpenAI:
		path = "/v1/embeddings"
		if e.Dimensions > 0 {
			body["dimensions"] = e.Dimensions
		}
	default:
		return nil, &EmbedError{Msg: fmt.Sprintf("unknown embedder kind %q", e.Kind)}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, &EmbedError{Msg: "encoding the request: " + err.Error()}
	}
	if e.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(e.URL, "/")+path, bytes.NewReader(raw))
	if err != nil {
		return nil, e.fail("bad url: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.Kind == KindOpenAI && e.APIKey != "" {
		if req.URL.Scheme == "http" && !config.LoopbackHost(req.URL.Hostname()) && !e.AllowPlainHTTP {
			return nil, e.fail("refusing to send the API key in the clear over plain http:// to %s: "+
				"use https://, a loopback host, or set [memory.embedder] allow_plain_http = true", req.URL.Hostname())
		}
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, e.fail("no answer within %s", e.Timeout)
		}
		return nil, e.fail("%v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponse+1))
	if err != nil {
		return nil, e.fail("reading the answer: %v", err)
	}
	if len(data) > maxEmbedResponse {
		return nil, e.fail("answer larger than %d bytes", maxEmbedResponse)
	}
	if resp.StatusCode/100 != 2 {
		return nil, e.fail("HTTP %d: %s", resp.StatusCode, e.snippet(data))
	}
	vecs, err := e.decode(data, len(texts))
	if err != nil {
		return nil, e.fail("%v", err)
	}
	return vecs, nil
}

// decode reads the kind's answer: exactly n vectors, one dimension, finite.
func (e *HTTPEmbedder) decode(data []byte, n int) ([][]float32, error) {
	var vecs [][]float32
	switch e.Kind {
	case KindOllama:
		var r struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("answer is not an Ollama embed response: %v", err)
		}
		vecs = r.Embeddings
	case KindOpenAI:
		var r struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("answer is not an OpenAI embeddings response: %v", err)
		}
		vecs = make([][]float32, len(r.Data))
		for _, d := range r.Data {
			if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
				return nil, fmt.Errorf("answer has a bad or repeated index %d", d.Index)
			}
			vecs[d.Index] = d.Embedding
		}
	}
	if len(vecs) != n {
		return nil, fmt.Errorf("asked for %d vectors, got %d", n, len(vecs))
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("vector %d is empty", i)
		}
		if len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("vectors of different dimensions (%d and %d)", len(vecs[0]), len(v))
		}
		if e.Dimensions > 0 && len(v) != e.Dimensions {
			return nil, fmt.Errorf("expected %d dimensions, got %d", e.Dimensions, len(v))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("vector %d holds a non-finite number", i)
			}
		}
	}
	return vecs, nil
}

// fail builds an EmbedError with the API key masked wherever an answer or a
// transport error might have echoed it.
func (e *HTTPEmbedder) fail(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if e.APIKey != "" {
		msg = strings.ReplaceAll(msg, e.APIKey, keyMask)
	}
	// The whole message, not only the answer's snippet: a transport error
	// quotes the URL, whose query may carry a key.
	msg = mask.MaskString(msg)
	return &EmbedError{Msg: e.Kind + " embedder: " + msg}
}

// maxSnippet bounds the part of an error answer an EmbedError quotes.
const maxSnippet = 200

// keyMask stands for the embedder's own API key in an error.
const keyMask = "****"

// snippet is the start of an error answer, on one line: the key and every
// other secret masked in the whole answer before it is cut, so that a key
// straddling the cut cannot leave a part of it that no longer matches.
func (e *HTTPEmbedder) snippet(b []byte) string {
	s := string(b)
	if e.APIKey != "" {
		s = strings.ReplaceAll(s, e.APIKey, keyMask)
	}
	return mask.Snippet(s, maxSnippet)
}
