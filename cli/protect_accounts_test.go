package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/internal/testbin"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// account is a Unix account made for one test.
type account struct {
	name     string
	uid, gid uint32
}

// newAccount makes a system account without a home or a login shell
// (useradd; userdel at cleanup), as docs/protect.md makes the executor's.
func newAccount(t *testing.T, role string) account {
	t.Helper()
	useradd, userdel := testbin.Tool(t, "useradd"), testbin.Tool(t, "userdel")
	b := make([]byte, 3)
	rand.Read(b)
	name := "vigil-t-" + role + "-" + hex.EncodeToString(b)
	var out []byte
	var err error
	// other tests on the machine may hold /etc/passwd's lock a moment
	for try := 0; try < 20; try++ {
		out, err = exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
			"--user-group", name).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "lock") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(userdel, name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return account{name: name, uid: uint32(uid), gid: uint32(gid)}
}

// as is a command run as a (no supplementary groups), with a bare
// environment naming the home.
func (a account) as(home, bin string, args ...string) *exec.Cmd {
	c := exec.Command(bin, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid}}
	c.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", "VIGIL_HOME=" + home}
	c.Dir = "/"
	return c
}

// result runs c and returns its stdout, stderr and exit code.
func result(t *testing.T, c *exec.Cmd) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%s: %v", c.Args, err)
	}
	return out.String(), errb.String(), 0
}

