package cli

import (
	"bytes"
	"context"
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
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/internal/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// natsRig is a real nats-server (JetStream on, a temp store) and Vigil
// homes on it: one executor (keys, the sim device), an agent and two
// operators, each its own home and NATS user.
type natsRig struct {
	t     *testing.T
	bin   string
	store string
	port  int
	srv   *server.Server
	url   string

	exec  *crashHome
	agent string
	ops   map[string]string // NATS user → home
}

var natsUsers = []string{"executor", "agent", "alice", "bob"}

func natsPassword(user string) string { return "pw-" + user + "-not-a-secret" }

func newNatsRig(t *testing.T) *natsRig {
	t.Helper()
	testbin.FullRunOnly(t, "several vigil processes around a NATS server")
	r := &natsRig{t: t, bin: testbin.Vigil(t), store: t.TempDir(), port: -1}
	r.startServer()
	t.Cleanup(func() { r.srv.Shutdown(); r.srv.WaitForShutdown() })
	r.exec = newCrashHome(t, r.bin)
	r.addQueue(r.exec.home, "executor")
	r.agent = r.newHome("agent")
	r.ops = map[string]string{"alice": r.newHome("alice"), "bob": r.newHome("bob")}
	return r
}

// startServer starts (or restarts, on the same port and store) the server.
func (r *natsRig) startServer() {
	r.t.Helper()
	var users []*server.User
	for _, u := range natsUsers {
		users = append(users, &server.User{Username: u, Password: natsPassword(u)})
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: r.port, JetStream: true, StoreDir: r.store,
		Users: users, NoLog: true, NoSigs: true})
	if err != nil {
		r.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		r.t.Fatal("nats-server did not start")
	}
	r.srv = s
	r.port = s.Addr().(*net.TCPAddr).Port
	r.url = fmt.Sprintf("nats://127.0.0.1:%d", r.port)
}

// restartServer stops the server and starts it again on the same store.
func (r *natsRig) restartServer(down time.Duration) {
	r.t.Helper()
	r.srv.Shutdown()
	r.srv.WaitForShutdown()
	time.Sleep(down)
	r.startServer()
}

