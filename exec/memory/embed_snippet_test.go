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
		"q9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5oTi0kQwErTyUiOpAs",      // opaque: only the known key finds it
		"sk-" + "proj-T3BlbkFJq9Zt4LmW2xKp7RvB3nYc8HdF6sJa1GeU5o", // a vendor shape too
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

type recordingTransport struct{ hosts []string }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.hosts = append(r.hosts, req.URL.Host)
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Body: http.NoBody, Request: req}, nil
}

// TestEmbedderWillNotSendAKeyInTheClear: the client keeps the config's rule
// too, so an embedder built any other way cannot send its key over plain
// http:// to another host unless AllowPlainHTTP says so.
func TestEmbedderWillNotSendAKeyInTheClear(t *testing.T) {
	rt := &recordingTransport{}
	e := &HTTPEmbedder{Kind: KindOpenAI, URL: "http://embed.example.com", ModelName: "m", APIKey: "k-123456789",
		Client: &http.Client{Transport: rt}}
	_, err := e.Embed(context.Background(), []string{"hello"})
	if err == nil || !strings.Contains(err.Error(), "allow_plain_http") || len(rt.hosts) != 0 {
		t.Fatalf("err %v, requests %v: the key went out in the clear", err, rt.hosts)
	}
	e.AllowPlainHTTP = true
	if _, err := e.Embed(context.Background(), []string{"hello"}); err == nil || len(rt.hosts) != 1 {
		t.Fatalf("allowed: err %v, requests %v", err, rt.hosts)
	}
	// No key, or a loopback host: nothing to protect, the request goes.
	for _, e := range []*HTTPEmbedder{
		{Kind: KindOpenAI, URL: "http://embed.example.com", ModelName: "m", Client: &http.Client{Transport: rt}},
		{Kind: KindOpenAI, URL: "http://127.0.0.1:9", ModelName: "m", APIKey: "k-123456789", Client: &http.Client{Transport: rt}},
	} {
		before := len(rt.hosts)
		_, _ = e.Embed(context.Background(), []string{"hello"})
		if len(rt.hosts) != before+1 {
			t.Fatalf("%s: no request made", e.URL)
		}
	}
}
