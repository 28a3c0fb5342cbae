// Package natstest runs NATS servers for tests: the distribution's
// nats-server binary as a real process (Debian's is 2.9.10, older than
// Vigil supports: the refusal is tested against it), and a cluster of
// embedded servers of the version go.mod pins.
package natstest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
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

// Cluster is n embedded servers (the version go.mod pins) routed into one
// JetStream cluster on loopback, each with its own store.
type Cluster struct {
	Servers []*server.Server
	// URL lists every server's client URL, comma-separated, as [queue]
	// url takes them.
	URL  string
	t    testing.TB
	opts []*server.Options
}

// StartCluster starts the cluster and waits until it has a JetStream meta
// leader that every server follows. The servers stop when the test ends.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	client, routes := freePorts(t, n), freePorts(t, n)
	var routeURLs, clientURLs []string
	for i := range n {
		routeURLs = append(routeURLs, fmt.Sprintf("nats-route://127.0.0.1:%d", routes[i]))
		clientURLs = append(clientURLs, fmt.Sprintf("nats://127.0.0.1:%d", client[i]))
	}
	c := &Cluster{URL: strings.Join(clientURLs, ","), t: t, Servers: make([]*server.Server, n)}
	for i := range n {
		c.opts = append(c.opts, &server.Options{ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1",
			Port: client[i], JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "vigil-test", Host: "127.0.0.1", Port: routes[i]},
			Routes:  server.RoutesFromStr(strings.Join(routeURLs, ","))})
	}
	for i := range n {
		c.Start(i)
	}
	t.Cleanup(func() {
		for i := range c.Servers {
			c.Stop(i)
		}
	})
	c.WaitReady(60 * time.Second)
	return c
}

// Start starts server i (again, on its port and store).
func (c *Cluster) Start(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.opts[i])
	if err != nil {
		c.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		c.t.Fatalf("server %d did not start", i)
	}
	c.Servers[i] = s
}

// Stop shuts server i down (nothing if it is down).
func (c *Cluster) Stop(i int) {
	if s := c.Servers[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.Servers[i] = nil
	}
}

// WaitReady waits until the running servers have one JetStream meta
// leader and each is current with it.
func (c *Cluster) WaitReady(within time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		leaders, current, up := 0, 0, 0
		for _, s := range c.Servers {
			if s == nil {
				continue
			}
			up++
			if s.JetStreamIsLeader() {
				leaders++
			}
			if s.JetStreamIsCurrent() {
				current++
			}
		}
		if leaders == 1 && current == up {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the cluster has %d meta leaders, %d of %d servers current, after %s", leaders, current, up, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePorts finds n loopback ports free now (the kernel's choice, closed
// again: a server started soon after takes them).
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}
