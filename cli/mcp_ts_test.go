package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
)

// tsClientDir holds the TypeScript SDK client (package.json and its lockfile;
// .ci/run runs `npm ci` there).
const tsClientDir = "testdata/mcp-ts"

// needTSClient finds node and the installed SDK; without them the test is
// skipped, except under CI=true, where it fails.
func needTSClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	missing := ""
	if err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing = "the TypeScript SDK is not installed (run `npm ci` in cli/" + tsClientDir + ")"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	return node
}

// TestMcpTypeScriptClient: the official TypeScript SDK client lists the tools
// and calls Search, search_memory and media_play (approved by a parallel
// `vigil approve`) over stdio and over Streamable HTTP.
func TestMcpTypeScriptClient(t *testing.T) {
	testbin.FullRunOnly(t, "node and vigil processes over stdio and HTTP")
	node := needTSClient(t)
	h := mcpHome(t)
	h.must(0, "memory", "add", "--text", "the boiler code is 4471")
	os.WriteFile(filepath.Join(h.home, "notes.txt"), []byte("a needle in the notes\n"), 0o644)
	const token = "ts-test-token-0123456789"
	url, _ := startHTTP(t, h, []string{"VIGIL_MCP_TOKEN=" + token})
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			id := "ts-" + mode
			lease := strings.TrimSpace(h.must(0, "lease", "issue", "--sub", "agent:ts", "--task-id", id, "--cap", "MEDIA_PLAY", "--ttl", "1h"))
			args := []string{"client.mjs", "stdio", h.bin, h.home, id, lease}
			if mode == "http" {
				args = []string{"client.mjs", "http", url + "/mcp", token, h.home, id, lease}
			}
			cmd := exec.CommandContext(t.Context(), node, args...)
			cmd.Dir = tsClientDir
			var stderr lockedBuilder
			cmd.Stderr = &stderr
			// node starts and makes other calls first: no latency check here;
			// client.mjs says on stderr when media_play has its first progress
			waiting := func() bool { return strings.Contains(stderr.String(), "media_play: waiting") }
			dec := decideByProcess(t, h, id, "ts-agent", time.Time{}, waiting, "approve", "--yes")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
			}
			if msg := <-dec; msg != "" {
				t.Fatal(msg)
			}
			var got struct {
				Tools  []string `json:"tools"`
				Search struct {
					IsError bool   `json:"isError"`
					Count   int    `json:"count"`
					Text    string `json:"text"`
				} `json:"search"`
				SearchMemory struct {
					IsError bool   `json:"isError"`
					Text    string `json:"text"`
				} `json:"search_memory"`
				MediaPlay struct {
					IsError  bool           `json:"isError"`
					Result   map[string]any `json:"result"`
					Progress int            `json:"progress"`
				} `json:"media_play"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(got.Tools) != 13 || got.Tools[0] != "Search" {
				t.Fatalf("tools %v", got.Tools)
			}
			if got.Search.IsError || got.Search.Count != 1 || !strings.Contains(got.Search.Text, "notes.txt") {
				t.Fatalf("Search %+v", got.Search)
			}
			if got.SearchMemory.IsError || !strings.Contains(got.SearchMemory.Text, "boiler code") {
				t.Fatalf("search_memory %+v", got.SearchMemory)
			}
			if got.MediaPlay.IsError || got.MediaPlay.Result["status"] != "SUCCESS" || got.MediaPlay.Progress == 0 {
				t.Fatalf("media_play %+v", got.MediaPlay)
			}
		})
	}
}

// lockedBuilder is a strings.Builder a child process writes while the test
// reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
