package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// fixture is a server over a real queue (settable clock), memory store,
// audit log and a small tree to search.
type fixture struct {
	env  *approvaltest.Env
	deps Deps
	srv  *mcp.Server
	tree string

	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := approvaltest.New(t)
	scopes, err := scope.WriteDemo(filepath.Join(env.Dir, "scopes"))
	if err != nil {
		t.Fatal(err)
	}
	env.Scopes = scopes
	env.Queue = env.Open()
	tree := filepath.Join(env.Dir, "tree")
	os.MkdirAll(tree, 0o755)
	os.WriteFile(filepath.Join(tree, "a.txt"), []byte("hello vigil\nsecond line\n"), 0o644)
	os.WriteFile(filepath.Join(tree, "b.go"), []byte("package b // vigil\n"), 0o644)
	d := memDeps(t)
	d.SearchOptions = search.DefaultOptions(tree)
	d.Queue, d.Audit, d.Now, d.Poll = env.Queue, env.Audit, env.Clock.Now, 20*time.Millisecond
	return &fixture{env: env, deps: d, srv: New(d), tree: tree}
}

// connect opens a go-sdk client session over "stdio" (StdioTransport on
// pipes) or "http" (Streamable HTTP).
func (f *fixture) connect(t *testing.T, kind string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			f.mu.Lock()
			f.progress = append(f.progress, r.Params)
			f.mu.Unlock()
		}})
	var tr mcp.Transport
	switch kind {
	case "stdio":
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		go func() { f.srv.Run(ctx, &StdioTransport{Reader: inR, Writer: outW}); outW.Close() }()
		t.Cleanup(func() { inW.Close(); cancel() })
		tr = &mcp.IOTransport{Reader: outR, Writer: inW}
	case "http":
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, nil))
		t.Cleanup(hs.Close)
		tr = &mcp.StreamableClientTransport{Endpoint: hs.URL}
	}
	cs, err := client.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &sc)
	}
	return res, sc
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func errKind(sc map[string]any) string {
	e, _ := sc["error"].(map[string]any)
	if k, ok := e["kind"].(string); ok {
		return k
	}
	c, _ := e["code"].(string)
	return c
}

