package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

const (
	alphaTok = "alpha-0123456789abcdef0123"
	betaTok  = "beta-0123456789abcdef01234"
)

// withAgents adds two agents to h's config: alpha's token in a file, beta's
// in VIGIL_TEST_BETA_TOKEN.
func withAgents(t *testing.T, home, alphaToken string) {
	t.Helper()
	os.MkdirAll(filepath.Join(home, "agents"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "agents", "alpha.token"), []byte(alphaToken+"\nignored second line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(home, "config.toml")
	cfg, _ := os.ReadFile(f)
	cfg = append(cfg, []byte(`
[[agents]]
name = "alpha"
token_file = "agents/alpha.token"

[[agents]]
name = "beta"
token_env = "VIGIL_TEST_BETA_TOKEN"
`)...)
	if err := os.WriteFile(f, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
}

// servedMCP is a `vigil serve --mcp` process.
type servedMCP struct {
	cmd  *exec.Cmd
	url  string
	errs *serveLogBuffer
	done chan error
}

// startServeMCP runs `vigil serve --mcp 127.0.0.1:0` with env and waits for
// its address.
func startServeMCP(t *testing.T, h *crashHome, env ...string) *servedMCP {
	t.Helper()
	c := h.child("", "serve", "--mcp", "127.0.0.1:0")
	c.Env = append(c.Env, env...)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &servedMCP{cmd: c, errs: &serveLogBuffer{}, done: make(chan error, 1)}
	c.Stderr = s.errs
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- c.Wait() }()
	t.Cleanup(func() { c.Process.Kill() })
	url := make(chan string, 1)
	go func() {
		r := bufio.NewScanner(out)
		for r.Scan() {
			if u, ok := strings.CutPrefix(r.Text(), "vigil serve: mcp on "); ok {
				url <- u
			}
		}
	}()
	select {
	case s.url = <-url:
	case err := <-s.done:
		t.Fatalf("serve exited: %v\n%s", err, s.errs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not say where it listens\n%s", s.errs.String())
	}
	return s
}

// connectMCP opens a go-sdk client session over HTTP with token, the client
// reporting itself as name.
func connectMCP(t *testing.T, url, token, name string) (*mcp.ClientSession, func() int) {
	t.Helper()
	client, progress := newProgressClient(name)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, progress
}

// playArgs are media_play's arguments for id with a lease whose sub is sub.
func playArgs(h *crashHome, id, sub string, wait int) map[string]any {
	lease := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", sub, "--task-id", id, "--cap", "MEDIA_PLAY", "--ttl", "1h"))
	return map[string]any{"task_id": id, "lease": lease, "media_uri": "/media/song.mp3", "target_device": "living-room",
		"wait_seconds": wait}
}

// TestServeMCPAgents: `vigil serve --mcp` with two agents' tokens and the
// shared one, driven by the official go-sdk client. An agent is its token:
// alpha's call with a lease for beta is INVALID_LEASE and no task, audited
// as alpha, even with its client calling itself "beta"; its own lease makes
// a pending task; beta cannot read alpha's task; an unknown token is 401.
// The shared token's media call waits and is decided by `vigil approve` /
// `vigil deny` processes. SIGTERM answers a waiting call with pending and
// serve exits 0.
func TestServeMCPAgents(t *testing.T) {
	testbin.FullRunOnly(t, "builds and runs vigil serve --mcp and vigil approve processes")
	h := mcpHome(t)
	withAgents(t, h.home, alphaTok)
	const shared = "shared-token-0123456789"
	sv := startServeMCP(t, h, "VIGIL_TEST_BETA_TOKEN="+betaTok, "VIGIL_MCP_TOKEN="+shared)

	if code, _ := postMCP(t, sv.url, "unknown-token-0123456789", guardInit, nil); code != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d", code)
	}
	alpha, alphaProgress := connectMCP(t, sv.url, alphaTok, "beta")
	beta, _ := connectMCP(t, sv.url, betaTok, "alpha")

	res, sc := mcpCall(t, alpha, &mcp.CallToolParams{Name: "media_play", Arguments: playArgs(h, "alpha-as-beta", "agent:beta", 0)})
	if e, _ := sc["error"].(map[string]any); !res.IsError || sc["state"] != "rejected" || e["code"] != "INVALID_LEASE" {
		t.Fatalf("alpha with beta's lease: %s", mcpText(res))
	}
	if _, err := os.Stat(filepath.Join(h.home, "tasks", "alpha-as-beta")); !os.IsNotExist(err) {
		t.Fatalf("a task was made: %v", err)
	}
	var trail []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(h.must(0, "audit", "show", "--json")), "\n") {
		var e map[string]any
		json.Unmarshal([]byte(l), &e)
		trail = append(trail, e)
	}
	last := trail[len(trail)-1]
	if last["event"] != "rejected" || last["actor"] != "agent:alpha" || last["error_code"] != "INVALID_LEASE" {
		t.Fatalf("the refusal's audit entry: %v", last)
	}

	res, sc = mcpCall(t, alpha, &mcp.CallToolParams{Name: "media_play", Arguments: playArgs(h, "alpha-own", "agent:alpha", 0)})
	if res.IsError || sc["state"] != "pending" {
		t.Fatalf("alpha with its own lease: %s", mcpText(res))
	}
	var pending []struct {
		TaskID string `json:"task_id"`
		Agent  string `json:"agent"`
	}
	out := h.must(0, "pending", "--json")
	json.Unmarshal([]byte(out), &pending)
	if len(pending) != 1 || pending[0].TaskID != "alpha-own" || pending[0].Agent != "agent:alpha" {
		t.Fatalf("pending: %s", out)
	}
	res, _ = mcpCall(t, beta, &mcp.CallToolParams{Name: "get_task_result", Arguments: map[string]any{"task_id": "alpha-own", "wait_seconds": 0}})
	if !res.IsError || !strings.Contains(mcpText(res), "no task") {
		t.Fatalf("beta reads alpha's task: %s", mcpText(res))
	}

	// the shared token: the whole flow, decided by other processes
	cs, progress := connectMCP(t, sv.url, shared, "test-agent")
	checkMediaFlow(t, h, cs, progress, "serve")

	// SIGTERM while alpha's call waits: it is answered pending, serve exits 0
	params := &mcp.CallToolParams{Name: "media_play", Arguments: playArgs(h, "alpha-waits", "agent:alpha", 600)}
	params.SetProgressToken("alpha-waits")
	before := alphaProgress()
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := alpha.CallTool(context.Background(), params)
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	testwait.Until(t, 30*time.Second, "alpha's call waits", func() bool { return alphaProgress() > before })
	sv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case res := <-answered:
		var sc map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &sc)
		if res == nil || res.IsError || sc["state"] != "pending" || sc["expires_at"] == nil {
			t.Fatalf("the waiting call at SIGTERM: %v", sc)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the waiting call was not answered at SIGTERM\n%s", sv.errs.String())
	}
	select {
	case err := <-sv.done:
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, sv.errs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not exit\n%s", sv.errs.String())
	}
	if strings.Contains(sv.errs.String(), alphaTok) || strings.Contains(sv.errs.String(), shared) {
		t.Fatal("a token reached the log")
	}

	// a short agent token refuses the start: exit 2, naming the agent and the rule
	withAgentToken(t, h.home, "short-token")
	c := h.child("", "serve", "--mcp", "127.0.0.1:0")
	c.Env = append(c.Env, "VIGIL_TEST_BETA_TOKEN="+betaTok)
	b, err := c.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(b), `"alpha"`) || !strings.Contains(string(b), "at least 16") {
		t.Fatalf("a short token: %v %s", err, b)
	}
}

