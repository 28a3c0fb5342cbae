package cli

import (
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/vigil-dev/vigil/internal/testbin"
)

// newPermsRig is natsRig on a server with exactly the users and
// permissions docs/queue.md shows (exec/natsqueue/testdata/permissions.conf):
// executor, ci-agent (an agent), ada and bob (operators).
func newPermsRig(t *testing.T) (*natsRig, string, string) {
	t.Helper()
	testbin.FullRunOnly(t, "vigil processes of every role around a NATS server with permissions")
	for env, user := range map[string]string{"VIGIL_EXECUTOR_PASSWORD": "executor", "VIGIL_AGENT_PASSWORD": "ci-agent",
		"VIGIL_KITCHEN_BOT_PASSWORD": "kitchen-bot", "VIGIL_ADA_PASSWORD": "ada", "VIGIL_BOB_PASSWORD": "bob"} {
		t.Setenv(env, natsPassword(user))
	}
	opts, err := server.ProcessConfigFile(filepath.Join("..", "exec", "natsqueue", "testdata", "permissions.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, t.TempDir(), true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	r := &natsRig{t: t, bin: testbin.Vigil(t), srv: s, port: s.Addr().(*net.TCPAddr).Port, url: s.ClientURL()}
	r.exec = newCrashHome(t, r.bin)
	r.addQueue(r.exec.home, "executor")
	return r, r.newHome("ci-agent"), r.newHome("ada")
}

// TestQueuePermissionsWithRealProcesses: with the documented permissions,
// the CLI of each role does its part with no permission refused (the NATS
// client prints a refusal on stderr: none may appear), and an agent's
// approve and an operator's submit are refused by the server and change
// nothing.
func TestQueuePermissionsWithRealProcesses(t *testing.T) {
	r, agent, ada := newPermsRig(t)
	ex := r.startExecutor()
	clean := func(what string, res runOut) {
		t.Helper()
		if strings.Contains(strings.ToLower(res.err), "permissions violation") {
			t.Fatalf("%s was refused something it needs:\n%s", what, res.err)
		}
	}
	sub := r.must(0, agent, "ci-agent", "submit", r.manifest("pr-1", time.Hour, ""))
	clean("the agent's submit", sub)
	var v map[string]any
	if err := json.Unmarshal([]byte(sub.out), &v); err != nil || v["state"] != "pending" {
		t.Fatalf("submit: %v\n%s", err, sub.out)
	}
	pend := r.must(0, ada, "ada", "pending", "--json")
	clean("the operator's pending", pend)
	if !strings.Contains(pend.out, `"task_id": "pr-1"`) {
		t.Fatalf("pending:\n%s", pend.out)
	}
	clean("the operator's preview", r.must(0, ada, "ada", "preview", "pr-1"))

	// an agent may not decide (the server refuses already the operator's
	// inbox; TestPermissionsLetEachRoleDoItsPartOnly shows the bucket
	// write refused too); an operator may not submit
	denied := r.run(agent, "ci-agent", "approve", "pr-1", "--yes")
	if denied.code == 0 || !strings.Contains(strings.ToLower(denied.err), "permissions violation") {
		t.Fatalf("an agent's approve: exit %d\n%s%s", denied.code, denied.out, denied.err)
	}
	forged := r.run(ada, "ada", "submit", r.manifest("pr-2", time.Hour, ""))
	if forged.code == 0 || !strings.Contains(strings.ToLower(forged.err), "permissions violation") {
		t.Fatalf("an operator's submit: exit %d\n%s%s", forged.code, forged.out, forged.err)
	}

	ap := r.must(0, ada, "ada", "approve", "pr-1", "--yes")
	clean("the operator's approve", ap)
	var res map[string]any
	if err := json.Unmarshal([]byte(ap.out), &res); err != nil || res["status"] != "SUCCESS" {
		t.Fatalf("approve printed %s (%v)", ap.out, err)
	}
	clean("the agent's result", r.must(0, agent, "ci-agent", "result", "pr-1"))
	pull := r.must(0, ada, "ada", "queue", "audit-pull", t.TempDir())
	clean("the operator's audit-pull", pull)
	if n := r.journalRuns("pr-1"); n != 1 {
		t.Fatalf("device ran %d times", n)
	}
	if n := r.journalRuns("pr-2"); n != 0 {
		t.Fatal("the operator's submission ran")
	}
	recs := r.exec.checkInvariants("pr")
	if got := recs["pr-1"].DecidedBy; got != "operator:ada" {
		t.Fatalf("decided_by %q", got)
	}
	if _, ok := recs["pr-2"]; ok {
		t.Fatal("the operator's submission reached the executor")
	}
	if code := ex.stop(t); code != 0 {
		t.Fatalf("serve exit %d\n%s", code, ex.stderr.String())
	}
	if strings.Contains(strings.ToLower(ex.stderr.String()), "permissions violation") {
		t.Fatalf("the executor was refused something it needs:\n%s", ex.stderr.String())
	}
}
