package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/internal/testwait"
)

const (
	alphaToken  = "alpha-token-0123456789abcdef"
	betaToken   = "beta-token-0123456789abcdef"
	sharedToken = "shared-token-0123456789abcdef"
)

// agentsServer serves f's tools over Streamable HTTP behind Authenticate
// with two agents' tokens and the shared one.
func agentsServer(t *testing.T, f *fixture) string {
	t.Helper()
	c, err := NewCallers([]Token{{Value: sharedToken, From: "VIGIL_MCP_TOKEN"},
		{Value: alphaToken, Agent: "alpha", From: "agent alpha"}, {Value: betaToken, Agent: "beta", From: "agent beta"}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(c.Authenticate(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, nil)))
	t.Cleanup(hs.Close)
	return hs.URL
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs opens a session with token, the client reporting itself as name.
func connectAs(t *testing.T, url, token, name string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// leaseFor issues a MEDIA_PLAY lease for id whose sub is sub.
func leaseFor(t *testing.T, f *fixture, id, sub string) map[string]any {
	t.Helper()
	tok, err := lease.Issue(f.env.Issuer, lease.IssueOptions{Subject: sub, TaskID: id, Caps: []string{"MEDIA_PLAY"},
		TTL: 30 * time.Minute, Now: f.env.Clock.Now, JTI: "jti-" + id})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"task_id": id, "lease": tok, "media_uri": "/music/a.mp3", "target_device": "living-room",
		"wait_seconds": 0}
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var m map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, text(res))
	}
	return m
}

