package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/mcpserver"
	"github.com/vigil-dev/vigil/internal/httpguard"
)

// mcpStopTimeout bounds a graceful stop of the HTTP endpoint: the waits
// answer at once, so this is for calls still running (a search, a device
// action) and answers still being written.
const mcpStopTimeout = 10 * time.Second

// mcpHTTP is the Streamable HTTP endpoint of `vigil mcp --http` and `vigil
// serve --mcp`: a request must name the listening address (Host), come from
// no web page but an allowed one (Origin), carry a known token, and hold one
// JSON-RPC message, not a batch (as on stdio).
type mcpHTTP struct {
	hs     *http.Server
	srv    *mcp.Server
	ln     net.Listener
	stop   chan struct{} // closed: every wait for a person answers now
	served chan error    // Serve's end

	mu    sync.Mutex
	posts int           // POST requests in flight: each carries calls or their answers
	idle  chan struct{} // closed when posts drops to 0 (made by Stop)
	once  sync.Once
	err   error
}

// startMCPHTTP listens at addr and serves d's tools there until Stop.
func startMCPHTTP(d mcpserver.Deps, addr string, callers *mcpserver.Callers, origins []string, log *slog.Logger) (*mcpHTTP, error) {
	m := &mcpHTTP{stop: make(chan struct{}), served: make(chan error, 1)}
	d.Stop = m.stop
	m.srv = mcpserver.New(d)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.srv }, &mcp.StreamableHTTPOptions{
		Logger: log,
		// A client that vanished without DELETE frees its session after an
		// hour idle (a waiting call keeps it busy, and waits are <= 10 min).
		SessionTimeout: time.Hour,
		// A media call waits minutes for the person: its SSE events carry
		// ids (after a priming event) and are kept, so a client whose
		// stream dropped resumes with Last-Event-ID instead of losing the
		// answer. Bounded: the oldest events go first.
		EventStore: mcpEventStore(),
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m.ln = ln
	api := callers.Authenticate(m.counted(mcpserver.RefuseBatches(mcpserver.SSERetry(mcpSSERetry, h))))
	m.hs = httpguard.Server(httpguard.Host(httpguard.Origin(origins, api), addr, ln.Addr().String()))
	go func() { m.served <- m.hs.Serve(ln) }()
	return m, nil
}

// Addr is the address listened on.
func (m *mcpHTTP) Addr() net.Addr { return m.ln.Addr() }

// counted keeps the number of POSTs in flight: a POST's response ends once
// the answers to its calls are written, so none in flight means every call
// was answered.
func (m *mcpHTTP) counted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		m.mu.Lock()
		m.posts++
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			if m.posts--; m.posts == 0 && m.idle != nil {
				close(m.idle)
				m.idle = nil
			}
			m.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// drained is closed once no POST is in flight.
func (m *mcpHTTP) drained() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := make(chan struct{})
	if m.posts == 0 {
		close(ch)
	} else {
		m.idle = ch
	}
	return ch
}

// Stop ends the endpoint gracefully within timeout: no new connection is
// taken, a call waiting for the person answers with its task's state at
// once (pending and expires_at: the agent asks get_task_result later), the
// calls in flight are answered, then the sessions close (which ends the
// clients' listening streams). Safe to call more than once.
func (m *mcpHTTP) Stop(timeout time.Duration) error {
	m.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		close(m.stop)
		shut := make(chan error, 1)
		go func() { shut <- m.hs.Shutdown(ctx) }()
		select {
		case <-m.drained():
		case <-ctx.Done():
		}
		for ss := range m.srv.Sessions() {
			_ = ss.Close()
		}
		if err := <-shut; err != nil {
			_ = m.hs.Close()
			m.err = fmt.Errorf("MCP endpoint: stopped after %s with requests still open: %w", timeout, err)
		}
		if err := <-m.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.err = err
		}
	})
	return m.err
}
