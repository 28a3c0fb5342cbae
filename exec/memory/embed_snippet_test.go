package memory

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// leakedRun is the longest run of key (at least min bytes) found in s, or "".
func leakedRun(s, key string, min int) string {
	for n := len(key); n >= min; n-- {
		for i := 0; i+n <= len(key); i++ {
			if strings.Contains(s, key[i:i+n]) {
				return key[i : i+n]
			}
		}
	}
	return ""
}

// TestEmbedErrorMasksBeforeCutting: an endpoint that echoes the bearer key in
// its 401 answer, with the key straddling the 200-character cut. Cutting first
// left 48 of 50 characters that no longer matched the key (issue 36, item 1).
func TestEmbedErrorMasksBeforeCutting(t *testing.T) {
	keys := []string{
		"q9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5oTi0kQwErTyUiOpAs", // opaque: only the known key finds it
		"sk-proj-T3BlbkFJq9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5o", // a vendor shape too
	}
	for _, key := range keys {
		for shift := 100; shift <= 160; shift += 3 {
			msg := strings.Repeat("x", shift) + " Incorrect API key provided: " + key + ". You can find your API key at …"
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":{"message":"` + msg + `"}}`))
			}))
			e := &HTTPEmbedder{Kind: KindOpenAI, URL: srv.URL, ModelName: "m", APIKey: key}
			_, err := e.Embed(context.Background(), []string{"hello"})
			srv.Close()
			if err == nil {
				t.Fatal("a 401 was accepted")
			}
			if run := leakedRun(err.Error(), key, 6); run != "" {
				t.Fatalf("shift %d: %q of the key reached the error: %s", shift, run, err)
			}
		}
	}
}
