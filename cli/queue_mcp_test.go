package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// lease signs a MEDIA_PLAY lease for id with the executor's issuer key.
func (r *natsRig) lease(id string, ttl time.Duration) string {
	r.t.Helper()
	return issueLease(r.t, r.exec.home, id, ttl)
}

// issueLease signs a MEDIA_PLAY lease for id with home's issuer key.
func issueLease(t *testing.T, home, id string, ttl time.Duration) string {
	t.Helper()
	key, _, err := lease.LoadPrivateKey(filepath.Join(home, "keys", lease.IssuerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := lease.Issue(key, lease.IssueOptions{Subject: "agent:mcp", TaskID: id, Caps: []string{"MEDIA_PLAY"}, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// agentMCP starts `vigil mcp` in the agent's home (its [queue] names the
// shared queue) with the go-sdk client counting progress notifications.
func (r *natsRig) agentMCP() (*mcp.ClientSession, func() int) {
	r.t.Helper()
	client, progress := newProgressClient("queue-agent")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: r.cmd(r.agent, "agent", "mcp")}, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { cs.Close() })
	return cs, progress
}

// decideWhenVisible waits until the task's view is in the bucket and, when
// waiting is given, until it says the call is in its wait (its first
// progress notification came), then decides it from an operator's home
// with a separate `vigil` process.
func (r *natsRig) decideWhenVisible(id, op string, waiting func() bool, args ...string) chan string {
	out := make(chan string, 1)
	_, _, c := r.client(op)
	go func() {
		err := testwait.Poll(60*time.Second, func() error {
			if _, _, err := c.Get(context.Background(), id); err != nil {
				return fmt.Errorf("the task never reached the bucket: %v", err)
			}
			if waiting != nil && !waiting() {
				return errors.New("the call never waited with progress")
			}
			return nil
		})
		if err != nil {
			out <- err.Error()
			return
		}
		if res := r.run(r.ops[op], op, append(args, id)...); res.code != 0 {
			out <- "decide: " + res.out + res.err
			return
		}
		out <- ""
	}()
	return out
}

// watching says whether something watches task id's key in the tasks
// bucket (a consumer filtered on that key alone): a `vigil result --wait`
// waiting on the task holds one; the executor watches every task.
func (r *natsRig) watching(id string) func() bool {
	r.t.Helper()
	_, js, _ := r.client("executor")
	key := "$KV." + natsqueue.TasksBucket + "." + natsqueue.TaskKey(id)
	return func() bool {
		s, err := js.Stream(context.Background(), "KV_"+natsqueue.TasksBucket)
		if err != nil {
			return false
		}
		l := s.ListConsumers(context.Background())
		found := false
		for ci := range l.Info() {
			found = found || ci.Config.FilterSubject == key || slices.Contains(ci.Config.FilterSubjects, key)
		}
		return found && l.Err() == nil
	}
}

func mediaParams(id, tok, uri string, wait float64) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "media_play", Arguments: map[string]any{"task_id": id, "lease": tok,
		"media_uri": uri, "target_device": "living-room", "wait_seconds": wait}}
}

// TestQueueMcpMediaToolsAcrossHosts: an agent's `vigil mcp` on its own home
// submits media_play through the shared queue and waits; an operator on
// another home approves (or denies) with `vigil approve|deny`; the call
// returns the executor's signed result (or the denial) with progress
// notifications meanwhile, the device runs once, and `vigil result` on the
// agent's home answers from the bucket.
func TestQueueMcpMediaToolsAcrossHosts(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	cs, progress := r.agentMCP()

	for _, c := range []struct {
		id, op string
		args   []string
		status string
		code   string
	}{
		{"mcpq-ok", "alice", []string{"approve", "--yes"}, "SUCCESS", ""},
		{"mcpq-no", "bob", []string{"deny", "--reason", "not tonight"}, "FAILURE", "APPROVAL_DENIED"},
	} {
		params := mediaParams(c.id, r.lease(c.id, time.Hour), "/media/"+c.id+".mkv", 60)
		params.SetProgressToken(c.id)
		before := progress()
		dec := r.decideWhenVisible(c.id, c.op, func() bool { return progress() > before }, c.args...)
		res, sc := mcpCall(t, cs, params)
		if msg := <-dec; msg != "" {
			t.Fatal(msg)
		}
		e, _ := sc["error"].(map[string]any)
		if sc["status"] != c.status || res.IsError != (c.code != "") || (c.code != "" && e["code"] != c.code) {
			t.Fatalf("%s: %s", c.id, mcpText(res))
		}
		if c.code != "" && !strings.Contains(e["message"].(string), "not tonight") {
			t.Fatalf("the operator's reason is missing: %s", mcpText(res))
		}
		if progress() == before {
			t.Fatalf("%s: no progress notifications while waiting", c.id)
		}
		// the result is the executor's: it verifies with its operator key
		f := filepath.Join(t.TempDir(), c.id+".result.json")
		b, _ := json.Marshal(res.StructuredContent)
		os.WriteFile(f, b, 0o600)
		r.exec.must(0, "result", "verify", f)
		want := map[string]int{"mcpq-ok": 1, "mcpq-no": 0}[c.id]
		if n := r.journalRuns(c.id); n != want {
			t.Fatalf("%s: %d device actions, want %d", c.id, n, want)
		}
		// get_task_result answers the same from the bucket
		res2, sc2 := mcpCall(t, cs, &mcp.CallToolParams{Name: "get_task_result", Arguments: map[string]any{"task_id": c.id}})
		if sc2["status"] != c.status || res2.IsError != res.IsError || sc2["signature"] == nil {
			t.Fatalf("get_task_result %s: %s", c.id, mcpText(res2))
		}
	}

	// vigil result on the agent's home: from the bucket, unverified without
	// a copy of the operator key, verified with one
	got := r.must(0, r.agent, "agent", "result", "mcpq-ok")
	if !strings.Contains(got.out, `"SUCCESS"`) || !strings.Contains(got.err, "not verified") ||
		!strings.Contains(got.err, "decided by operator:") {
		t.Fatalf("result: %s%s", got.out, got.err)
	}
	r.must(1, r.agent, "agent", "result", "mcpq-no")
	pub, _ := os.ReadFile(filepath.Join(r.exec.home, "keys", lease.OperatorPubFile))
	os.MkdirAll(filepath.Join(r.agent, "keys"), 0o700)
	if err := os.WriteFile(filepath.Join(r.agent, "keys", lease.OperatorPubFile), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := r.must(0, r.agent, "agent", "result", "mcpq-ok"); strings.Contains(got.err, "not verified") {
		t.Fatalf("result with the key: %s", got.err)
	}
	r.must(2, r.agent, "agent", "result", "mcpq-never")
}

// TestQueueMcpPendingThenResultWait: a call that stops waiting answers
// pending with its deadline, as the local tool does; `vigil result --wait`
// on the agent's home then returns once an operator approved.
func TestQueueMcpPendingThenResultWait(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	cs, _ := r.agentMCP()
	const id = "mcpq-later"
	res, sc := mcpCall(t, cs, mediaParams(id, r.lease(id, time.Hour), "/media/"+id+".mkv", 0))
	if res.IsError || sc["state"] != "pending" || sc["task_id"] != id || sc["expires_at"] == nil {
		t.Fatalf("pending: %s", mcpText(res))
	}
	at, err := time.Parse(time.RFC3339, sc["expires_at"].(string))
	if err != nil || !at.After(time.Now()) {
		t.Fatalf("expires_at %v: %v", sc["expires_at"], err)
	}
	// a resubmission of the same task answers the same, and nothing is doubled
	res, sc = mcpCall(t, cs, mediaParams(id, r.lease(id, time.Hour), "/media/"+id+".mkv", 0))
	if res.IsError || sc["state"] != "pending" {
		t.Fatalf("resubmit: %s", mcpText(res))
	}

	waiter := r.cmd(r.agent, "agent", "result", id, "--wait", "60s")
	var out, errb strings.Builder
	waiter.Stdout, waiter.Stderr = &out, &errb
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	// the waiter watches the task's key: it is waiting
	testwait.Until(t, 30*time.Second, "result --wait's watch on the task", r.watching(id))
	r.must(0, r.ops["alice"], "alice", "approve", id, "--yes")
	start := time.Now()
	if err := waiter.Wait(); err != nil {
		t.Fatalf("result --wait: %v\n%s%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), `"SUCCESS"`) || time.Since(start) > 30*time.Second {
		t.Fatalf("result --wait: %s%s", out.String(), errb.String())
	}
	if n := r.journalRuns(id); n != 1 {
		t.Fatalf("%d device actions, want 1", n)
	}
	// a short wait on a task that never comes ends with exit 2
	r.must(2, r.agent, "agent", "result", "mcpq-nowhere", "--wait", "300ms")
}

// TestQueueMcpRejectionsMatchLocal: a bad lease is rejected over the shared
// queue with the very answer the local tool gives.
func TestQueueMcpRejectionsMatchLocal(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	cs, _ := r.agentMCP()
	local := newCrashHome(t, r.bin)
	client := mcp.NewClient(&mcp.Implementation{Name: "local-agent", Version: "1"}, nil)
	lcs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: local.child("", "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lcs.Close()
	// each home's leases are signed with its own issuer key
	for _, c := range []struct{ id, leaseFor, uri string }{
		{"mcpq-bad", "", "/media/x.mkv"},
		{"mcpq-bad2", "another-task", "/media/x.mkv"},
		{"mcpq-bad3", "mcpq-bad3", "relative/x.mkv"},
		{"mcpq-bad4", "mcpq-bad4", "/media/x.mkv\x1b]52;c;AAAA\x07"},
	} {
		qtok, ltok := "not-a-jwt", "not-a-jwt"
		if c.leaseFor != "" {
			qtok, ltok = r.lease(c.leaseFor, time.Hour), issueLease(t, local.home, c.leaseFor, time.Hour)
		}
		qres, qsc := mcpCall(t, cs, mediaParams(c.id, qtok, c.uri, 5))
		lres, lsc := mcpCall(t, lcs, mediaParams(c.id, ltok, c.uri, 5))
		qb, _ := json.Marshal(qsc)
		lb, _ := json.Marshal(lsc)
		if !qres.IsError || qsc["state"] != "rejected" {
			t.Fatalf("%s: not rejected over the queue: %s", c.id, mcpText(qres))
		}
		if lres.IsError != qres.IsError || string(qb) != string(lb) || mcpText(qres) != mcpText(lres) {
			t.Fatalf("%s:\nqueue %s\nlocal %s", c.id, qb, lb)
		}
	}
	// an unknown task over the queue is the local tool's BadArgs
	res, _ := mcpCall(t, cs, &mcp.CallToolParams{Name: "get_task_result", Arguments: map[string]any{"task_id": "mcpq-none", "wait_seconds": 0}})
	if !res.IsError || !strings.Contains(mcpText(res), `no task \"mcpq-none\"`) {
		t.Fatalf("unknown task: %s", mcpText(res))
	}
}

// TestQueueMcpSecretsStayMasked plants secrets in a media URI and in a
// denial's reason: the agent's MCP answers (pending, denial, the bucket's
// result) never carry them.
func TestQueueMcpSecretsStayMasked(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	cs, _ := r.agentMCP()
	const (
		pw     = "Zq8vW3nR5tK1"
		gh     = "ghp_7Hk2LmN9pQ4rS6tU8vW1xY3zA5bC7dE9fG2h"
		stripe = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	)
	uri := "https://ada:" + pw + "@media.example.com/v/1.m3u8?gh=" + gh
	var outputs []string
	for _, id := range []string{"mcpq-leak-1", "mcpq-leak-2"} {
		res, _ := mcpCall(t, cs, mediaParams(id, r.lease(id, time.Hour), uri, 0))
		outputs = append(outputs, mcpText(res))
	}
	dec := r.decideWhenVisible("mcpq-leak-1", "alice", nil, "deny", "--reason", "no: the key is "+stripe)
	res, sc := mcpCall(t, cs, &mcp.CallToolParams{Name: "get_task_result", Arguments: map[string]any{"task_id": "mcpq-leak-1", "wait_seconds": 60}})
	if msg := <-dec; msg != "" {
		t.Fatal(msg)
	}
	if e, _ := sc["error"].(map[string]any); e["code"] != "APPROVAL_DENIED" {
		t.Fatalf("denial: %s", mcpText(res))
	}
	outputs = append(outputs, mcpText(res))
	dec = r.decideWhenVisible("mcpq-leak-2", "bob", nil, "approve", "--yes")
	res, _ = mcpCall(t, cs, &mcp.CallToolParams{Name: "get_task_result", Arguments: map[string]any{"task_id": "mcpq-leak-2", "wait_seconds": 60}})
	if msg := <-dec; msg != "" {
		t.Fatal(msg)
	}
	outputs = append(outputs, mcpText(res))
	got := r.run(r.agent, "agent", "result", "mcpq-leak-1")
	outputs = append(outputs, got.out+got.err)
	for _, o := range outputs {
		for _, s := range []string{pw, gh, stripe} {
			if strings.Contains(o, s) {
				t.Fatalf("secret %q reached the agent:\n%s", s, o)
			}
		}
	}
	if !strings.Contains(outputs[2], "no: the key is") {
		t.Fatalf("the reason is dropped, not masked: %s", outputs[2])
	}
}

// TestQueueMcpWaitEndsAtTheDeadline: a call waiting longer than the task
// lives answers with the expiry soon after the deadline, not at the end of
// its wait.
func TestQueueMcpWaitEndsAtTheDeadline(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	cs, _ := r.agentMCP()
	const id = "mcpq-expire"
	start := time.Now()
	res, sc := mcpCall(t, cs, mediaParams(id, r.lease(id, 4*time.Second), "/media/"+id+".mkv", 120))
	took := time.Since(start)
	e, _ := sc["error"].(map[string]any)
	// the bound is generous for a loaded machine; the wait asked for 120 s
	if !res.IsError || e["code"] != "LEASE_EXPIRED" || took > 60*time.Second {
		t.Fatalf("after %s: %s", took, mcpText(res))
	}
	if n := r.journalRuns(id); n != 0 {
		t.Fatalf("%d device actions for an expired task", n)
	}
}
