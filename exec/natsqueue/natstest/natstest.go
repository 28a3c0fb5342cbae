// Package natstest runs NATS servers for tests: the distribution's
// nats-server binary as a real process (Debian's is 2.9.10, older than
// Vigil supports: the refusal is tested against it), and embedded servers
// of the version go.mod pins.
package natstest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Binary is the nats-server on PATH (or Debian's /usr/sbin/nats-server,
// which a user's PATH may lack) and its version ("2.9.10"). It is skipped
// when there is none, except under CI=true, where it fails: CI installs it
// (.ci/run, scripts/deps.sh).
func Binary(t testing.TB) (path, version string) {
	t.Helper()
	path, err := exec.LookPath("nats-server")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nats-server"); serr == nil {
			path, err = "/usr/sbin/nats-server", nil
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("nats-server is required in CI (apt-get install nats-server): %v", err)
		}
		t.Skip("nats-server not installed (apt-get install nats-server)")
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", path, err)
	}
	// "nats-server: v2.9.10"
	_, v, _ := strings.Cut(strings.TrimSpace(string(out)), ": ")
	return path, strings.TrimPrefix(v, "v")
}

// Process is a nats-server running as a process of the test's own.
type Process struct {
	URL     string // nats://127.0.0.1:PORT
	Version string
	cmd     *exec.Cmd
}

// Start runs the binary (Binary) with JetStream on a free loopback port and
// a temporary store, plus args, and waits until it listens. It is stopped
// when the test ends.
func Start(t testing.TB, args ...string) *Process {
	t.Helper()
	bin, version := Binary(t)
	dir := t.TempDir()
	argv := append([]string{"-a", "127.0.0.1", "-p", "-1", "-js", "-sd", filepath.Join(dir, "store"),
		"--ports_file_dir", dir, "-l", filepath.Join(dir, "server.log")}, args...)
	cmd := exec.Command(bin, argv...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Process{Version: version, cmd: cmd}
	t.Cleanup(p.Stop)
	deadline := time.Now().Add(20 * time.Second)
	for p.URL == "" {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			t.Fatalf("nats-server %s did not write its ports file within 20 s; its log:\n%s", version, log)
		}
		time.Sleep(20 * time.Millisecond)
		p.URL = portsFileURL(dir)
	}
	return p
}

// portsFileURL reads the client URL from the ports file the server writes
// once it listens ("" until then).
func portsFileURL(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.ports"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var ports struct {
			Nats []string `json:"nats"`
		}
		if json.Unmarshal(b, &ports) == nil && len(ports.Nats) > 0 {
			return ports.Nats[0]
		}
	}
	return ""
}

// Stop kills the server and waits for it (idempotent).
func (p *Process) Stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}
