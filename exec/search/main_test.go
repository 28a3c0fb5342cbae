package search

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain re-runs the test binary without CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH when it runs as root (CI containers), so that chmod
// 000 really makes a file unreadable for Vigil and for the backends. It
// uses setpriv(1) because the race detector's cgo runtime cannot drop
// capabilities on all threads from Go.
func TestMain(m *testing.M) {
	if root := os.Getenv("VIGIL_TEST_HANGING_SEARCH"); root != "" {
		hangingSearch(root) // the child process of TestBackendDiesWithVigil
		os.Exit(0)
	}
	if os.Geteuid() == 0 && os.Getenv("VIGIL_TEST_NODAC") == "" {
		if sp, err := exec.LookPath("setpriv"); err == nil {
			cmd := exec.Command(sp, append([]string{"--bounding-set=-dac_override,-dac_read_search", "--", os.Args[0]}, os.Args[1:]...)...)
			cmd.Env = append(os.Environ(), "VIGIL_TEST_NODAC=1")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok {
				os.Exit(ee.ExitCode())
			}
			if err == nil {
				os.Exit(0)
			}
		}
	}
	os.Exit(m.Run())
}

// backends returns the real backends to test against. Under CI=true a
// missing backend fails the run; elsewhere it is skipped.
func backends(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range []string{"ugrep", "rg"} {
		opts := DefaultOptions(t.TempDir())
		opts.Backend = name
		if _, err := selectBackend(opts); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("backend %s missing under CI: %v", name, err)
			}
			t.Logf("skipping backend %s: %v", name, err)
			continue
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		t.Skip("no search backend installed")
	}
	return out
}

// need returns when backend be is installed, fails under CI=true when it
// is missing, and skips elsewhere.
func need(t *testing.T, be string) {
	t.Helper()
	if !slices.Contains(backends(t), be) {
		t.Skip(be + " missing")
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// search runs req (JSON) on root with backend be.
func search(t *testing.T, be, root, reqJSON string) Response {
	t.Helper()
	resp, err := searchErr(be, root, reqJSON)
	if err != nil {
		t.Fatalf("%s: %s: %v", be, reqJSON, err)
	}
	return resp
}

func searchErr(be, root, reqJSON string) (Response, error) {
	return searchEmit(be, root, reqJSON, nil)
}

// searchEmit is searchErr with an emit function for Run (nil for none).
func searchEmit(be, root, reqJSON string, emit func(Batch)) (Response, error) {
	req, err := DecodeRequest([]byte(reqJSON))
	if err != nil {
		return Response{}, err
	}
	opts := DefaultOptions(root)
	opts.Backend = be
	return Run(context.Background(), req, opts, emit)
}

func paths(r Response) []string {
	var out []string
	for _, m := range r.Matches {
		if len(out) == 0 || out[len(out)-1] != m.Path {
			out = append(out, m.Path)
		}
	}
	return out
}

func eventsJSON(r Response) string {
	var b []byte
	for i := range r.Matches {
		b = r.Matches[i].AppendJSON(b)
		b = append(b, '\n')
	}
	return string(b)
}

// responseSummary is everything two paths or backends must agree on.
func responseSummary(r Response) string {
	return eventsJSON(r) + mustJSON(r.Errors) + mustJSON([]any{r.FilesScanned, r.Truncated, *r.ExitCode, r.Stderr})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func eachBackend(t *testing.T, fn func(t *testing.T, be string)) {
	for _, be := range backends(t) {
		t.Run(be, func(t *testing.T) { fn(t, be) })
	}
}

var _ = strings.Contains
