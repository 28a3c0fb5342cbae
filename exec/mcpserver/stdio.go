package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes caps one inbound stdio message. A longer line is answered
// with -32600 (id null), skipped to its end, and the session goes on.
const MaxLineBytes = 4 << 20

// CodeNotInitialized answers a request sent before initialize. It is
// JSON-RPC's Invalid Request code: the SDK would answer with code 0.
const CodeNotInitialized = jsonrpc.CodeInvalidRequest

// StdioTransport is newline-delimited JSON-RPC over a reader and a writer
// that survives what the SDK's own IOTransport does not (go-sdk issues 1061
// and 1209, open in v1.8.0):
//
//   - a line that is not JSON gets -32700 with id null; a message that is not
//     JSON-RPC 2.0 (no "jsonrpc":"2.0", a batch, a bad id) gets -32600; a
//     line over MaxLineBytes gets -32600. None of them ends the session.
//   - a request before initialize gets -32600 instead of the SDK's code 0.
//   - at EOF, Read waits until every call it delivered has been answered,
//     so a one-shot pipe (initialize, initialized, tools/call, EOF) gets all
//     its answers before the server exits.
//
// Everything else is the SDK's: messages that pass go to it unchanged.
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxLineBytes overrides the line cap (0: MaxLineBytes).
	MaxLineBytes int
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxLineBytes
	if limit <= 0 {
		limit = MaxLineBytes
	}
	c := &stdioConn{
		w:        t.Writer,
		lines:    make(chan line),
		closed:   make(chan struct{}),
		inflight: map[any]bool{},
		idle:     make(chan struct{}, 1),
	}
	go c.readLines(bufio.NewReaderSize(t.Reader, 64<<10), limit)
	return c, nil
}

type line struct {
	data     []byte
	tooLong  bool
	err      error // io.EOF or a read error: the last line
	consumed chan struct{}
}

type stdioConn struct {
	wmu sync.Mutex // one message per write, whole lines only
	w   io.Writer

	lines     chan line
	closed    chan struct{}
	closeOnce sync.Once

	mu          sync.Mutex
	initialized bool
	inflight    map[any]bool  // ids of calls handed to the SDK, not yet answered
	idle        chan struct{} // signalled when inflight empties
}

// readLines reads whole lines, cutting any over limit, and hands them to Read
// one at a time.
func (c *stdioConn) readLines(r *bufio.Reader, limit int) {
	for {
		var buf []byte
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = r.ReadSlice('\n')
			if !tooLong {
				if len(buf)+len(chunk) > limit+1 { // +1: the newline
					tooLong, buf = true, nil
				} else {
					buf = append(buf, chunk...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if len(bytes.TrimSpace(buf)) > 0 || tooLong {
			l := line{data: buf, tooLong: tooLong, consumed: make(chan struct{})}
			select {
			case c.lines <- l:
				<-l.consumed
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.lines <- line{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// Read returns the next valid message, answering invalid ones itself.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var l line
		select {
		case l = <-c.lines:
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if l.err != nil {
			c.waitIdle(ctx)
			if errors.Is(l.err, io.EOF) {
				return nil, io.EOF
			}
			return nil, l.err
		}
		msg, errResp := c.check(l)
		close(l.consumed)
		if errResp != nil {
			if err := c.writeRaw(errResp); err != nil {
				return nil, err
			}
			continue
		}
		return msg, nil
	}
}

// waitIdle blocks until every delivered call has its answer written.
func (c *stdioConn) waitIdle(ctx context.Context) {
	for {
		c.mu.Lock()
		n := len(c.inflight)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.idle:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}

// envelope is what the checks read of a message before the SDK decodes it.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// check returns the message to deliver, or the error response to write.
func (c *stdioConn) check(l line) (jsonrpc.Message, []byte) {
	if l.tooLong {
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("message longer than %d bytes", MaxLineBytes))
	}
	data := bytes.TrimSpace(l.data)
	if !json.Valid(data) {
		return nil, errorLine(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	}
	if data[0] != '{' {
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, batchRefused)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	id := validID(env.ID)
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return nil, errorLine(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if len(env.ID) > 0 && id == nil && !bytes.Equal(env.ID, []byte("null")) {
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or a number")
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, errorLine(id, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return msg, nil // a response to one of our calls
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if req.Method == "initialize" {
		c.initialized = true
	}
	if req.IsCall() {
		if !c.initialized && !allowedBeforeInit(req.Method, env.Params) {
			return nil, errorLine(id, CodeNotInitialized,
				fmt.Sprintf("server not initialized: send initialize before %q", req.Method))
		}
		c.inflight[req.ID.Raw()] = true
	} else if req.Method == "notifications/cancelled" {
		// A cancelled call may never be answered: stop waiting for it.
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if rid, err := jsonrpc.MakeID(p.RequestID); err == nil && rid.IsValid() {
				c.doneLocked(rid.Raw())
			}
		}
	}
	return msg, nil
}

// allowedBeforeInit: ping, discovery, and requests of the sessionless
// protocol (they carry their protocol version in _meta) need no initialize.
func allowedBeforeInit(method string, params json.RawMessage) bool {
	switch method {
	case "ping", "server/discover":
		return true
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) == nil {
		_, ok := p.Meta[mcp.MetaKeyProtocolVersion]
		return ok
	}
	return false
}

// validID returns a JSON-RPC id (string or number) as raw JSON, or nil.
func validID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	switch v.(type) {
	case string, float64:
		return raw
	}
	return nil
}

func errorLine(id json.RawMessage, code int64, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	return b
}

func (c *stdioConn) doneLocked(id any) {
	if !c.inflight[id] {
		return
	}
	delete(c.inflight, id)
	if len(c.inflight) == 0 {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		var we *jsonrpc.Error
		if resp.Error != nil && (!errors.As(resp.Error, &we) || we.Code == 0) {
			// The SDK answers some failures with code 0, which no client can
			// classify: they are internal errors.
			resp = &jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}}
		}
		msg = resp
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeRaw(data)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		c.doneLocked(resp.ID.Raw())
		c.mu.Unlock()
	}
	return err
}

func (c *stdioConn) writeRaw(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return io.ErrClosedPipe
	default:
	}
	buf := make([]byte, 0, len(data)+1)
	buf = append(append(buf, data...), '\n')
	_, err := c.w.Write(buf)
	return err
}

// Close implements mcp.Connection; it unblocks Read.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection.
func (c *stdioConn) SessionID() string { return "" }
