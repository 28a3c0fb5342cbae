package sshgate

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// A listed key signs in as its operator; the command reaches Exec as the
// words the client sent (no shell ever reads them), and Exec's status is
// the session's.
func TestListedKeyRunsItsCommandAsItsOperator(t *testing.T) {
	ada, bob := newKey(t, "ada@laptop"), newKey(t, "bob@phone")
	r := startGate(t, Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{ada.pub}}, {Name: "bob", Keys: []gossh.PublicKey{bob.pub}}}})
	out, errs, code := r.ssh(bob.path, nil, "preview", "t1", "--json", "'$(touch /tmp/pwned)'", "a;b")
	want := `bob ` + gossh.FingerprintSHA256(bob.pub) + ` ["preview" "t1" "--json" "$(touch /tmp/pwned)" "a;b"]` + "\n"
	if out != want || code != 3 || !strings.Contains(errs, "to stderr") {
		t.Fatalf("exit %d\nout %q\nwant %q\nerr %q", code, out, want, errs)
	}
	s := r.sessions()
	if len(s) != 1 || s[0].PTY || s[0].KeyType != "ssh-ed25519" || s[0].Remote != "127.0.0.1" {
		t.Fatalf("sessions: %+v", s)
	}
	if out, _, code := r.ssh(ada.path, nil, "pending"); code != 3 || !strings.HasPrefix(out, "ada SHA256:") {
		t.Fatalf("ada: exit %d %q", code, out)
	}
}

// A key nobody listed is refused in the handshake: not one byte of output,
// Exec never runs, and the refusal is logged with the key's fingerprint.
func TestUnlistedKeyIsRefusedBeforeAnyOutput(t *testing.T) {
	ada, stranger := newKey(t, "ada"), newKey(t, "stranger")
	r := startGate(t, Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{ada.pub}}}})
	out, errs, code := r.ssh(stranger.path, nil, "pending")
	if out != "" || code != 255 || !strings.Contains(errs, "Permission denied (publickey)") {
		t.Fatalf("exit %d\nout %q\nerr %q", code, out, errs)
	}
	if len(r.sessions()) != 0 {
		t.Fatal("Exec ran for an unlisted key")
	}
	if log := r.log.String(); !strings.Contains(log, "key not listed") || !strings.Contains(log, gossh.FingerprintSHA256(stranger.pub)) {
		t.Fatalf("log:\n%s", log)
	}
	// the screen is refused the same way: nothing is drawn
	out, _, code = r.ssh(stranger.path, []string{"-tt"})
	if out != "" || code != 255 {
		t.Fatalf("-tt: exit %d out %q", code, out)
	}
}

// Only public keys are offered: a client that would type a password or
// answer keyboard-interactive has nothing to try.
func TestOnlyPublicKeysAreOffered(t *testing.T) {
	ada := newKey(t, "ada")
	r := startGate(t, Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{ada.pub}}}})
	out, errs, code := r.ssh(ada.path, []string{"-v", "-o", "PreferredAuthentications=password,keyboard-interactive"}, "pending")
	if code != 255 || out != "" || !regexp.MustCompile(`Authentications that can continue: publickey\r?\n`).MatchString(errs) ||
		strings.Contains(errs, "password,") || strings.Contains(errs, "keyboard-interactive,") {
		t.Fatalf("exit %d out %q\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "No more authentication methods to try") {
		t.Fatalf("the client found a method to try:\n%s", errs)
	}
}

// Failed sign-ins are counted per address: past the burst the address is
// refused before the handshake, even with a listed key, until the bucket
// refills on the gate's clock.
func TestFailedSignInsAreRateLimited(t *testing.T) {
	ada, stranger := newKey(t, "ada"), newKey(t, "stranger")
	r := startGate(t, Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{ada.pub}}}, FailBurst: 3, FailEvery: time.Hour})
	for i := range 3 {
		if _, _, code := r.ssh(stranger.path, nil, "pending"); code != 255 {
			t.Fatalf("attempt %d: exit %d", i, code)
		}
	}
	out, errs, code := r.ssh(ada.path, nil, "pending")
	if code != 255 || out != "" || strings.Contains(errs, "Permission denied") {
		t.Fatalf("after 3 failures a listed key got in or reached the sign-in: exit %d out %q err %q", code, out, errs)
	}
	if !strings.Contains(r.log.String(), "too many failed sign-ins") {
		t.Fatalf("log:\n%s", r.log.String())
	}
	r.clock.add(time.Hour)
	if out, _, code := r.ssh(ada.path, nil, "pending"); code != 3 || !strings.HasPrefix(out, "ada ") {
		t.Fatalf("an hour later: exit %d %q", code, out)
	}
	// a success does not refill: one more failure blocks again
	r.ssh(stranger.path, nil, "pending")
	if _, _, code := r.ssh(ada.path, nil, "pending"); code != 255 {
		t.Fatalf("the budget came back without time passing: exit %d", code)
	}
}

