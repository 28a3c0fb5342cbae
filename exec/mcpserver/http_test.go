package mcpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A batch over HTTP gets what stdio answers (-32600, id null); one message
// reaches the handler with its body whole.
func TestRefuseBatches(t *testing.T) {
	var got string
	h := RefuseBatches(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
	}))
	for _, body := range []string{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, " \r\n\t[]"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/mcp", strings.NewReader(body)))
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + batchRefused + `"}}`
		if w.Code != http.StatusBadRequest || w.Body.String() != want {
			t.Errorf("%q: %d %s", body, w.Code, w.Body)
		}
	}
	for _, body := range []string{` {"jsonrpc":"2.0","id":1,"method":"ping"}`, "", strings.Repeat(" ", 5000) + "[]"} {
		got = "unset"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/mcp", strings.NewReader(body)))
		if w.Code != http.StatusOK || got != body {
			t.Errorf("%.20q: %d, the handler got %.20q", body, w.Code, got)
		}
	}
}

// The first event of an SSE response carries the retry field; a JSON
// response is left alone.
func TestSSERetry(t *testing.T) {
	h := SSERetry(2500*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", r.URL.Query().Get("ct"))
		w.Write([]byte("event: prime\nid: 1\ndata: \n\n"))
		http.NewResponseController(w).Flush()
		w.Write([]byte("data: {}\n\n"))
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/mcp?ct=text/event-stream", nil))
	if got := w.Body.String(); got != "retry: 2500\nevent: prime\nid: 1\ndata: \n\ndata: {}\n\n" || !w.Flushed {
		t.Fatalf("event stream: %q (flushed %v)", got, w.Flushed)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/mcp?ct=application/json", nil))
	if strings.Contains(w.Body.String(), "retry") {
		t.Fatalf("json: %q", w.Body)
	}
}
