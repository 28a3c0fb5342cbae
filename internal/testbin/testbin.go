// Package testbin gives tests what they need to run Vigil as a real child
// process: the binary, built once per test process, and the outside tools
// (tmux, …) that must exist under CI, and the gate that keeps the slow
// real-process suites out of the -short fast lane. Only tests import it.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string // holds the binary; removed by Main
	bin  string
	err  error
)

// Vigil is a vigil binary built from this module, once per test process
// (without -race: the children are the system under test, the test process
// checks them). Tests share it and must not change it.
func Vigil(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if dir, err = os.MkdirTemp("", "vigil-test-bin-"); err != nil {
			return
		}
		bin = filepath.Join(dir, "vigil")
		out, berr := exec.Command(Tool(t, "go"), "build", "-o", bin, "github.com/vigil-dev/vigil").CombinedOutput()
		if berr != nil {
			err = fmt.Errorf("go build: %v\n%s", berr, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Main runs a package's tests and removes the binary Vigil built: call it
// from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// Tool is the path of a command the test needs. Missing, it fails the test
// under CI (CI=true: CI installs every tool, so missing is a broken
// machine) and skips it elsewhere.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, lerr := exec.LookPath(name)
	if lerr == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI (scripts/deps.sh installs it): %v", name, lerr)
	}
	t.Skipf("%s not installed", name)
	return ""
}

// FullRunOnly skips t under -short, the developer's fast lane: the test
// runs real processes for long (tmux screens, the release build, kill
// tests, several vigil processes around a NATS server) and belongs to the
// full run CI does (go test ./..., CONTRIBUTING.md). why says what makes
// it slow. A missing tool is not a reason: Tool handles that.
func FullRunOnly(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("full run only (-short skips it): %s", why)
	}
}
