package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// sshKey is an operator's key made by the real ssh-keygen.
type sshKey struct {
	path, line, fingerprint string
}

func newSSHKey(t *testing.T, comment string) sshKey {
	t.Helper()
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if out, err := exec.Command(testbin.Tool(t, "ssh-keygen"), "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pk, _, _, _, err := gossh.ParseAuthorizedKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return sshKey{path: path, line: strings.TrimSpace(string(b)), fingerprint: gossh.FingerprintSHA256(pk)}
}

// addOperators appends [[operators]] for each name (a key made for each)
// and extra to the home's config; it returns the keys by name.
func (h *crashHome) addOperators(extra string, names ...string) map[string]sshKey {
	h.t.Helper()
	keys := map[string]sshKey{}
	var b strings.Builder
	for _, n := range names {
		k := newSSHKey(h.t, n+"@test")
		keys[n] = k
		fmt.Fprintf(&b, "\n[[operators]]\nname = %q\nkeys = [%q]\n", n, k.line)
	}
	b.WriteString("\n" + extra + "\n")
	f, err := os.OpenFile(filepath.Join(h.home, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		h.t.Fatal(err)
	}
	return keys
}

// sshServe is `vigil serve --ssh 127.0.0.1:0` running in this process.
type sshServe struct {
	t       *testing.T
	port    string
	hostKey string // SHA256:… as serve printed it
	known   string // the clients' known_hosts
	stderr  *serveLogBuffer
	// stop stops serve (as SIGTERM would) and waits for it; the test's end
	// does it too
	stop func()
}

var sshListening = regexp.MustCompile(`vigil serve: ssh on 127\.0\.0\.1:(\d+) \(host key (SHA256:\S+)\)`)

// serveSSH starts serve with --ssh on a free loopback port and waits for it
// to say where; the test's end stops it (as SIGTERM would) and waits.
func (h *crashHome) serveSSH(args ...string) *sshServe {
	h.t.Helper()
	out, errb := &serveLogBuffer{}, &serveLogBuffer{}
	app := NewApp()
	app.Out, app.Err, app.In = out, errb, strings.NewReader("")
	app.Getenv = func(string) string { return "" }
	app.Cwd = h.home
	root := NewRootCmd(app)
	root.SetArgs(append([]string{"--home", h.home, "serve", "--ssh", "127.0.0.1:0"}, args...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	s := &sshServe{t: h.t, stderr: errb, known: filepath.Join(h.t.TempDir(), "known_hosts")}
	s.stop = sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				h.t.Errorf("serve: %v\n%s", err, errb.String())
			}
		case <-time.After(20 * time.Second):
			h.t.Errorf("serve did not stop\n%s", errb.String())
		}
	})
	h.t.Cleanup(s.stop)
	testwait.For(h.t, 20*time.Second, func() error {
		select {
		case err := <-done:
			h.t.Fatalf("serve ended: %v\n%s%s", err, out.String(), errb.String())
		default:
		}
		m := sshListening.FindStringSubmatch(out.String())
		if m == nil {
			return fmt.Errorf("serve has not said where it listens: %q", out.String())
		}
		s.port, s.hostKey = m[1], m[2]
		return nil
	})
	return s
}

// argv is the real ssh client's command line for key, with opts before the
// destination and the remote command's words after it.
func (s *sshServe) argv(key sshKey, opts []string, args ...string) []string {
	argv := []string{testbin.Tool(s.t, "ssh"), "-p", s.port, "-i", key.path,
		"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + s.known,
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
		"-o", "PreferredAuthentications=publickey", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10"}
	argv = append(append(argv, opts...), "127.0.0.1", "--")
	return append(argv, args...)
}

// cmd is the ssh client as an exec.Cmd, with no ~/.ssh of the machine's.
func (s *sshServe) cmd(key sshKey, opts []string, args ...string) *exec.Cmd {
	a := s.argv(key, opts, args...)
	c := exec.Command(a[0], a[1:]...)
	c.Env = append(os.Environ(), "HOME="+s.t.TempDir())
	return c
}

// run runs the remote command with key; it returns stdout, stderr and the
// exit status (255: ssh failed, e.g. refused).
func (s *sshServe) run(key sshKey, args ...string) (string, string, int) {
	s.t.Helper()
	c := s.cmd(key, nil, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr, c.Stdin = &out, &errb, strings.NewReader("")
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// must runs args over SSH and wants exit status want.
func (s *sshServe) must(key sshKey, want int, args ...string) (string, string) {
	s.t.Helper()
	out, errs, code := s.run(key, args...)
	if code != want {
		s.t.Fatalf("ssh %s: exit %d, want %d\nstdout: %s\nstderr: %s\nserve: %s", strings.Join(args, " "), code, want, out, errs, s.stderr.String())
	}
	return out, errs
}

// auditEntry is the part of an audit entry the SSH tests read.
type auditEntry struct {
	Actor   string         `json:"actor"`
	Event   string         `json:"event"`
	TaskID  string         `json:"task_id"`
	Details map[string]any `json:"details"`
}

// decision is task id's approved/denied entry in the home's audit log.
func (h *crashHome) decision(id string) auditEntry {
	h.t.Helper()
	out := h.must(0, "audit", "show", "--task", id, "--json")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e auditEntry
		if json.Unmarshal([]byte(line), &e) == nil && (e.Event == "approved" || e.Event == "denied") {
			return e
		}
	}
	h.t.Fatalf("no decision for %s in the log:\n%s", id, out)
	return auditEntry{}
}