// A waiting call's stream that drops resumes on `vigil serve --mcp` as on
// `vigil mcp --http`, with an agent's token (the session is that agent's).
func TestServeMCPResumesDroppedStream(t *testing.T) {
	testbin.FullRunOnly(t, "builds and runs a real vigil serve --mcp")
	h := mcpHome(t)
	withAgents(t, h.home, alphaTok)
	sv := startServeMCP(t, h, "VIGIL_TEST_BETA_TOKEN="+betaTok)
	checkResume(t, h, sv.url, alphaTok, "agent:alpha")
}

func withAgentToken(t *testing.T, home, tok string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "agents", "alpha.token"), []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveRefusal runs `vigil serve --mcp` in-process with env and returns
// its stderr and exit code: every refusal comes before anything opens.
func serveRefusal(t *testing.T, home string, env map[string]string, args ...string) (string, int) {
	t.Helper()
	var out, errb strings.Builder
	app := NewApp()
	app.Out, app.Err, app.In = &out, &errb, strings.NewReader("")
	app.Getenv = func(k string) string { return env[k] }
	app.Cwd = home
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home, "serve"}, args...))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return errb.String(), ExitCode(err)
}

// The start is refused (exit 2, nothing opened) for a short agent token
// (naming the agent and the rule), an agent token unset, two callers with
// one token, no token at all, or a non-loopback address without
// --allow-remote.
func TestServeMCPRefusals(t *testing.T) {
	h := newCLIHome(t)
	if errs, code := serveRefusal(t, h.home, nil, "--mcp", "127.0.0.1:0"); code != 2 || !strings.Contains(errs, "VIGIL_MCP_TOKEN") || !strings.Contains(errs, "[[agents]]") {
		t.Fatalf("no token: %d %s", code, errs)
	}
	withAgents(t, h.home, "fifteen-bytes-x")
	env := map[string]string{"VIGIL_TEST_BETA_TOKEN": betaTok}
	for _, c := range []struct {
		alpha string
		env   map[string]string
		args  []string
		want  []string
	}{
		{"fifteen-bytes-x", env, nil, []string{`[[agents]] "alpha": token_file`, "the token has 15 bytes, at least 16 are needed"}},
		{"", env, nil, []string{`"alpha"`, "no token", "at least 16"}},
		{alphaTok, nil, nil, []string{`[[agents]] "beta": token_env VIGIL_TEST_BETA_TOKEN: no token`}},
		{betaTok, env, nil, []string{`[[agents]] "beta" token_env VIGIL_TEST_BETA_TOKEN: the same token as [[agents]] "alpha"`}},
		{alphaTok, map[string]string{"VIGIL_TEST_BETA_TOKEN": betaTok, "VIGIL_MCP_TOKEN": alphaTok}, nil, []string{"the same token as VIGIL_MCP_TOKEN"}},
		{alphaTok, env, []string{"--mcp", "0.0.0.0:0"}, []string{"--mcp", "--allow-remote"}},
	} {
		withAgentToken(t, h.home, c.alpha)
		args := c.args
		if args == nil {
			args = []string{"--mcp", "127.0.0.1:0"}
		}
		errs, code := serveRefusal(t, h.home, c.env, args...)
		for _, w := range c.want {
			if code != 2 || !strings.Contains(errs, w) {
				t.Errorf("%v: %d %s (want %q)", c.want, code, errs, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(h.home, "audit.log")); err == nil {
		t.Fatal("a refused start opened the home")
	}
}

// `vigil mcp --http` takes the same tokens: an agent's token is enough,
// without a shared one.
func TestMcpHTTPAgentTokens(t *testing.T) {
	h := newCLIHome(t)
	withAgents(t, h.home, alphaTok)
	app := NewApp()
	app.HomeFlag, app.Cwd = h.home, h.home
	app.Getenv = func(k string) string {
		if k == "VIGIL_TEST_BETA_TOKEN" {
			return betaTok
		}
		return ""
	}
	c, err := mcpCallers(app)
	if err != nil || !c.Agents() {
		t.Fatalf("agents' tokens alone: %v", err)
	}
}

// The endpoint in-process (so -race sees it): Stop answers a waiting call
// with pending, closes the client's listening stream, and returns well
// within its bound; a second Stop returns at once.
func TestMCPEndpointStop(t *testing.T) {
	h := newCLIHome(t)
	withAgents(t, h.home, alphaTok)
	app := NewApp()
	app.HomeFlag, app.Cwd, app.Out, app.Err = h.home, h.home, io.Discard, io.Discard
	app.Getenv = func(k string) string { return map[string]string{"VIGIL_TEST_BETA_TOKEN": betaTok}[k] }
	callers, err := mcpCallers(app)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	d, closeDeps, err := mcpDeps(t.Context(), app, log)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDeps()
	ep, err := startMCPHTTP(d, "127.0.0.1:0", callers, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	alpha, progress := connectMCP(t, "http://"+ep.Addr().String()+"/mcp", alphaTok, "x")
	params := &mcp.CallToolParams{Name: "media_play", Arguments: playArgs(h, "in-process", "agent:alpha", 600)}
	params.SetProgressToken("p")
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := alpha.CallTool(context.Background(), params)
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	testwait.Until(t, 30*time.Second, "the call waits", func() bool { return progress() > 0 })
	start := time.Now()
	if err := ep.Stop(mcpStopTimeout); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	res := <-answered
	if res == nil || res.IsError || !strings.Contains(mcpText(res), `"state":"pending"`) {
		t.Fatalf("the waiting call: %v", res)
	}
	if took > 5*time.Second {
		t.Fatalf("Stop took %s", took)
	}
	t.Logf("Stop took %s with a waiting call and an open session", took)
	if err := ep.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
}
