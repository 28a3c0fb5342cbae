package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// mcpHome is a home with keys, the sim device, the home as search sandbox
// and a built vigil binary.
func mcpHome(t *testing.T) *crashHome {
	t.Helper()
	h := newCrashHome(t, testbin.Vigil(t))
	// Search's sandbox is the home, wherever the server process starts.
	f := filepath.Join(h.home, "config.toml")
	cfg, _ := os.ReadFile(f)
	if err := os.WriteFile(f, append(cfg, []byte("\n[sandbox]\nroot = \".\"\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// mcpToolResult calls a tool and decodes structuredContent.
func mcpCall(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	var sc map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &sc)
	}
	return res, sc
}

func mcpText(res *mcp.CallToolResult) string {
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// decideByProcess waits until the task's record exists (the Approvals pane
// watches that folder), checks it appeared soon after start (a zero start:
// no check) and that `vigil pending` names the MCP client, waits until
// waiting says the call is in its wait (its first progress notification
// came), then decides it with a separate `vigil approve|deny` process.
func decideByProcess(t *testing.T, h *crashHome, id, client string, start time.Time, waiting func() bool, args ...string) chan string {
	out := make(chan string, 1)
	record := filepath.Join(h.home, "tasks", id, "record.json")
	go func() {
		if testwait.Poll(60*time.Second, func() error { _, err := os.Stat(record); return err }) != nil {
			out <- "never pending"
			return
		}
		// The bar is a second; the margin is for a loaded CI machine.
		if d := time.Since(start); !start.IsZero() && d > 2*time.Second {
			out <- "pending only after " + d.String()
			return
		}
		b, err := h.child("", "pending", "--json").Output()
		if err != nil || !strings.Contains(string(b), `"`+id+`"`) || !strings.Contains(string(b), "mcp:"+client) {
			out <- fmt.Sprintf("pending does not show the task with the client's name (%v): %s", err, b)
			return
		}
		if testwait.Poll(60*time.Second, func() error {
			if !waiting() {
				return errors.New("no progress")
			}
			return nil
		}) != nil {
			out <- "the call never waited with progress"
			return
		}
		if b, err := h.child("", append(args, id)...).CombinedOutput(); err != nil {
			out <- "decide: " + err.Error() + " " + string(b)
			return
		}
		out <- ""
	}()
	return out
}

// checkMediaFlow drives media_play approved and denied by real `vigil`
// processes while the MCP call waits, with progress notifications.
func checkMediaFlow(t *testing.T, h *crashHome, cs *mcp.ClientSession, progress func() int, tag string) {
	lease := func(id string) string {
		return strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:mcp", "--task-id", id, "--cap", "MEDIA_PLAY", "--ttl", "1h"))
	}
	for _, c := range []struct {
		name   string
		args   []string
		status string
		code   string
	}{
		{"ok", []string{"approve", "--yes"}, "SUCCESS", ""},
		{"no", []string{"deny", "--reason", "not now"}, "FAILURE", "APPROVAL_DENIED"},
	} {
		id := "mcp-" + tag + "-" + c.name
		params := &mcp.CallToolParams{Name: "media_play", Arguments: map[string]any{"task_id": id, "lease": lease(id),
			"media_uri": "/media/song.mp3", "target_device": "living-room", "wait_seconds": 30}}
		params.SetProgressToken(id)
		before := progress()
		dec := decideByProcess(t, h, id, "test-agent", time.Now(), func() bool { return progress() > before }, c.args...)
		res, sc := mcpCall(t, cs, params)
		if msg := <-dec; msg != "" {
			t.Fatal(msg)
		}
		e, _ := sc["error"].(map[string]any)
		if sc["status"] != c.status || res.IsError != (c.code != "") || (c.code != "" && e["code"] != c.code) {
			t.Fatalf("%s: %s", id, mcpText(res))
		}
		if c.code != "" && !strings.Contains(e["message"].(string), "not now") {
			t.Fatalf("the person's reason is missing: %s", mcpText(res))
		}
		if progress() == before {
			t.Fatalf("%s: no progress notifications", id)
		}
		// the signed result verifies with the operator's key
		f := filepath.Join(h.home, id+".result.json")
		b, _ := json.Marshal(res.StructuredContent)
		os.WriteFile(f, b, 0o600)
		h.must(0, "result", "verify", f)
	}
}

func newProgressClient(name string) (*mcp.Client, func() int) {
	var mu sync.Mutex
	n := 0
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			n++
			mu.Unlock()
		}})
	return c, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestMcpStdioProcess: `vigil mcp` as a real process with the go-sdk client:
// memory tools, Search, a media call decided by `vigil approve`/`vigil deny`.
func TestMcpStdioProcess(t *testing.T) {
	testbin.FullRunOnly(t, "vigil mcp and vigil approve processes, waiting for a decision")
	h := mcpHome(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, "--home", h.home, "mcp")
	cmd.Dir = h.home
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client, progress := newProgressClient("test-agent")
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	res, _ := mcpCall(t, cs, &mcp.CallToolParams{Name: "add_memory", Arguments: map[string]any{"text": "the boiler code is 4471"}})
	if res.IsError {
		t.Fatal(mcpText(res))
	}
	res, _ = mcpCall(t, cs, &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "boiler"}})
	if res.IsError || !strings.Contains(mcpText(res), "boiler code") {
		t.Fatal(mcpText(res))
	}
	os.WriteFile(filepath.Join(h.home, "notes.txt"), []byte("needle here\n"), 0o644)
	res, sc := mcpCall(t, cs, &mcp.CallToolParams{Name: "ripgrep", Arguments: map[string]any{"pattern": "needle", "path": h.home}})
	if res.IsError || sc["count"] != float64(1) {
		t.Fatal(mcpText(res))
	}
	checkMediaFlow(t, h, cs, progress, "stdio")
	trail := h.must(0, "audit", "show", "--json")
	if !strings.Contains(trail, `mcp:test-agent`) || !strings.Contains(trail, "memory_added") {
		t.Fatalf("audit: %s", trail)
	}
}

