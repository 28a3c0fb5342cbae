package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// MemoryConfig is the [memory] section.
type MemoryConfig struct {
	// Embedder makes memory search hybrid (keyword + meaning, issue 27).
	// Absent: keyword (BM25) search only.
	Embedder *EmbedderConfig `toml:"embedder,omitempty" json:"embedder,omitempty"`
}

// EmbedderConfig is [memory.embedder]: an embedding model the person runs.
type EmbedderConfig struct {
	// Kind is the request shape: "ollama" (POST {url}/api/embed) or
	// "openai" (POST {url}/v1/embeddings; llama.cpp's server, LM Studio,
	// vLLM and hosted APIs speak it too).
	Kind  string `toml:"kind" json:"kind"`
	URL   string `toml:"url" json:"url"`
	Model string `toml:"model" json:"model"`
	// BatchSize is how many texts one request carries (default 32).
	BatchSize int `toml:"batch_size,omitempty" json:"batch_size,omitempty"`
	// Timeout bounds one request (default 30s).
	Timeout Duration `toml:"timeout,omitzero" json:"timeout,omitzero"`
	// APIKeyEnv names the environment variable holding the API key (openai
	// only). The key itself is never written in the file.
	APIKeyEnv string `toml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// AllowPlainHTTP lets an API key go to a non-loopback host over plain
	// http://, where anyone on the path can read it. Refused without it.
	AllowPlainHTTP bool `toml:"allow_plain_http,omitempty" json:"allow_plain_http,omitempty"`
	// Dimensions asks an openai-kind model for vectors of this size and
	// checks every answer (0: the model's own size).
	Dimensions int `toml:"dimensions,omitempty" json:"dimensions,omitempty"`
	// Required: a search whose query cannot be embedded fails ("Embedding
	// generation failed") instead of answering by keyword.
	Required bool `toml:"required" json:"required"`
}

// Embedder defaults and bounds.
const (
	DefaultEmbedBatch   = 32
	MaxEmbedBatch       = 2048
	DefaultEmbedTimeout = 30 * time.Second
	MaxEmbedTimeout     = 10 * time.Minute
	MaxEmbedDimensions  = 65536
)

// EffectiveBatch is BatchSize with its default.
func (e EmbedderConfig) EffectiveBatch() int {
	if e.BatchSize == 0 {
		return DefaultEmbedBatch
	}
	return e.BatchSize
}

// EffectiveTimeout is Timeout with its default.
func (e EmbedderConfig) EffectiveTimeout() time.Duration {
	if e.Timeout.Duration == 0 {
		return DefaultEmbedTimeout
	}
	return e.Timeout.Duration
}

func (m MemoryConfig) validate() error {
	e := m.Embedder
	if e == nil {
		return nil
	}
	bad := func(key, rule string) error { return &Error{Key: "memory.embedder." + key, Rule: rule} }
	switch e.Kind {
	case "ollama", "openai":
	default:
		return bad("kind", fmt.Sprintf("must be ollama or openai, got %q", e.Kind))
	}
	u, err := url.Parse(e.URL)
	switch {
	case e.URL == "":
		return bad("url", "is required (the embedding server's base URL, e.g. http://127.0.0.1:11434)")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return bad("url", fmt.Sprintf("must be an http:// or https:// URL, got %q", e.URL))
	case u.User != nil:
		return bad("url", "must not carry credentials; use api_key_env")
	}
	if strings.TrimSpace(e.Model) == "" {
		return bad("model", "is required (the model name the server knows)")
	}
	if e.BatchSize < 0 || e.BatchSize > MaxEmbedBatch {
		return bad("batch_size", fmt.Sprintf("must be between 1 and %d, got %d", MaxEmbedBatch, e.BatchSize))
	}
	if t := e.Timeout.Duration; t < 0 || t > MaxEmbedTimeout {
		return bad("timeout", fmt.Sprintf("must be positive and at most %s, got %s", MaxEmbedTimeout, t))
	}
	if e.Dimensions < 0 || e.Dimensions > MaxEmbedDimensions {
		return bad("dimensions", fmt.Sprintf("must be between 1 and %d, got %d", MaxEmbedDimensions, e.Dimensions))
	}
	if e.APIKeyEnv != "" {
		if e.Kind != "openai" {
			return bad("api_key_env", "only the openai kind sends an API key")
		}
		if strings.ContainsAny(e.APIKeyEnv, "= \t\x00") {
			return bad("api_key_env", fmt.Sprintf("must be an environment variable's name, got %q", e.APIKeyEnv))
		}
		if u.Scheme == "http" && !LoopbackHost(u.Hostname()) && !e.AllowPlainHTTP {
			return bad("url", fmt.Sprintf("plain http:// to %s, which is not this machine, would send the API key (api_key_env) "+
				"in the clear: use https://, a loopback host, or set allow_plain_http = true", u.Hostname()))
		}
	}
	return nil
}

// LoopbackHost reports whether host names this machine: "localhost", or an
// address in 127.0.0.0/8 or ::1 written as such. Any other spelling
// (2130706433, a name that merely starts with "localhost") is treated as
// another host.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
