package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

const testMemoryEmbedKey = "sk-cli-SECRET-9876543210"

// memoryEmbedServer is a loopback openai-kind embedding server: it checks the
// request and answers 8-dimensional vectors in which "car"/"vehicle" and
// "booked"/"reservation" share a dimension.
type memoryEmbedServer struct {
	t      *testing.T
	mu     sync.Mutex
	models []string
	down   bool
	delay  time.Duration
}

func (e *memoryEmbedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" ||
		r.Header.Get("Authorization") != "Bearer "+testMemoryEmbedKey || r.Header.Get("Content-Type") != "application/json" {
		e.t.Errorf("request %s %s auth=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}
	var body struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		e.t.Errorf("body %q", raw)
	}
	e.mu.Lock()
	e.models = append(e.models, body.Model)
	down, delay := e.down, e.delay
	e.mu.Unlock()
	time.Sleep(delay)
	if down {
		http.Error(w, "model not loaded, key "+testMemoryEmbedKey, http.StatusServiceUnavailable)
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var data []item
	for i, in := range body.Input {
		v := make([]float32, 8)
		for _, w := range strings.Fields(strings.ToLower(in)) {
			switch w {
			case "car", "vehicle":
				v[0]++
			case "booked", "reservation":
				v[1]++
			default:
				v[2+len(w)%6] += 0.2
			}
		}
		data = append(data, item{i, v})
	}
	json.NewEncoder(w).Encode(map[string]any{"data": data})
}

// memoryEmbedHome is a home whose config points [memory.embedder] at a loopback server.
func memoryEmbedHome(t *testing.T, model string, required bool) (string, *memoryEmbedServer, *httptest.Server) {
	t.Helper()
	es := &memoryEmbedServer{t: t}
	srv := httptest.NewServer(es)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	writeMemoryEmbedConfig(t, home, srv.URL, model, required)
	return home, es, srv
}

func writeMemoryEmbedConfig(t *testing.T, home, url, model string, required bool) {
	t.Helper()
	cfg := fmt.Sprintf("[memory.embedder]\nkind = \"openai\"\nurl = %q\nmodel = %q\napi_key_env = \"VIGIL_TEST_EMBED_KEY\"\nbatch_size = 2\ntimeout = \"5s\"\nrequired = %v\n",
		url, model, required)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runMemoryEmbed runs the CLI with the API key in its environment (or not).
func runMemoryEmbed(t *testing.T, home string, withKey bool, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	app := NewApp()
	app.Out, app.Err, app.Now = &out, &errb, auditClock()
	app.In = strings.NewReader("")
	app.Getenv = func(k string) string {
		if k == "VIGIL_TEST_EMBED_KEY" && withKey {
			return testMemoryEmbedKey
		}
		return ""
	}
	app.Cwd = home
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", home}, args...))
	err := root.ExecuteContext(context.Background())
	if err != nil {
		var ee *ExitError
		if !(errors.As(err, &ee) && ee.Quiet) {
			fmt.Fprintln(&errb, "vigil: "+err.Error())
		}
	}
	if strings.Contains(out.String()+errb.String(), testMemoryEmbedKey) {
		t.Fatalf("API key shown:\n%s\n%s", out.String(), errb.String())
	}
	return out.String(), errb.String(), ExitCode(err)
}

func TestMemoryCLIHybridSearchAndReindex(t *testing.T) {
	home, es, srv := memoryEmbedHome(t, "model-a", true)
	for _, text := range []string{"The car is booked for Friday", "Water the tomatoes", "Pay the rent"} {
		if _, e, code := runMemoryEmbed(t, home, true, "memory", "add", "--text", text); code != 0 {
			t.Fatalf("add: %d %s", code, e)
		}
	}
	out, _, code := runMemoryEmbed(t, home, true, "memory", "search", "-q", "vehicle reservation", "--text")
	if code != 0 || !strings.HasPrefix(out, "Found 1 results:\n\n1. [Score: 0.50] [Match: meaning]\nThe car is booked for Friday\n") {
		t.Fatalf("%d %q", code, out)
	}
	// Added memories were embedded already: nothing to do.
	out, _, code = runMemoryEmbed(t, home, true, "memory", "reindex")
	if code != 0 || !strings.Contains(out, `"embedded": 0`) {
		t.Fatalf("%d %s", code, out)
	}
	// Another model: every vector is redone, two texts a request, with
	// plain progress lines (stderr is not a terminal).
	writeMemoryEmbedConfig(t, home, srv.URL, "model-b", true)
	out, errOut, code := runMemoryEmbed(t, home, true, "memory", "reindex")
	if code != 0 || !strings.Contains(out, `"embedded": 3`) || !strings.Contains(out, `"model": "model-b"`) {
		t.Fatalf("%d %s %s", code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "reindex 0/3 0%\n") || !strings.Contains(errOut, "reindex 3/3 100%") || strings.Contains(errOut, "\r") {
		t.Fatalf("progress: %q", errOut)
	}
	es.mu.Lock()
	last := es.models[len(es.models)-1]
	es.mu.Unlock()
	if last != "model-b" {
		t.Fatalf("model sent %q", last)
	}
	// Import embeds what it stored.
	file := filepath.Join(home, "in.jsonl")
	os.WriteFile(file, []byte(`{"text":"Vehicle inspection due"}`+"\n"+`{"text":"Booked a table"}`+"\n"), 0o600)
	out, _, code = runMemoryEmbed(t, home, true, "memory", "import", file)
	if code != 0 || !strings.Contains(out, `"embedded": 2`) || !strings.Contains(out, `"imported": 2`) {
		t.Fatalf("%d %s", code, out)
	}
}

func TestMemoryCLIEmbedderFailures(t *testing.T) {
	home, es, _ := memoryEmbedHome(t, "model-a", true)
	if _, e, code := runMemoryEmbed(t, home, true, "memory", "add", "--text", "The car is booked for Friday"); code != 0 {
		t.Fatal(e)
	}
	// The key's variable unset: a clear error naming it.
	_, errOut, code := runMemoryEmbed(t, home, false, "memory", "search", "-q", "car")
	if code != ExitBadInput || !strings.Contains(errOut, "api_key_env: the environment variable VIGIL_TEST_EMBED_KEY is not set") {
		t.Fatalf("%d %q", code, errOut)
	}
	// A failing embedder with required = true: the seed's error, key masked, exit 3.
	es.mu.Lock()
	es.down = true
	es.mu.Unlock()
	out, _, code := runMemoryEmbed(t, home, true, "memory", "search", "-q", "car")
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != ExitExecution || !r.IsError ||
		r.Content[0].Text != "Error: Search failed: Embedding generation failed: openai embedder: HTTP 503: model not loaded, key ****" {
		t.Fatalf("%d %s", code, out)
	}
	// Import while it fails: the rows are stored, the failure reported.
	file := filepath.Join(home, "in.jsonl")
	os.WriteFile(file, []byte(`{"text":"Vehicle inspection due"}`+"\n"), 0o600)
	out, errOut, code = runMemoryEmbed(t, home, true, "memory", "import", file)
	if code != 0 || !strings.Contains(out, `"imported": 1`) || !strings.Contains(out, `"embed_error"`) ||
		!strings.Contains(errOut, "run `vigil memory reindex` later") {
		t.Fatalf("%d %s %s", code, out, errOut)
	}
	// Not required: the keyword answer.
	writeMemoryEmbedConfig(t, home, "http://127.0.0.1:1", "model-a", false)
	out, errOut, code = runMemoryEmbed(t, home, true, "memory", "search", "-q", "car", "--text")
	if code != 0 || !strings.HasPrefix(out, "Found 1 results:\n\n1. [Score: ") || strings.Contains(out, "[Match:") {
		t.Fatalf("%d %q", code, out)
	}
	if strings.Count(errOut, "embedding_failed") != 1 || !strings.Contains(errOut, "level=WARN") {
		t.Fatalf("the failure is logged once on stderr: %q", errOut)
	}
	// reindex without an embedder configured is refused.
	os.Remove(filepath.Join(home, "config.toml"))
	if _, errOut, code := runMemoryEmbed(t, home, true, "memory", "reindex"); code != ExitBadInput || !strings.Contains(errOut, "no [memory.embedder]") {
		t.Fatalf("%d %q", code, errOut)
	}
}

func TestMemoryProgressLine(t *testing.T) {
	for _, c := range []struct {
		done, total int
		elapsed     time.Duration
		bar         bool
		want        string
	}{
		{0, 3000, 0, false, "embed 0/3000 0%"},
		{1200, 3000, 3 * time.Second, false, "embed 1200/3000 40%  400/s  5s left"},
		{1200, 3000, 3 * time.Second, true, "embed [█████████░░░░░░░░░░░░░░░] 1200/3000 40%  400/s  5s left"},
		{3000, 3000, 6 * time.Second, true, "embed [████████████████████████] 3000/3000 100%  500/s"},
	} {
		if got := memoryProgressLine("embed", c.done, c.total, c.elapsed, c.bar); got != c.want {
			t.Errorf("%+v:\ngot  %q\nwant %q", c, got, c.want)
		}
	}
}

// On a real terminal (tmux) `vigil memory reindex` draws one bar, redrawn in
// place, that ends at 100%.
func TestMemoryReindexBarTmux(t *testing.T) {
	testbin.FullRunOnly(t, "vigil in a real terminal (tmux)")
	tmux := testbin.Tool(t, "tmux")
	bin := testbin.Vigil(t)
	home, es, srv := memoryEmbedHome(t, "model-a", true)
	for i := 0; i < 40; i++ {
		if _, e, code := runMemoryEmbed(t, home, true, "memory", "add", "--text", fmt.Sprintf("note number %d about the car", i)); code != 0 {
			t.Fatal(e)
		}
	}
	writeMemoryEmbedConfig(t, home, srv.URL, "model-b", true)
	es.mu.Lock()
	es.delay = 30 * time.Millisecond // 20 requests: the bar is drawn several times
	es.mu.Unlock()
	sock := fmt.Sprintf("vigil-memory-test-%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	script := fmt.Sprintf("%s --home %s memory reindex; echo EXIT=$?; sleep 60", bin, home)
	if out, err := tm("new-session", "-d", "-s", "vigil", "-x", "120", "-y", "30",
		"env", "TERM=xterm-256color", "VIGIL_TEST_EMBED_KEY="+testMemoryEmbedKey, "sh", "-c", script); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { tm("kill-server") })
	var screen string
	testwait.For(t, 60*time.Second, func() error {
		if screen, _ = tm("capture-pane", "-p", "-t", "vigil"); !strings.Contains(screen, "EXIT=") {
			return fmt.Errorf("reindex did not finish; screen:\n%s", screen)
		}
		return nil
	})
	if !strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, `"embedded": 40`) {
		t.Fatalf("screen:\n%s", screen)
	}
	bars := 0
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, "reindex [") {
			bars++
			if !strings.Contains(l, "["+strings.Repeat("█", 24)+"] 40/40 100%") {
				t.Fatalf("final bar %q", l)
			}
		}
	}
	if bars != 1 {
		t.Fatalf("%d bar lines, want one redrawn in place:\n%s", bars, screen)
	}
}

// A reindex killed (SIGKILL, a real process) after its second batch keeps
// those batches; the next reindex embeds only the rest, and every memory ends
// with exactly one vector of the new model.
func TestMemoryReindexKilledKeepsItsBatches(t *testing.T) {
	testbin.FullRunOnly(t, "kills a real reindex")
	bin := testbin.Vigil(t)
	home, es, srv := memoryEmbedHome(t, "model-a", true)
	for i := 0; i < 10; i++ {
		if _, e, code := runMemoryEmbed(t, home, true, "memory", "add", "--text", fmt.Sprintf("note %d", i)); code != 0 {
			t.Fatal(e)
		}
	}
	writeMemoryEmbedConfig(t, home, srv.URL, "model-b", true) // batch_size 2
	cmd := exec.Command(bin, "--home", home, "memory", "reindex")
	cmd.Env = append(os.Environ(), "VIGIL_TEST_EMBED_KEY="+testMemoryEmbedKey, "VIGIL_CRASHPOINT=memory.reindex.batch@2")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.String() != "signal: killed" {
		t.Fatalf("not killed: %v\n%s", err, out)
	}
	es.mu.Lock()
	before := len(es.models)
	es.mu.Unlock()
	stdout, errOut, code := runMemoryEmbed(t, home, true, "memory", "reindex")
	if code != 0 || !strings.Contains(stdout, `"embedded": 6`) {
		t.Fatalf("second reindex: %d %s %s", code, stdout, errOut)
	}
	es.mu.Lock()
	if got := len(es.models) - before; got != 3 {
		t.Fatalf("second reindex sent %d requests, want 3 (6 memories, 2 a request)", got)
	}
	es.mu.Unlock()
	stdout, _, _ = runMemoryEmbed(t, home, true, "memory", "reindex")
	if !strings.Contains(stdout, `"embedded": 0`) {
		t.Fatalf("third reindex: %s", stdout)
	}
}
