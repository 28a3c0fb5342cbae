package mcpserver

import (
	"bytes"
	"io"
	"net/http"

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