var listeningRE = regexp.MustCompile(`"addr":"([^"]+)"`)

// startHTTP runs `vigil mcp --http` and returns its base URL.
func startHTTP(t *testing.T, h *crashHome, env []string, args ...string) (string, *strings.Builder) {
	t.Helper()
	cmd := h.child("", append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait(); pw.Close() })
	var log strings.Builder
	var mu sync.Mutex
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil && strings.Contains(sc.Text(), "mcp_http_listening") {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a, &log
	case <-time.After(30 * time.Second):
		t.Fatal("no listening line")
	}
	return "", nil
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMcpHTTPProcess: Streamable HTTP with the token rules, two clients at
// once, and the waiting media call decided by other processes.
func TestMcpHTTPProcess(t *testing.T) {
	testbin.FullRunOnly(t, "vigil mcp over HTTP and vigil approve processes, waiting for decisions")
	h := mcpHome(t)
	const token = "s3cret-token-for-tests"
	url, log := startHTTP(t, h, []string{"VIGIL_MCP_TOKEN=" + token})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, auth := range []string{"", "Bearer wrong", "Basic " + token, "Bearer " + token + "x", "bearer " + token} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("auth %q: %d", auth, resp.StatusCode)
		}
	}
	connect := func(name, path string) (*mcp.ClientSession, func() int) {
		client, progress := newProgressClient(name)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + path,
			HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, progress
	}
	cs, progress := connect("test-agent", "")
	other, _ := connect("other-agent", "/mcp") // the README's URL
	res, _ := mcpCall(t, other, &mcp.CallToolParams{Name: "list_memories", Arguments: map[string]any{}})
	if res.IsError {
		t.Fatal(mcpText(res))
	}
	checkMediaFlow(t, h, cs, progress, "http")
	if strings.Contains(log.String(), token) {
		t.Fatal("the token reached the log")
	}
}

// TestMcpHTTPRefusals: no token, or a non-loopback address without
// --allow-remote, exit 2 before listening; [mcp] token_file is read.
func TestMcpHTTPRefusals(t *testing.T) {
	h := newCLIHome(t)
	if _, errs, code := runReal(t, h.home, "mcp", "--http", "127.0.0.1:0"); code != 2 || !strings.Contains(errs, "VIGIL_MCP_TOKEN") {
		t.Fatalf("no token: %d %s", code, errs)
	}
	if _, errs, code := runReal(t, h.home, "mcp", "--http", "0.0.0.0:0"); code != 2 || !strings.Contains(errs, "--allow-remote") {
		t.Fatalf("remote: %d %s", code, errs)
	}
	cfg, _ := os.ReadFile(filepath.Join(h.home, "config.toml"))
	os.WriteFile(filepath.Join(h.home, "config.toml"), append(cfg, []byte("\n[mcp]\ntoken_file = \"tok.txt\"\n")...), 0o600)
	os.WriteFile(filepath.Join(h.home, "tok.txt"), []byte("from-file-0123456789\n"), 0o600)
	app := NewApp()
	app.HomeFlag, app.Getenv, app.Cwd = h.home, func(string) string { return "" }, h.home
	if tok, err := mcpToken(app); err != nil || tok != "from-file-0123456789" {
		t.Fatalf("token_file: %q %v", tok, err)
	}
	app = NewApp()
	app.HomeFlag, app.Cwd = h.home, h.home
	app.Getenv = func(k string) string {
		if k == "VIGIL_MCP_TOKEN" {
			return "from-env-0123456789"
		}
		return ""
	}
	if tok, err := mcpToken(app); err != nil || tok != "from-env-0123456789" {
		t.Fatalf("env wins: %q %v", tok, err)
	}
	for addr, ok := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "0.0.0.0:1": false, "192.168.1.2:1": false, ":1": false} {
		if err := checkListenAddr(addr, false); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// TestMcpOneShotPipeProcess: the whole session on stdin at once, then EOF:
// the real binary answers everything before it exits, and neither a malformed
// line nor a 5 MiB line (over the 4 MiB cap) ends it.
func TestMcpOneShotPipeProcess(t *testing.T) {
	h := mcpHome(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{oops
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_memories","arguments":{}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"` + strings.Repeat("x", 5<<20) + `"}}}
`
	for i := range 5 {
		cmd := h.child("", "mcp")
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		// answers may come in any order (calls run concurrently)
		if len(lines) != 4 || !strings.Contains(string(out), `"id":null,"error":{"code":-32700`) ||
			!strings.Contains(string(out), `"id":null,"error":{"code":-32600,"message":"message longer than 4194304 bytes"}`) ||
			!strings.Contains(string(out), `"id":1,"result"`) || !strings.Contains(string(out), `"id":2,"result"`) {
			t.Fatalf("run %d:\n%s", i, out)
		}
	}
}