// leaseOf splits a manifest into the tool arguments of a task tool.
func leaseOf(t *testing.T, raw []byte) (taskID, lease string) {
	var m struct {
		TaskID string `json:"task_id"`
		Lease  string `json:"lease"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.TaskID, m.Lease
}

var transports = []string{"stdio", "http"}

func TestMCPToolsListAndAnnotations(t *testing.T) {
	f := newFixture(t)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			cs := f.connect(t, kind)
			res, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			ro := map[string]bool{}
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				ro[tl.Name] = tl.Annotations != nil && tl.Annotations.ReadOnlyHint
			}
			want := []string{"Search", "add_memory", "delete_memory", "get_task_result", "list_memories", "media_pause",
				"media_play", "media_seek", "media_stop", "search_datasets", "search_emails", "search_files", "search_memory"}
			slices.Sort(names)
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v", names)
			}
			for n, want := range map[string]bool{"Search": true, "search_memory": true, "list_memories": true, "search_files": true,
				"get_task_result": true, "add_memory": false, "delete_memory": false, "media_play": false} {
				if ro[n] != want {
					t.Errorf("%s readOnly=%v", n, ro[n])
				}
			}
			for _, tl := range res.Tools {
				if tl.Name == "Search" {
					b, _ := json.Marshal(tl.InputSchema)
					var got, want any
					json.Unmarshal(b, &got)
					json.Unmarshal(searchSchema, &want)
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					if string(g) != string(w) {
						t.Fatalf("Search schema is not FR-LS-02a:\n%s", g)
					}
				}
			}
		})
	}
}

func TestMCPSearchTool(t *testing.T) {
	f := newFixture(t)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			cs := f.connect(t, kind)
			for _, name := range append([]string{"Search"}, SearchAliases...) {
				res, sc := call(t, cs, name, map[string]any{"pattern": "vigil", "max_results": 10})
				if res.IsError || sc["count"] != float64(2) || !strings.Contains(text(res), "a.txt") || sc["content"] != text(res) {
					t.Fatalf("%s: %v %s %v", name, res.IsError, text(res), sc)
				}
			}
			res, sc := call(t, cs, "Search", map[string]any{"pattern": "vigil", "bogus": 1})
			if !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("unknown field: %v %s", res.IsError, text(res))
			}
			res, sc = call(t, cs, "Search", map[string]any{"pattern": "  "})
			if !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("blank pattern: %s", text(res))
			}
			res, sc = call(t, cs, "Search", map[string]any{"pattern": "x", "path": "no-such-dir"})
			if !res.IsError || errKind(sc) != "ExecutionFailed" {
				t.Fatalf("missing path: %s", text(res))
			}
		})
	}
}

func TestMCPMemoryTools(t *testing.T) {
	f := newFixture(t)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			cs := f.connect(t, kind)
			res, _ := call(t, cs, "search_memory", map[string]any{"query": "python"})
			if res.IsError || !strings.Contains(text(res), "Python is a programming language") {
				t.Fatalf("search_memory: %s", text(res))
			}
			res, _ = call(t, cs, "search_memory", map[string]any{"query": "x", "limit": "2"})
			if !res.IsError || text(res) != "Error: Invalid input - limit: value is not a valid integer" {
				t.Fatalf("search_memory invalid: %s", text(res))
			}
			res, sc := call(t, cs, "add_memory", map[string]any{"text": "Zebras cross at dawn " + kind, "tags": []string{"zoo"},
				"source": "agent", "date": "2030-01-01"})
			if res.IsError || sc["text"] != "Zebras cross at dawn "+kind {
				t.Fatalf("add_memory: %s", text(res))
			}
			id := sc["id"].(float64)
			res, sc = call(t, cs, "list_memories", map[string]any{"limit": 1})
			mems, _ := sc["memories"].([]any)
			if res.IsError || len(mems) != 1 || mems[0].(map[string]any)["id"] != id || sc["next_cursor"] == nil {
				t.Fatalf("list_memories newest first: %s", text(res))
			}
			res, sc = call(t, cs, "list_memories", map[string]any{"limit": 10, "cursor": sc["next_cursor"], "filters": map[string]any{"tags": []string{"lang"}}})
			if mems, _ = sc["memories"].([]any); res.IsError || len(mems) != 2 {
				t.Fatalf("list_memories page 2 with tag filter: %s", text(res))
			}
			for _, bad := range []map[string]any{{"limit": 0}, {"cursor": "nope"}, {"filters": map[string]any{"date_from": "2025-13-01"}}, {"x": 1}} {
				if res, sc = call(t, cs, "list_memories", bad); !res.IsError || errKind(sc) != "BadArgs" {
					t.Fatalf("list_memories %v: %s", bad, text(res))
				}
			}
			if res, sc = call(t, cs, "add_memory", map[string]any{"tags": []string{"x"}}); !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("add_memory without text: %s", text(res))
			}
			if res, sc = call(t, cs, "add_memory", map[string]any{"text": "   "}); !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("add_memory blank: %s", text(res))
			}
			if res, _ = call(t, cs, "delete_memory", map[string]any{"id": id}); res.IsError {
				t.Fatalf("delete_memory: %s", text(res))
			}
			if res, sc = call(t, cs, "delete_memory", map[string]any{"id": id}); !res.IsError || errKind(sc) != "NotFound" {
				t.Fatalf("delete_memory again: %s", text(res))
			}
			if res, sc = call(t, cs, "delete_memory", map[string]any{"id": "7"}); !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("delete_memory string id: %s", text(res))
			}
		})
	}
	// Every write is in the audit log with the client's name as actor.
	b, _ := os.ReadFile(f.env.AuditPath())
	if n := strings.Count(string(b), `"actor":"mcp:go-client","event":"memory_added"`); n != 2 {
		t.Fatalf("memory_added entries: %d\n%s", n, b)
	}
	if n := strings.Count(string(b), `"actor":"mcp:go-client","event":"memory_deleted"`); n != 2 {
		t.Fatalf("memory_deleted entries: %d", n)
	}
	f.env.Events() // the chain verifies
}

func TestMCPScopedSearchTools(t *testing.T) {
	f := newFixture(t)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			cs := f.connect(t, kind)
			id, lease := leaseOf(t, f.env.Manifest("find-"+kind, "SEARCH_EMAILS", nil, time.Hour))
			a := map[string]any{"task_id": id, "lease": lease, "query": "budget", "target_scope": "archive", "max_results": 10}
			res, sc := call(t, cs, "search_emails", a)
			if res.IsError || sc["status"] != "SUCCESS" || sc["signature"] == nil {
				t.Fatalf("search_emails: %s", text(res))
			}
			again, _ := call(t, cs, "search_emails", a)
			if text(again) != text(res) {
				t.Fatalf("not idempotent:\n%s\n%s", text(res), text(again))
			}
			// The lease is for SEARCH_EMAILS: search_files under it is refused by the lease checks.
			res, sc = call(t, cs, "search_files", map[string]any{"task_id": id + "-f", "lease": lease, "query": "x", "target_scope": "docs"})
			if !res.IsError || sc["state"] != "rejected" {
				t.Fatalf("wrong lease: %s", text(res))
			}
			res, sc = call(t, cs, "search_datasets", map[string]any{"task_id": "t", "lease": "x", "query": "q", "target_scope": "s", "bogus": 1})
			if !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("unknown field: %s", text(res))
			}
		})
	}
}

func mediaArgs(t *testing.T, f *fixture, id string) map[string]any {
	_, lease := leaseOf(t, f.env.Play(id, "/music/a.mp3"))
	return map[string]any{"task_id": id, "lease": lease, "media_uri": "/music/a.mp3", "target_device": "living-room"}
}

// decideWhenPending decides the task from a second queue (as another process
// would) once it is pending and, when waiting is given, once that says the
// call is in its wait (a progress notification came).
func decideWhenPending(t *testing.T, f *fixture, id string, d approval.Decision, waiting func() bool) chan error {
	done := make(chan error, 1)
	q := f.env.Open()
	go func() {
		err := testwait.Poll(20*time.Second, func() error {
			if r, err := q.Get(id); err != nil || r.State != approval.Pending {
				return fmt.Errorf("%s is not pending (%v)", id, err)
			}
			if waiting != nil && !waiting() {
				return fmt.Errorf("the call on %s is not waiting yet", id)
			}
			return nil
		})
		if err == nil {
			_, _, err = q.Decide(context.Background(), id, d)
		}
		done <- err
	}()
	return done
}

// sawProgress is whether a progress notification came since progress was
// last emptied.
func (f *fixture) sawProgress() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.progress) > 0
}

func TestMCPMediaWaitsForDecision(t *testing.T) {
	f := newFixture(t)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			cs := f.connect(t, kind)
			// Approved while the call waits; progress notifications arrive.
			id := "play-ok-" + kind
			f.mu.Lock()
			f.progress = nil
			f.mu.Unlock()
			dec := decideWhenPending(t, f, id, approval.Decision{Approve: true, By: "operator:test", Via: "cli"}, f.sawProgress)
			params := &mcp.CallToolParams{Name: "media_play", Arguments: mediaArgs(t, f, id)}
			params.SetProgressToken("tok-" + kind)
			res, err := cs.CallTool(t.Context(), params)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-dec; err != nil {
				t.Fatal(err)
			}
			var sc map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &sc)
			if res.IsError || sc["status"] != "SUCCESS" || sc["signature"] == nil {
				t.Fatalf("approved: %s", text(res))
			}
			f.mu.Lock()
			np := len(f.progress)
			var msg string
			if np > 0 {
				msg = f.progress[0].Message
			}
			f.mu.Unlock()
			if np == 0 || !strings.Contains(msg, "left") {
				t.Fatalf("progress notifications: %d %q", np, msg)
			}
			r, _ := f.env.Queue.Get(id)
			if r.Source != "mcp:go-client" {
				t.Fatalf("source %q", r.Source)
			}
			// A retry with the same task_id and request returns the result, no second task.
			again, sc2 := call(t, cs, "media_play", mediaArgs(t, f, id))
			if again.IsError || sc2["signature"] == nil || sc2["executed_at"] != sc["executed_at"] {
				t.Fatalf("retry: %s", text(again))
			}

			// Denied while the call waits: isError with the seed's code and the reason.
			id = "play-no-" + kind
			dec = decideWhenPending(t, f, id, approval.Decision{By: "operator:test", Reason: "too loud", Via: "cli"}, nil)
			res, sc = call(t, cs, "media_play", mediaArgs(t, f, id))
			if err := <-dec; err != nil {
				t.Fatal(err)
			}
			e, _ := sc["error"].(map[string]any)
			if !res.IsError || e["code"] != "APPROVAL_DENIED" || !strings.Contains(e["message"].(string), "too loud") {
				t.Fatalf("denied: %s", text(res))
			}

			// Nobody decides: pending after wait_seconds, then get_task_result.
			id = "play-wait-" + kind
			a := mediaArgs(t, f, id)
			a["wait_seconds"] = 1
			stop := make(chan struct{})
			go func() { // the fixture's clock only moves when told
				for {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
						f.env.Clock.Advance(100 * time.Millisecond)
					}
				}
			}()
			res, sc = call(t, cs, "media_play", a)
			close(stop)
			if res.IsError || sc["state"] != "pending" || sc["task_id"] != id || sc["expires_at"] == nil {
				t.Fatalf("pending: %s", text(res))
			}
			// The same call again creates no second task: still pending, same deadline.
			a["wait_seconds"] = 0
			res2, sc2 := call(t, cs, "media_play", a)
			if sc2["state"] != "pending" || sc2["expires_at"] != sc["expires_at"] || res2.IsError {
				t.Fatalf("retry pending: %s", text(res2))
			}
			pend, _ := f.env.Queue.Pending()
			n := 0
			for _, p := range pend {
				if p.TaskID == id {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%d tasks for %s", n, id)
			}
			dec = decideWhenPending(t, f, id, approval.Decision{Approve: true, By: "operator:test", Via: "cli"}, nil)
			res, sc = call(t, cs, "get_task_result", map[string]any{"task_id": id, "wait_seconds": 20})
			if err := <-dec; err != nil {
				t.Fatal(err)
			}
			if res.IsError || sc["status"] != "SUCCESS" {
				t.Fatalf("get_task_result: %s", text(res))
			}
			res, sc = call(t, cs, "get_task_result", map[string]any{"task_id": "no-such-task", "wait_seconds": 0})
			if !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("unknown task: %s", text(res))
			}
			res, sc = call(t, cs, "media_play", map[string]any{"task_id": "x", "lease": "not-a-jwt", "media_uri": "/a.mp3", "target_device": "living-room"})
			if !res.IsError || sc["state"] != "rejected" {
				t.Fatalf("bad lease: %s", text(res))
			}
			res, sc = call(t, cs, "media_seek", map[string]any{"task_id": "x", "lease": "l", "target_device": "d", "position_seconds": 1, "wait_seconds": -1})
			if !res.IsError || errKind(sc) != "BadArgs" {
				t.Fatalf("bad wait: %s", text(res))
			}
		})
	}
}

// TestMCPMediaExpiresWhileWaiting: a wait longer than the task's deadline
// ends with the expiry, never a pending answer past it.
func TestMCPMediaExpiresWhileWaiting(t *testing.T) {
	f := newFixture(t)
	cs := f.connect(t, "stdio")
	id := "play-expire"
	a := mediaArgs(t, f, id)
	a["wait_seconds"] = 600
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				f.env.Clock.Advance(30 * time.Second) // the 10-minute approval timeout passes in a few seconds
			}
		}
	}()
	res, sc := call(t, cs, "media_play", a)
	e, _ := sc["error"].(map[string]any)
	if !res.IsError || e["code"] != "APPROVAL_TIMEOUT" {
		t.Fatalf("expired: %s", text(res))
	}
}