// sharedVigil copies the test binary into a folder every account may run
// it from (the build folder is root's, 0700).
func sharedVigil(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.Open(testbin.Vigil(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "vigil")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAgentAccountCannotDecide is the protected deployment with real Unix
// accounts: the executor's account owns a 0700 home holding a pending
// task; an agent running as another account can neither approve it with
// `vigil approve` nor edit the home's files, so the task stays pending and
// the audit log holds no decision. `vigil serve` runs as the executor's
// account on that home and stops on SIGTERM, and refuses the home once its
// group may write it.
func TestAgentAccountCannotDecide(t *testing.T) {
	if os.Getuid() != 0 && os.Getenv("CI") != "true" {
		t.Skip("making Unix accounts needs root (CI runs as root and never skips this)")
	}
	svc, agent := newAccount(t, "svc"), newAccount(t, "agent")
	bin := sharedVigil(t)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[[leases.keys]]\nkid = \"local\"\nalg = \"EdDSA\"\npublic_key = \"keys/issuer.pub.pem\"\n\n" +
		"[[devices]]\nid = \"living-room\"\ndriver = \"sim\"\n"
	writeFile(t, filepath.Join(home, "config.toml"), cfg, 0o600)
	for _, p := range []string{home, filepath.Join(home, "config.toml")} {
		if err := os.Chown(p, int(svc.uid), int(svc.gid)); err != nil {
			t.Fatal(err)
		}
	}
	mustAs := func(a account, stdin string, args ...string) string {
		t.Helper()
		c := a.as(home, bin, args...)
		c.Stdin = strings.NewReader(stdin)
		out, errs, code := result(t, c)
		if code != 0 {
			t.Fatalf("%s: vigil %s: exit %d\n%s%s", a.name, strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	mustAs(svc, "", "keys", "init")
	tok := strings.TrimSpace(mustAs(svc, "", "lease", "issue", "--sub", "agent:claude", "--task-id", "t1",
		"--cap", "MEDIA_PLAY", "--ttl", "10m"))
	m, _ := json.Marshal(map[string]any{"task_id": "t1", "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": "/media/t1.mkv", "target_device": "living-room"}})
	if out := mustAs(svc, string(m), "submit", "-"); !strings.Contains(out, `"pending"`) {
		t.Fatalf("submit: %s", out)
	}

	// the agent's own vigil approve on that home, with the home's config
	// and with one of its own it may read
	agentCfg := filepath.Join(filepath.Dir(bin), "agent.toml")
	writeFile(t, agentCfg, "", 0o644)
	for _, args := range [][]string{{"approve", "t1", "--yes"}, {"--config", agentCfg, "approve", "t1", "--yes"}} {
		out, errs, code := result(t, agent.as(home, bin, args...))
		if code == 0 || !strings.Contains(errs, "permission denied") {
			t.Fatalf("%s: vigil %s: exit %d, want a refusal saying permission denied\n%s%s",
				agent.name, strings.Join(args, " "), code, out, errs)
		}
		t.Logf("%s: vigil %s: exit %d: %s", agent.name, strings.Join(args, " "), code, strings.TrimSpace(errs))
	}
	// and its edits: a decided record, a line in the audit log, a manifest
	// dropped for serve to submit, the task removed, the home opened up
	sh := testbin.Tool(t, "sh")
	for _, edit := range []string{
		`echo '{"state":"approved"}' > "$VIGIL_HOME/tasks/t1/record.json"`,
		`echo '{"event":"approved","task_id":"t1"}' >> "$VIGIL_HOME/audit.log"`,
		`echo '{"task_id":"t2"}' > "$VIGIL_HOME/inbox/new/t2.json"`,
		`rm -rf "$VIGIL_HOME/tasks/t1"`,
		`chmod 777 "$VIGIL_HOME"`,
		// nor read: the issuer's key would mint leases, the config names tokens
		`ls "$VIGIL_HOME/keys"`,
		`cat "$VIGIL_HOME/config.toml"`,
	} {
		out, errs, code := result(t, agent.as(home, sh, "-c", edit))
		if code == 0 || !strings.Contains(strings.ToLower(errs), "permission denied") &&
			!strings.Contains(errs, "Operation not permitted") {
			t.Fatalf("%s: %s: exit %d, want permission denied\n%s%s", agent.name, edit, code, out, errs)
		}
		t.Logf("%s: %s: %s", agent.name, edit, strings.TrimSpace(errs))
	}

	out := mustAs(svc, "", "pending", "--json")
	if !strings.Contains(out, `"t1"`) || strings.Contains(out, `"t2"`) {
		t.Fatalf("%s: pending after the agent's attempts:\n%s", svc.name, out)
	}
	audit.Scan(filepath.Join(home, "audit.log"), 0, func(l audit.Line) bool {
		if e := l.Entry.Event; e == audit.EventApproved || e == audit.EventDenied || e == audit.EventExecuted {
			t.Fatalf("the audit log holds a decision: %+v", l.Entry)
		}
		return true
	})
	if rep, err := audit.Verify(filepath.Join(home, "audit.log")); err != nil || !rep.OK {
		t.Fatalf("audit verify: %v %s", err, rep)
	}

	// what doctor tells the agent's account (its config readable, the
	// home not): it cannot write the home
	out, errs, _ := result(t, agent.as(home, bin, "--config", agentCfg, "doctor", "--json"))
	if !strings.Contains(out, "this account ("+agent.name+") cannot write the home, "+svc.name+"'s") ||
		!strings.Contains(out, "this account may not read it: run vigil doctor as "+svc.name) {
		t.Fatalf("%s: doctor:\n%s%s", agent.name, out, errs)
	}

	serveAs(t, svc, home, bin)
}

// serveAs runs `vigil serve` as a on its home: it starts and stops on
// SIGTERM (exit 0); once the home's group may write it, it refuses to
// start (exit 2) saying so.
func serveAs(t *testing.T, a account, home, bin string) {
	t.Helper()
	c := a.as(home, bin, "serve")
	logs := &serveLogBuffer{}
	c.Stdout, c.Stderr = io.Discard, logs
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t.Cleanup(func() { c.Process.Kill() })
	testwait.Until(t, 20*time.Second, "vigil serve running as "+a.name, func() bool {
		return strings.Contains(logs.String(), "vigil serve: running")
	})
	if err := c.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve as %s after SIGTERM: %v\n%s", a.name, err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve as %s did not stop on SIGTERM\n%s", a.name, logs.String())
	}

	if err := os.Chmod(home, 0o770); err != nil {
		t.Fatal(err)
	}
	out, errs, code := result(t, a.as(home, bin, "serve"))
	if code != ExitBadInput || !strings.Contains(errs, "refusing to start") ||
		!strings.Contains(errs, home+" (drwxrwx---) owned by "+a.name+": its group may write it (chmod go-w "+home+")") {
		t.Fatalf("serve as %s on a group-writable home: exit %d, want %d naming the home\n%s%s", a.name, code,
			ExitBadInput, out, errs)
	}
}
