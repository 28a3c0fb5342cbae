package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/memory"
)

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-test","version":"1"}}}`
const initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// rawServer runs a server over StdioTransport on pipes and returns a writer
// for lines, a reader of answer lines and a channel closed when Run returns.
type rawServer struct {
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func newRawServer(t *testing.T, d Deps, limit int) *rawServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := New(d)
	done := make(chan error, 1)
	go func() {
		err := srv.Run(context.Background(), &StdioTransport{Reader: inR, Writer: outW, MaxLineBytes: limit})
		outW.Close()
		done <- err
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return &rawServer{in: inW, out: sc, done: done}
}

func (r *rawServer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

type rawAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
}

func (r *rawServer) next(t *testing.T) rawAnswer {
	t.Helper()
	got := make(chan bool, 1)
	go func() { got <- r.out.Scan() }()
	select {
	case ok := <-got:
		if !ok {
			t.Fatalf("no answer: %v", r.out.Err())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer within 20s")
	}
	var a rawAnswer
	if err := json.Unmarshal(r.out.Bytes(), &a); err != nil || a.JSONRPC != "2.0" {
		t.Fatalf("answer %q: %v", r.out.Text(), err)
	}
	return a
}

func expectError(t *testing.T, a rawAnswer, id string, code int64) {
	t.Helper()
	if a.Error == nil || a.Error.Code != code || string(a.ID) != id {
		t.Fatalf("want error %d id %s, got id %s error %+v result %s", code, id, a.ID, a.Error, a.Result)
	}
}

func memDeps(t *testing.T) Deps {
	t.Helper()
	s, err := memory.Open(filepath.Join(t.TempDir(), "memory.db"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, m := range []string{"Python is a programming language", "Go was made at Google"} {
		if _, err := s.Add(t.Context(), memory.NewMemory{Text: m, Tags: []string{"lang"}, Source: "notes"}); err != nil {
			t.Fatal(err)
		}
	}
	return Deps{Version: "test", Memory: s}
}

// TestMCPRawBadLinesKeepSession: a malformed line gets -32700 with id null,
// a message without "jsonrpc":"2.0" gets -32600, a batch and a bad id get
// -32600, and the session answers the next request every time.
func TestMCPRawBadLinesKeepSession(t *testing.T) {
	r := newRawServer(t, memDeps(t), 0)
	r.send(t, initLine)
	if a := r.next(t); a.Error != nil || string(a.ID) != "1" {
		t.Fatalf("initialize: %+v", a)
	}
	r.send(t, initializedLine)
	cases := []struct {
		line string
		id   string
		code int64
	}{
		{`{not json`, "null", -32700},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list"`, "null", -32700},
		{`{"id":6,"method":"tools/list"}`, "6", -32600},
		{`{"jsonrpc":"1.0","id":"s7","method":"tools/list"}`, `"s7"`, -32600},
		{`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, "null", -32600},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, "null", -32600},
		{`"just a string"`, "null", -32600},
		{`{"jsonrpc":"2.0","id":9,"method":"no/such/method"}`, "9", -32601},
	}
	for i, c := range cases {
		r.send(t, c.line)
		expectError(t, r.next(t), c.id, c.code)
		// The session goes on.
		id := 100 + i
		r.send(t, `{"jsonrpc":"2.0","id":`+itoa(id)+`,"method":"tools/list"}`)
		if a := r.next(t); a.Error != nil || string(a.ID) != itoa(id) || !bytes.Contains(a.Result, []byte(`"Search"`)) {
			t.Fatalf("after %q: %+v %s", c.line, a, a.Result)
		}
	}
	r.in.Close()
	if err := <-r.done; err != nil && err != io.EOF {
		t.Fatalf("run: %v", err)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestMCPRawRequestBeforeInitialize gets -32600, not the SDK's code 0, and
// initialize still works afterwards; ping needs no initialize.
func TestMCPRawRequestBeforeInitialize(t *testing.T) {
	r := newRawServer(t, memDeps(t), 0)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	a := r.next(t)
	expectError(t, a, "1", CodeNotInitialized)
	if !strings.Contains(a.Error.Message, "initialize") {
		t.Fatalf("message %q", a.Error.Message)
	}
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if a := r.next(t); a.Error != nil {
		t.Fatalf("ping: %+v", a)
	}
	r.send(t, strings.Replace(initLine, `"id":1`, `"id":3`, 1))
	if a := r.next(t); a.Error != nil || string(a.ID) != "3" {
		t.Fatalf("initialize: %+v", a)
	}
}

// TestMCPRawOverlongLine: a line over the cap is answered -32600 and
// skipped whole; the next line is served.
func TestMCPRawOverlongLine(t *testing.T) {
	r := newRawServer(t, memDeps(t), 1024)
	r.send(t, initLine)
	r.next(t)
	r.send(t, initializedLine)
	long := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"` +
		strings.Repeat("x", 5000) + `"}}}`
	r.send(t, long)
	a := r.next(t)
	expectError(t, a, "null", -32600)
	if !strings.Contains(a.Error.Message, "longer than") {
		t.Fatalf("message %q", a.Error.Message)
	}
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if a := r.next(t); a.Error != nil || string(a.ID) != "3" {
		t.Fatalf("after long line: %+v", a)
	}
}

// TestMCPRawDefaultCapIsDocumented pins the documented 4 MiB cap.
func TestMCPRawDefaultCapIsDocumented(t *testing.T) {
	if MaxLineBytes != 4<<20 {
		t.Fatal("README documents a 4 MiB line cap")
	}
}

// TestMCPRawOneShotPipe: initialize, initialized, tools/call then EOF at once,
// twenty times: every answer arrives before the server exits.
func TestMCPRawOneShotPipe(t *testing.T) {
	d := memDeps(t)
	for i := range 20 {
		var out bytes.Buffer
		in := strings.NewReader(initLine + "\n" + initializedLine + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"python"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Search","arguments":{"pattern":"x","path":"/nonexistent-vigil"}}}` + "\n")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := New(d).Run(ctx, &StdioTransport{Reader: in, Writer: &lockedBuffer{b: &out}})
		cancel()
		if err != nil && err != io.EOF {
			t.Fatalf("run %d: %v", i, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 {
			t.Fatalf("run %d: %d answers:\n%s", i, len(lines), out.String())
		}
		if !strings.Contains(out.String(), `"id":2,"result"`) || !strings.Contains(out.String(), "Python is a programming language") ||
			!strings.Contains(out.String(), `"id":3,"result"`) {
			t.Fatalf("run %d:\n%s", i, out.String())
		}
	}
}

// lockedBuffer is written by the transport (which serialises its writes)
// and read by the test after Run returns; the lock keeps that explicit.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestMCPRawGoClientOverStdioTransport: the SDK's own client works through
// the wrapper unchanged.
func TestMCPRawGoClientOverStdioTransport(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go New(memDeps(t)).Run(t.Context(), &StdioTransport{Reader: inR, Writer: outW})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-client", Version: "1"}, nil).
		Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "Go"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
}