// A session nobody types in ends after the idle timeout, saying so; each key
// typed restarts the wait.
func TestIdleSessionEnds(t *testing.T) {
	testbin.FullRunOnly(t, "waits out a real idle timeout with the real ssh client")
	ada := newKey(t, "ada")
	const idleFor = 700 * time.Millisecond
	r := startGate(t, Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{ada.pub}}}, IdleTimeout: idleFor,
		Exec: func(ctx context.Context, s *Session) int {
			go io.Copy(io.Discard, s.In) // reads count as typing
			<-ctx.Done()
			return 3
		}})
	// typing every 200 ms for 2 s keeps it open; then it ends within the timeout
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	c := exec.Command(testbin.Tool(t, "ssh"), "-p", fmt.Sprint(r.addr.Port), "-i", ada.path, "-o", "StrictHostKeyChecking=accept-new",
		"-o", "UserKnownHostsFile="+r.known, "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "127.0.0.1", "result", "t1", "--wait", "1h")
	c.Env = append(os.Environ(), "HOME="+t.TempDir())
	var errb lockedBuffer
	c.Stdin, c.Stderr = pr, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	typing := time.Now()
	for time.Since(typing) < 2*time.Second {
		select {
		case <-done:
			t.Fatalf("ended while typing, after %s: %s", time.Since(typing), errb.String())
		case <-time.After(200 * time.Millisecond): // the passing of real time is the subject
		}
		pw.Write([]byte("x"))
	}
	stopped := time.Now()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the idle session did not end\n%s\n%s", r.log.String(), errb.String())
	}
	if took := time.Since(stopped); took < idleFor {
		t.Fatalf("ended %s after the last key, before the %s timeout", took, idleFor)
	}
	if c.ProcessState.ExitCode() != 3 || !strings.Contains(errb.String(), "session closed: no input for 700ms") {
		t.Fatalf("exit %d: %s", c.ProcessState.ExitCode(), errb.String())
	}
}

// The host key is made once (0600) and reused; a key others can read is
// refused, as sshd refuses it.
func TestHostKeyMadeOnceAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "ssh_host_ed25519")
	k1, made, err := HostKey(path)
	if err != nil || !made {
		t.Fatalf("first: made %v err %v", made, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi.Mode(), err)
	}
	k2, made, err := HostKey(path)
	if err != nil || made || string(k1.PublicKey().Marshal()) != string(k2.PublicKey().Marshal()) {
		t.Fatalf("second: made %v err %v, same %v", made, err, string(k1.PublicKey().Marshal()) == string(k2.PublicKey().Marshal()))
	}
	if k1.PublicKey().Type() != gossh.KeyAlgoED25519 {
		t.Fatalf("type %s", k1.PublicKey().Type())
	}
	// ssh-keygen reads it as an OpenSSH private key
	if out, err := exec.Command(testbin.Tool(t, "ssh-keygen"), "-y", "-f", path).CombinedOutput(); err != nil ||
		!strings.HasPrefix(string(out), "ssh-ed25519 ") {
		t.Fatalf("ssh-keygen -y: %v %s", err, out)
	}
	os.Chmod(path, 0o644)
	if _, _, err := HostKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a readable host key: %v", err)
	}
}

func TestNewRefusesAGateNobodyCanUse(t *testing.T) {
	hk, _, _ := HostKey(filepath.Join(t.TempDir(), "k"))
	_, err := New(Options{HostKey: hk, IdleTimeout: time.Minute, Exec: func(context.Context, *Session) int { return 0 }})
	if err == nil || !strings.Contains(err.Error(), "[[operators]]") {
		t.Fatalf("no operators: %v", err)
	}
}

// Shutdown waits for a command in flight: within its grace the command
// finishes; past it the command's context ends and Shutdown still returns
// only once the command has.
func TestShutdownWaitsForTheCommandInFlight(t *testing.T) {
	ada := newKey(t, "ada")
	started, release := make(chan struct{}), make(chan struct{})
	var sawCancel atomic.Bool
	var returned atomic.Bool
	o := Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{ada.pub}}}, IdleTimeout: time.Minute,
		Exec: func(ctx context.Context, s *Session) int {
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
				sawCancel.Store(true)
				time.Sleep(100 * time.Millisecond) // recording what was cut short takes a moment
			}
			returned.Store(true)
			return 0
		}}
	hk, _, _ := HostKey(filepath.Join(t.TempDir(), "k"))
	o.HostKey = hk
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go g.Serve(ln)
	r := &rig{t: t, addr: ln.Addr().(*net.TCPAddr), known: filepath.Join(t.TempDir(), "kh")}
	client := make(chan int)
	go func() { _, _, code := r.ssh(ada.path, nil, "approve", "x"); client <- code }()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := g.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown says every session ended in time")
	}
	if !sawCancel.Load() || !returned.Load() {
		t.Fatalf("Shutdown returned with the command running (cancelled %v, returned %v)", sawCancel.Load(), returned.Load())
	}
	close(release)
	<-client // ssh ends with the connection
}

// One address holds at most MaxConnsPerAddr connections open: the next is
// closed before a byte, and a place freed takes a new one.
func TestConnectionsPerAddressAreCapped(t *testing.T) {
	ada := newKey(t, "ada")
	r := startGate(t, Options{Operators: []Operator{{Name: "ada", Keys: []gossh.PublicKey{ada.pub}}}, MaxConnsPerAddr: 2})
	// greeting reads what the server says first: its version line, or
	// nothing when it closed the connection at once
	greeting := func(c net.Conn) string {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b := make([]byte, 8)
		n, _ := io.ReadFull(c, b)
		return string(b[:n])
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", r.addr.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := dial(), dial()
	if ga, gb := greeting(a), greeting(b); ga != "SSH-2.0-" || gb != "SSH-2.0-" {
		t.Fatalf("greetings %q %q", ga, gb)
	}
	if g := greeting(dial()); g != "" {
		t.Fatalf("a third connection was served: %q", g)
	}
	a.Close()
	testwait.For(t, 10*time.Second, func() error {
		if g := greeting(dial()); g != "SSH-2.0-" {
			return fmt.Errorf("a freed place was not given: %q", g)
		}
		return nil
	})
	if !strings.Contains(r.log.String(), "too many connections open") {
		t.Fatalf("log:\n%s", r.log.String())
	}
}