// An agent's token is its identity: a lease naming another agent is
// INVALID_LEASE and no task is made, whatever name the client reports
// (alpha's client calling itself "beta" changes nothing); its own lease
// makes a pending task; another agent's task reads as none; the shared
// token checks no identity, as before.
func TestAgentTokenIsTheIdentity(t *testing.T) {
	f := newFixture(t)
	url := agentsServer(t, f)
	alpha := connectAs(t, url, alphaToken, "beta")

	res, err := alpha.CallTool(t.Context(), &mcp.CallToolParams{Name: "media_play", Arguments: leaseFor(t, f, "as-beta", "agent:beta")})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	e, _ := sc["error"].(map[string]any)
	if !res.IsError || sc["state"] != "rejected" || e["code"] != "INVALID_LEASE" || !strings.Contains(e["message"].(string), `"agent:alpha"`) {
		t.Fatalf("alpha with beta's lease: %s", text(res))
	}
	if _, err := f.env.Queue.Get("as-beta"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("a task was made: %v", err)
	}
	entry := lastEntry(t, f)
	if entry["event"] != "rejected" || entry["actor"] != "agent:alpha" || entry["error_code"] != "INVALID_LEASE" || entry["task_id"] != "as-beta" {
		t.Fatalf("audit: %v", entry)
	}
	// the bare name is not alpha's sub either
	res, _ = alpha.CallTool(t.Context(), &mcp.CallToolParams{Name: "media_play", Arguments: leaseFor(t, f, "bare", "alpha")})
	if !strings.Contains(text(res), "INVALID_LEASE") {
		t.Fatalf("bare sub: %s", text(res))
	}

	res, _ = alpha.CallTool(t.Context(), &mcp.CallToolParams{Name: "media_play", Arguments: leaseFor(t, f, "as-alpha", "agent:alpha")})
	if sc := structured(t, res); res.IsError || sc["state"] != "pending" {
		t.Fatalf("alpha with its own lease: %s", text(res))
	}
	if rec, err := f.env.Queue.Get("as-alpha"); err != nil || rec.Agent != "agent:alpha" || rec.State != approval.Pending {
		t.Fatalf("alpha's task: %+v %v", rec, err)
	}

	beta := connectAs(t, url, betaToken, "alpha")
	res, _ = beta.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_task_result", Arguments: map[string]any{"task_id": "as-alpha", "wait_seconds": 0}})
	if !res.IsError || !strings.Contains(text(res), `no task \"as-alpha\"`) {
		t.Fatalf("beta reads alpha's task: %s", text(res))
	}
	// beta with alpha's lease and task_id: refused (the lease names alpha),
	// and alpha's trail is left alone
	res, _ = beta.CallTool(t.Context(), &mcp.CallToolParams{Name: "media_play", Arguments: leaseFor(t, f, "as-alpha", "agent:alpha")})
	if !strings.Contains(text(res), "INVALID_LEASE") {
		t.Fatalf("beta with alpha's lease: %s", text(res))
	}
	if entry := lastEntry(t, f); entry["task_id"] != "" || !strings.Contains(string(mustJSON(entry["details"])), `"reused_task_id":"as-alpha"`) {
		t.Fatalf("a refusal entered alpha's task trail: %v", entry)
	}

	shared := connectAs(t, url, sharedToken, "anyone")
	res, _ = shared.CallTool(t.Context(), &mcp.CallToolParams{Name: "media_play", Arguments: leaseFor(t, f, "shared", "agent:beta")})
	if sc := structured(t, res); res.IsError || sc["state"] != "pending" {
		t.Fatalf("the shared token: %s", text(res))
	}
	res, _ = shared.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_task_result", Arguments: map[string]any{"task_id": "as-alpha", "wait_seconds": 0}})
	if res.IsError {
		t.Fatalf("the shared token reads any task: %s", text(res))
	}

	// a memory write is recorded as the token's agent, the client's name a label
	if res, _ := alpha.CallTool(t.Context(), &mcp.CallToolParams{Name: "add_memory", Arguments: map[string]any{"text": "x"}}); res.IsError {
		t.Fatal(text(res))
	}
	if entry := lastEntry(t, f); entry["actor"] != "agent:alpha" || !strings.Contains(string(mustJSON(entry["details"])), `"client":"beta"`) {
		t.Fatalf("memory write: %v", entry)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// lastEntry is the audit log's last entry.
func lastEntry(t *testing.T, f *fixture) map[string]any {
	t.Helper()
	b, err := os.ReadFile(f.env.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A token not in the table is 401 and the connection closes; a session
// opened with one agent's token is refused with another's (the SDK binds
// sessions to the token info's user).
func TestAgentTokenRefusals(t *testing.T) {
	f := newFixture(t)
	url := agentsServer(t, f)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(auth, session, body string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", auth)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, a := range []string{"Bearer unknown-token-0123456789", "Bearer " + alphaToken + "x", "bearer " + alphaToken, "Bearer  " + alphaToken, ""} {
		if resp := post(a, "", init); resp.StatusCode != http.StatusUnauthorized || !resp.Close {
			t.Errorf("%q: %d %v", a, resp.StatusCode, resp.Header)
		}
	}
	resp := post("Bearer "+alphaToken, "", init)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("alpha's initialize: %d", resp.StatusCode)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if resp := post("Bearer "+betaToken, sid, list); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("beta on alpha's session: %d", resp.StatusCode)
	}
	if resp := post("Bearer "+sharedToken, sid, list); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the shared token on alpha's session: %d", resp.StatusCode)
	}
}

func TestNewCallersRefuses(t *testing.T) {
	for _, c := range []struct {
		tokens []Token
		want   string
	}{
		{nil, "no bearer token"},
		{[]Token{{Value: "same-token-0123456789", Agent: "a", From: "agent a"}, {Value: "same-token-0123456789", Agent: "b", From: "agent b"}}, "agent b: the same token as agent a"},
		{[]Token{{Value: "same-token-0123456789", From: "VIGIL_MCP_TOKEN"}, {Value: "same-token-0123456789", Agent: "b", From: "agent b"}}, "agent b: the same token as VIGIL_MCP_TOKEN"},
		{[]Token{{Value: "two words-0123456789", Agent: "a", From: "agent a"}}, "agent a: the token holds a space"},
	} {
		if _, err := NewCallers(c.tokens); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v", c.want, err)
		}
	}
	c, err := NewCallers([]Token{{Value: "t1-0123456789abcdef"}, {Value: "t2-0123456789abcdef", Agent: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]string{"t1-0123456789abcdef": "", "t2-0123456789abcdef": "b"} {
		if a, ok := c.lookup(tok); !ok || a != want {
			t.Errorf("%s: %q %v", tok, a, ok)
		}
	}
	if _, ok := c.lookup("t3-0123456789abcdef"); ok {
		t.Error("an unknown token was found")
	}
}

// Closing Deps.Stop answers a waiting call at once with pending, so a
// server stopping answers its calls instead of cutting them.
func TestStopEndsWaits(t *testing.T) {
	f := newFixture(t)
	stop := make(chan struct{})
	f.deps.Stop = stop
	f.srv = New(f.deps)
	cs := f.connect(t, "http")
	args := mediaArgs(t, f, "stopped")
	args["wait_seconds"] = 600
	go func() {
		// the fixture's clock stands still: only Stop ends this wait
		testwait.Poll(20*time.Second, func() error {
			if r, err := f.env.Queue.Get("stopped"); err != nil || r.State != approval.Pending {
				return fmt.Errorf("not pending: %v", err)
			}
			return nil
		})
		close(stop)
	}()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "media_play", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if sc := structured(t, res); res.IsError || sc["state"] != "pending" || sc["expires_at"] == nil {
		t.Fatalf("a stopped wait: %s", text(res))
	}
}

// The scoped searches run at once under a lease: another agent's lease is
// refused the same way, the lease's own agent gets its signed result.
func TestAgentTokenScopedSearch(t *testing.T) {
	f := newFixture(t)
	c, err := NewCallers([]Token{{Value: alphaToken, Agent: "planner"}, {Value: betaToken, Agent: "other"}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(c.Authenticate(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, nil)))
	t.Cleanup(hs.Close)
	id, lease := leaseOf(t, f.env.Manifest("find", "SEARCH_EMAILS", nil, time.Hour)) // sub agent:planner
	a := map[string]any{"task_id": id, "lease": lease, "query": "budget", "target_scope": "archive", "max_results": 10}
	res, sc := call(t, connectAs(t, hs.URL, betaToken, "planner"), "search_emails", a)
	if e, _ := sc["error"].(map[string]any); !res.IsError || e["code"] != "INVALID_LEASE" {
		t.Fatalf("another agent's lease: %s", text(res))
	}
	res, sc = call(t, connectAs(t, hs.URL, alphaToken, "x"), "search_emails", a)
	if res.IsError || sc["status"] != "SUCCESS" {
		t.Fatalf("its own lease: %s", text(res))
	}
}

// BenchmarkCallersLookup: what finding a request's caller costs with 100
// agents' tokens (every digest compared, whatever matches).
func BenchmarkCallersLookup(b *testing.B) {
	var tokens []Token
	for i := range 100 {
		tokens = append(tokens, Token{Value: fmt.Sprintf("token-%03d-0123456789abcdef", i), Agent: fmt.Sprintf("a%d", i)})
	}
	c, err := NewCallers(tokens)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok := c.lookup("token-050-0123456789abcdef"); !ok {
			b.Fatal("not found")
		}
	}
}
