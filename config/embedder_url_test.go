package config

import (
	"strings"
	"testing"
)

// TestEmbedderPlainHTTPWithKeyIsRefused: an API key sent over plain http://
// to another host travels in the clear (issue 36, item 13). Refused at load
// unless allow_plain_http says the person means it; loopback and https are
// fine, and so is plain http without a key.
func TestEmbedderPlainHTTPWithKeyIsRefused(t *testing.T) {
	section := func(url, extra string) string {
		return "[memory.embedder]\nkind = \"openai\"\nurl = \"" + url + "\"\nmodel = \"m\"\napi_key_env = \"EMBED_KEY\"\n" + extra
	}
	for _, url := range []string{"http://embed.example.com", "http://192.168.1.20:8080", "http://2130706433", "http://localhost.evil.com"} {
		_, err := Load(write(t, section(url, "")), "/")
		if err == nil || !strings.Contains(err.Error(), "memory.embedder.url: ") ||
			!strings.Contains(err.Error(), "in the clear") || !strings.Contains(err.Error(), "allow_plain_http") {
			t.Errorf("%s: got %v, want the plain-http rule", url, err)
		}
		cfg, err := Load(write(t, section(url, "allow_plain_http = true\n")), "/")
		if err != nil || !cfg.Memory.Embedder.AllowPlainHTTP {
			t.Errorf("%s with allow_plain_http: %v", url, err)
		}
	}
	for _, url := range []string{"https://api.example.com", "http://127.0.0.1:8080", "http://localhost:11434", "http://[::1]:8080", "http://127.8.9.10"} {
		if _, err := Load(write(t, section(url, "")), "/"); err != nil {
			t.Errorf("%s: %v", url, err)
		}
	}
	// No key: nothing secret travels, plain http anywhere is the person's choice.
	if _, err := Load(write(t, "[memory.embedder]\nkind = \"openai\"\nurl = \"http://embed.example.com\"\nmodel = \"m\"\n"), "/"); err != nil {
		t.Errorf("no key: %v", err)
	}
}
