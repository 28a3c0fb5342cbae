package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMemoryEmbedderAbsentByDefault(t *testing.T) {
	cfg, err := Load(filepath.Join(t.TempDir(), "missing.toml"), "/")
	if err != nil || cfg.Memory.Embedder != nil {
		t.Fatalf("%+v %v", cfg.Memory, err)
	}
}

func TestMemoryEmbedderSection(t *testing.T) {
	p := write(t, `[memory.embedder]
kind = "openai"
url = "http://127.0.0.1:8080"
model = "nomic-embed-text"
batch_size = 64
timeout = "10s"
api_key_env = "OPENAI_API_KEY"
dimensions = 256
required = true
`)
	cfg, err := Load(p, "/")
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Memory.Embedder
	if e == nil || e.Kind != "openai" || e.EffectiveBatch() != 64 || e.EffectiveTimeout() != 10*time.Second ||
		e.APIKeyEnv != "OPENAI_API_KEY" || e.Dimensions != 256 || !e.Required {
		t.Fatalf("%+v", e)
	}
	p = write(t, "[memory.embedder]\nkind = \"ollama\"\nurl = \"http://localhost:11434\"\nmodel = \"m\"\n")
	if cfg, err = Load(p, "/"); err != nil || cfg.Memory.Embedder.EffectiveBatch() != DefaultEmbedBatch ||
		cfg.Memory.Embedder.EffectiveTimeout() != DefaultEmbedTimeout || cfg.Memory.Embedder.Required {
		t.Fatalf("defaults: %+v %v", cfg.Memory.Embedder, err)
	}
}

func TestMemoryEmbedderErrorsNameFileLineKey(t *testing.T) {
	base := "[memory.embedder]\nkind = \"ollama\"\nurl = \"http://localhost:11434\"\nmodel = \"m\"\n"
	for _, c := range []struct{ body, want string }{
		{"[memory.embedder]\nkind = \"cohere\"\nurl = \"http://x\"\nmodel = \"m\"\n", `:2: memory.embedder.kind: must be ollama or openai, got "cohere"`},
		{"[memory.embedder]\nkind = \"ollama\"\nmodel = \"m\"\n", "memory.embedder.url: is required"},
		{"[memory.embedder]\nkind = \"ollama\"\nurl = \"ftp://x\"\nmodel = \"m\"\n", `:3: memory.embedder.url: must be an http:// or https:// URL, got "ftp://x"`},
		{"[memory.embedder]\nkind = \"openai\"\nurl = \"https://u:p@x\"\nmodel = \"m\"\n", "memory.embedder.url: must not carry credentials"},
		{"[memory.embedder]\nkind = \"ollama\"\nurl = \"http://x\"\n", "memory.embedder.model: is required"},
		{base + "batch_size = -1\n", ":5: memory.embedder.batch_size: must be between 1 and 2048, got -1"},
		{base + "timeout = \"soon\"\n", ":5: memory.embedder.timeout"},
		{base + "timeout = \"11m\"\n", ":5: memory.embedder.timeout: must be positive and at most 10m0s"},
		{base + "dimensions = -3\n", ":5: memory.embedder.dimensions"},
		{base + "api_key_env = \"KEY\"\n", ":5: memory.embedder.api_key_env: only the openai kind sends an API key"},
		{base + "api_key = \"sk-x\"\n", ":5: memory.embedder.api_key: unknown key"},
	} {
		_, err := Load(write(t, c.body), "/")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.body, err, c.want)
		}
	}
}
