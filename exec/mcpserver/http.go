package mcpserver

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// batchRefused answers a JSON-RPC batch, on stdio and over HTTP alike.
const batchRefused = "invalid request: expected one JSON-RPC 2.0 object (batches are not supported)"

// maxLeadingSpace bounds the whitespace RefuseBatches reads before a body's
// first character; past it the body goes on to the SDK as it is.
const maxLeadingSpace = 4096

// RefuseBatches answers a POST whose body is a JSON-RPC batch (a JSON
// array) as the stdio transport does: -32600 with id null, HTTP 400. The
// SDK still takes batches from clients of old protocol versions; Vigil
// takes one message per request on every transport, so a batch cannot
// reach the tools by a path stdio closes.
func RefuseBatches(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		var head []byte
		one := make([]byte, 1)
		for len(head) < maxLeadingSpace {
			n, err := r.Body.Read(one)
			if n == 1 {
				head = append(head, one[0])
				if !isSpace(one[0]) {
					break
				}
			}
			if err != nil {
				break
			}
		}
		if len(head) > 0 && head[len(head)-1] == '[' {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(errorLine(nil, jsonrpc.CodeInvalidRequest, batchRefused))
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		next.ServeHTTP(w, r)
	})
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// SSERetry gives every SSE response of next a retry field in its first
// event (the priming event when there is one): how long, in whole
// milliseconds, a client whose stream dropped waits before it resumes with
// Last-Event-ID. The SDK writes one only when it closes a stream itself.
func SSERetry(after time.Duration, next http.Handler) http.Handler {
	field := []byte("retry: " + strconv.FormatInt(after.Milliseconds(), 10) + "\n")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&retryWriter{ResponseWriter: w, field: field}, r)
	})
}

// retryWriter puts the retry field before the first bytes of an event
// stream: they begin its first event, and an event's fields may come in
// any order.
type retryWriter struct {
	http.ResponseWriter
	field []byte
	wrote bool
}

func (w *retryWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			if _, err := w.ResponseWriter.Write(w.field); err != nil {
				return 0, err
			}
		}
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes the response (the SDK flushes after each event).
func (w *retryWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
