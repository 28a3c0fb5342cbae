package sshgate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/internal/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// keyPair is a key made by ssh-keygen: the private key's file and the
// public key.
type keyPair struct {
	path string
	pub  gossh.PublicKey
	line string
}

// newKey makes an Ed25519 key with the real ssh-keygen in a temp dir.
func newKey(t *testing.T, comment string) keyPair {
	t.Helper()
	path := filepath.Join(t.TempDir(), "id_ed25519")
	out, err := exec.Command(testbin.Tool(t, "ssh-keygen"), "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := gossh.ParseAuthorizedKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{path: path, pub: pub, line: strings.TrimSpace(string(b))}
}

// clock is a settable clock for the failure count.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rig is a running gate on loopback with a recording Exec.
type rig struct {
	t     *testing.T
	addr  *net.TCPAddr
	known string // the client's known_hosts file
	clock *clock
	mu    sync.Mutex
	runs  []Session
	log   *lockedBuffer
}

// startGate starts a gate with o (Operators set by the caller); Exec, when
// o has none, prints "<operator> <fingerprint> <args as %q>" and exits 3.
func startGate(t *testing.T, o Options) *rig {
	t.Helper()
	r := &rig{t: t, known: filepath.Join(t.TempDir(), "known_hosts"), clock: &clock{t: time.Unix(1_700_000_000, 0)}, log: &lockedBuffer{}}
	if o.HostKey == nil {
		hk, _, err := HostKey(filepath.Join(t.TempDir(), "host_key"))
		if err != nil {
			t.Fatal(err)
		}
		o.HostKey = hk
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = time.Minute
	}
	if o.Exec == nil {
		o.Exec = func(_ context.Context, s *Session) int {
			r.mu.Lock()
			r.runs = append(r.runs, *s)
			r.mu.Unlock()
			fmt.Fprintf(s.Out, "%s %s %q\n", s.Operator, s.Key, s.Args)
			fmt.Fprintln(s.Err, "to stderr")
			return 3
		}
	}
	if o.Now == nil {
		o.Now = r.clock.now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().(*net.TCPAddr)
	done := make(chan error, 1)
	go func() { done <- g.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		g.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return r
}

func (r *rig) sessions() []Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Session(nil), r.runs...)
}

// ssh runs the real OpenSSH client with key against the gate; extra options
// come before the destination, args after it. It returns stdout, stderr and
// the exit status (255: ssh itself failed, e.g. refused).
func (r *rig) ssh(key string, opts []string, args ...string) (string, string, int) {
	r.t.Helper()
	argv := []string{"-p", fmt.Sprint(r.addr.Port), "-i", key,
		"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + r.known,
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
		"-o", "ConnectTimeout=10", "-o", "LogLevel=ERROR"}
	argv = append(argv, opts...)
	argv = append(argv, "127.0.0.1")
	argv = append(argv, args...)
	c := exec.Command(testbin.Tool(r.t, "ssh"), argv...)
	c.Env = append(os.Environ(), "HOME="+r.t.TempDir()) // no ~/.ssh/config of the machine's
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr, c.Stdin = &out, &errb, strings.NewReader("")
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// lockedBuffer is a log sink goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var _ io.Writer = (*lockedBuffer)(nil)