func (r *natsRig) addQueue(home, user string) {
	r.t.Helper()
	f, err := os.OpenFile(filepath.Join(home, "config.toml"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "\n[queue]\nurl = %q\nuser_env = \"VIGIL_TEST_NATS_USER\"\npassword_env = \"VIGIL_TEST_NATS_PASSWORD\"\n", r.url)
}

func (r *natsRig) newHome(user string) string {
	home := r.t.TempDir()
	r.addQueue(home, user)
	return home
}

// cmd is vigil run in home as the NATS user.
func (r *natsRig) cmd(home, user string, args ...string) *exec.Cmd {
	c := exec.Command(r.bin, append([]string{"--home", home}, args...)...)
	c.Env = append(os.Environ(), "VIGIL_HOME="+home, "VIGIL_TEST_NATS_USER="+user,
		"VIGIL_TEST_NATS_PASSWORD="+natsPassword(user))
	return c
}

type runOut struct {
	out, err string
	code     int
}

func (r *natsRig) run(home, user string, args ...string) runOut {
	r.t.Helper()
	c := r.cmd(home, user, args...)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return runOut{o.String(), e.String(), code}
}

func (r *natsRig) must(want int, home, user string, args ...string) runOut {
	r.t.Helper()
	res := r.run(home, user, args...)
	if res.code != want {
		r.t.Fatalf("vigil %s (as %s): exit %d, want %d\n%s%s", strings.Join(args, " "), user, res.code, want, res.out, res.err)
	}
	return res
}

// startExecutor runs `vigil serve` in the executor's home.
func (r *natsRig) startExecutor(env ...string) *servedChild {
	r.t.Helper()
	return r.exec.startServe(append([]string{"VIGIL_TEST_NATS_USER=executor",
		"VIGIL_TEST_NATS_PASSWORD=" + natsPassword("executor")}, env...)...)
}

// manifest writes a MEDIA_PLAY manifest for id, its lease signed with the
// executor's issuer key, and returns its path.
func (r *natsRig) manifest(id string, ttl time.Duration, uri string) string {
	r.t.Helper()
	key, _, err := lease.LoadPrivateKey(filepath.Join(r.exec.home, "keys", lease.IssuerKeyFile))
	if err != nil {
		r.t.Fatal(err)
	}
	tok, err := lease.Issue(key, lease.IssueOptions{Subject: "agent:ci", TaskID: id, Caps: []string{"MEDIA_PLAY"}, TTL: ttl})
	if err != nil {
		r.t.Fatal(err)
	}
	if uri == "" {
		uri = "/media/" + id + ".mkv"
	}
	b, _ := json.Marshal(map[string]any{"task_id": id, "capability_id": "MEDIA_PLAY", "lease": tok,
		"inputs": map[string]any{"media_uri": uri, "target_device": "living-room"}})
	p := filepath.Join(r.t.TempDir(), id+".json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// submit submits a manifest as the agent and returns the verdict JSON.
func (r *natsRig) submit(id string, ttl time.Duration) map[string]any {
	r.t.Helper()
	res := r.must(0, r.agent, "agent", "submit", r.manifest(id, ttl, ""))
	var v map[string]any
	if err := json.Unmarshal([]byte(res.out), &v); err != nil {
		r.t.Fatalf("submit: %v\n%s", err, res.out)
	}
	if v["state"] != "pending" || v["preview_hash"] == "" {
		r.t.Fatalf("submit %s: %v", id, v)
	}
	return v
}

// journalRuns counts the device actions for a task (the sim device's journal).
func (r *natsRig) journalRuns(id string) int {
	b, _ := os.ReadFile(filepath.Join(r.exec.home, "devices", "living-room.journal"))
	return strings.Count(string(b), "/media/"+id+".mkv")
}

// client is an in-process connection as user, for reading the bucket.
func (r *natsRig) client(user string) (*nats.Conn, jetstream.JetStream, *natsqueue.Client) {
	r.t.Helper()
	nc, err := nats.Connect(r.url, nats.UserInfo(user, natsPassword(user)), nats.MaxReconnects(-1),
		nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := natsqueue.NewClient(ctx, js)
	if err != nil {
		r.t.Fatal(err)
	}
	return nc, js, c
}

// TestQueueAgentExecutorOperatorFlow: an agent on one home submits, an
// operator on another sees the masked preview and approves, the executor
// on a third runs it once and the operator gets the signed result.
func TestQueueAgentExecutorOperatorFlow(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	v := r.submit("flow-1", time.Hour)
	pend := r.must(0, r.ops["alice"], "alice", "pending", "--json")
	if !strings.Contains(pend.out, `"task_id": "flow-1"`) || !strings.Contains(pend.out, v["preview_hash"].(string)) {
		t.Fatalf("pending on the operator's host:\n%s", pend.out)
	}
	pv := r.must(0, r.ops["alice"], "alice", "preview", "flow-1")
	if !strings.Contains(pv.out, "/media/flow-1.mkv") || !strings.Contains(pv.out, "preview_hash: "+v["preview_hash"].(string)) {
		t.Fatalf("preview on the operator's host:\n%s", pv.out)
	}
	ap := r.must(0, r.ops["alice"], "alice", "approve", "flow-1", "--yes")
	var res map[string]any
	if err := json.Unmarshal([]byte(ap.out), &res); err != nil || res["status"] != "SUCCESS" || res["signature"] == nil {
		t.Fatalf("approve printed %s (%v)", ap.out, err)
	}
	if n := r.journalRuns("flow-1"); n != 1 {
		t.Fatalf("device ran %d times", n)
	}
	recs := r.exec.checkInvariants("flow")
	if got := recs["flow-1"].DecidedBy; got != "operator:alice" {
		t.Fatalf("decided_by %q, want operator:alice", got)
	}
	// the executor's local CLI agrees (a decision after is told who won)
	late := r.run(r.ops["bob"], "bob", "deny", "flow-1", "--reason", "late")
	if late.code != 1 || !strings.Contains(late.err, "operator:alice") {
		t.Fatalf("a second decision: exit %d\n%s%s", late.code, late.out, late.err)
	}
	if code := ex.stop(t); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, ex.stderr.String())
	}
}
