package cli

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

func searchHome(t *testing.T) string {
	home := t.TempDir()
	files := filepath.Join(home, "files")
	for rel, body := range map[string]string{
		"main.go":        "package main\n\n// TODO: parser\nfunc main() {}\n",
		"notes/todo.md":  "- fix the \"parser\"\n- ship it\n",
		"notes/café.txt": "Parser notes, unicode name\n",
		".env":           "SECRET=parser\n", // denied by the sandbox
	} {
		p := filepath.Join(files, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("[sandbox]\nroot = \"files\"\n"), 0o600)
	return home
}

// TestSearchCommandGolden: `vigil search` prints FR-LS-05's response object;
// the golden holds it with the sandbox root replaced by $ROOT.
func TestSearchCommandGolden(t *testing.T) {
	for _, backend := range []string{"ugrep", "rg"} {
		t.Run(backend, func(t *testing.T) {
			requireTool(t, backend)
			home := searchHome(t)
			out, errs, code := run(t, home, "search", "--backend", backend, "-C", "1", "--case", "insensitive", "parser")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			root, _ := filepath.EvalSymlinks(filepath.Join(home, "files"))
			got := strings.ReplaceAll(strings.ReplaceAll(out, root, "$ROOT"), filepath.Join(home, "files"), "$ROOT")
			var resp map[string]any
			if err := json.Unmarshal([]byte(got), &resp); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			// count is 3 matches + 3 context events (FR-LS-06b)
			if strings.Contains(got, "SECRET") || resp["count"] != float64(6) {
				t.Fatalf("unexpected response:\n%s", got)
			}
			golden := filepath.Join("testdata", "search.golden.json")
			if *updateGolden && backend == "ugrep" {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatalf("%s output differs from the golden:\n%s\nwant:\n%s", backend, got, want)
			}
		})
	}
}

func TestSearchCommandBadArgs(t *testing.T) {
	home := searchHome(t)
	out, _, code := run(t, home, "search", "--max-results", "0", "x")
	var e struct {
		Error struct{ Kind, Message string } `json:"error"`
	}
	if code != 2 || json.Unmarshal([]byte(out), &e) != nil || e.Error.Kind != "BadArgs" || !strings.Contains(e.Error.Message, "max_results") {
		t.Fatalf("exit %d, output %s", code, out)
	}
	out, _, code = run(t, home, "search", "x", "../outside")
	if code != 2 || !strings.Contains(out, "BadArgs") {
		t.Fatalf("escaping the sandbox: exit %d %s", code, out)
	}
}

func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := lookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed", name)
	}
}

// TestSearchCommandHostileFiles: a long line is cut to [tools.search]
// max_line_bytes around its first match, in lines.text and in content,
// with text_truncated saying where; deny globs ignore case.
func TestSearchCommandHostileFiles(t *testing.T) {
	for _, backend := range []string{"ugrep", "rg"} {
		t.Run(backend, func(t *testing.T) {
			requireTool(t, backend)
			home := searchHome(t)
			files := filepath.Join(home, "files")
			os.WriteFile(filepath.Join(files, "min.js"), []byte(strings.Repeat("a", 300_000)+"parser"+strings.Repeat("b", 300_000)+"\n"), 0o644)
			for _, n := range []string{".ENV", "KEY.PEM", "Id_rsa"} {
				os.WriteFile(filepath.Join(files, n), []byte("parser\n"), 0o644)
			}
			os.WriteFile(filepath.Join(home, "config.toml"), []byte("[sandbox]\nroot = \"files\"\n[tools.search]\nmax_line_bytes = 1000\n"), 0o600)
			for _, stream := range []bool{false, true} {
				args := []string{"search", "--backend", backend, "--hidden", "parser"}
				if stream {
					args = append(args, "--stream")
				}
				out, errs, code := run(t, home, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				lines := strings.Split(strings.TrimSpace(out), "\n")
				var resp struct {
					Matches []struct {
						Data struct {
							Path  struct{ Text string }
							Lines struct{ Text string }
							Cut   *struct {
								Offset    int `json:"offset"`
								LineBytes int `json:"line_bytes"`
							} `json:"text_truncated"`
							Column int `json:"column"`
						}
					}
					Content string
				}
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &resp); err != nil {
					t.Fatal(err)
				}
				if len(out) > 20_000 {
					t.Errorf("stream=%v: %d bytes of output", stream, len(out))
				}
				found := false
				for _, m := range resp.Matches {
					switch p := m.Data.Path.Text; p {
					case ".ENV", "KEY.PEM", "Id_rsa":
						t.Errorf("stream=%v: denied %s was searched", stream, p)
					case "min.js":
						found = true
						c := m.Data.Cut
						if c == nil || c.LineBytes != 600_006 || c.Offset != 300_000-250 || m.Data.Column != 300_001 || len(m.Data.Lines.Text) != 1000 {
							t.Errorf("stream=%v: min.js cut %+v column %d text %d bytes", stream, c, m.Data.Column, len(m.Data.Lines.Text))
						}
					default:
						if m.Data.Cut != nil {
							t.Errorf("stream=%v: %s marked cut", stream, p)
						}
					}
				}
				if !found || !strings.Contains(resp.Content, "min.js:1:300001:"+strings.Repeat("a", 250)+"parser") ||
					!strings.Contains(resp.Content, "[cut: line of 600006 bytes, shown from byte 299750]\n") {
					t.Errorf("stream=%v: content %q", stream, resp.Content)
				}
			}
		})
	}
}
