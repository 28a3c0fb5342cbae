package memory

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func callText(t *testing.T, cs *mcp.ClientSession, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content blocks: %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", res.Content[0])
	}
	return tc.Text, res.IsError
}

// checkSession exercises a connected client against a server over the
// Python corpus: listing, schema, success, validation and raw arguments.
func checkSession(t *testing.T, cs *mcp.ClientSession) {
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "search_memory" {
		t.Fatalf("tools %+v", tools.Tools)
	}
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	var got, want any
	json.Unmarshal(schema, &got)
	json.Unmarshal(InputSchema, &want)
	if !jsonEqual(got, want) {
		t.Fatalf("schema differs:\n%s", schema)
	}
	text, isErr := callText(t, cs, map[string]any{"query": "What is Python?", "limit": 2})
	if isErr || !strings.HasPrefix(text, "Found 2 results:\n\n1. [Score: ") {
		t.Fatalf("%v %q", isErr, text)
	}
	// The tool, not the SDK, validates: the seed's messages reach the client.
	text, isErr = callText(t, cs, map[string]any{"query": "test", "limit": "10"})
	if !isErr || text != "Error: Invalid input - limit: value is not a valid integer" {
		t.Fatalf("%v %q", isErr, text)
	}
	text, isErr = callText(t, cs, json.RawMessage(`{"query": "x", "filters": {"unknown_key": 1}}`))
	if !isErr || text != "Error: Invalid input - filters: extra fields not permitted" {
		t.Fatalf("%v %q", isErr, text)
	}
	text, isErr = callText(t, cs, nil)
	if !isErr || text != "Error: Invalid input - query: field required" {
		t.Fatalf("%v %q", isErr, text)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestMCPServerInProcess(t *testing.T) {
	s, _, _ := pythonCorpus(t)
	srv := NewMCPServer(NewTool(s, nil), "test")
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkSession(t, cs)
}

// moduleRoot walks up from this package to the folder holding go.mod.
func moduleRoot(t *testing.T) string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
}

// TestMCPSubprocess builds the vigil binary and talks to `vigil mcp` with the
// SDK's own client over the process's stdin/stdout.
func TestMCPSubprocess(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "vigil")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := t.TempDir()
	// Fill the home's memory.db through the engine, the same file `vigil mcp` opens.
	dbPath := memoryPath(t, bin, home)
	s, err := Open(dbPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addFiller(t, s, 24)
	addMem(t, s, "Python is a programming language", []string{"python"}, "documentation", "2025-03-01")
	addMem(t, s, "Python was created by Guido", nil, "notes", "2025-03-02")
	addMem(t, s, "Python is used for web development", []string{"python", "web"}, "documentation", "2025-03-03")
	s.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--home", home, "mcp")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	checkSession(t, cs)
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	// Logs went to stderr, with the query cut to 50 characters at most.
	if !strings.Contains(stderr.String(), "search_completed") {
		t.Fatalf("no logs on stderr:\n%s", stderr.String())
	}
}

// memoryPath asks nothing of the binary beyond the CLI.md layout: with --home
// the memory database lives at HOME/data/memory.db or HOME/memory.db; the
// config package decides, so look where it put it after one `memory search`.
func memoryPath(t *testing.T, bin, home string) string {
	out, err := exec.Command(bin, "--home", home, "memory", "search", `{"query": "x"}`).CombinedOutput()
	if err != nil {
		t.Fatalf("vigil memory search: %v\n%s", err, out)
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil || r.IsError || r.Text() != NoResultsText {
		t.Fatalf("memory search on an empty home: %s", out)
	}
	var found string
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "memory.db" {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatal("vigil memory search created no memory.db")
	}
	return found
}
