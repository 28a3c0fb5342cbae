package natsqueue_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
)

// echoServer is a hostile NATS server on loopback: it answers a client's
// CONNECT with an error that echoes the token the client sent, a
// secret-shaped value and a terminal escape. It speaks just enough of the
// protocol for nats.go to read the error.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = c.Write([]byte(`INFO {"server_id":"x","version":"2.10.0","proto":1,"max_payload":1048576,"auth_required":true,"jetstream":true}` + "\r\n"))
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				var connect struct {
					Token string `json:"auth_token"`
				}
				_ = json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(line), "CONNECT ")), &connect)
				_, _ = c.Write([]byte("-ERR 'bad token " + connect.Token + " for ghp_7Hk2LmN9pQ4rS6tU8vW1xY3zA5bC7dE9fG2h \x1b]2;pwned\x07'\r\n"))
			}()
		}
	}()
	return "nats://" + l.Addr().String()
}

// TestConnectShowsAServersErrorMasked: what a server answers can echo what
// the client sent (here the token it connected with); the error Connect
// returns masks the token and every secret shape, and carries no escape.
func TestConnectShowsAServersErrorMasked(t *testing.T) {
	const tok = "plain-looking-nats-token-4821"
	url := echoServer(t)
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: config.QueueConfig{URL: url, TokenEnv: "T"},
		Getenv: func(string) string { return tok }, Name: "t"})
	if err == nil {
		nc.Close()
		t.Fatal("the hostile server was accepted")
	}
	msg := err.Error()
	for _, bad := range []string{tok, "ghp_7Hk2", "\x1b", "\x07"} {
		if strings.Contains(msg, bad) {
			t.Fatalf("the error shows %q: %q", bad, msg)
		}
	}
	if !strings.Contains(msg, "bad token") || !strings.Contains(msg, "cannot reach "+url) {
		t.Fatalf("the error lost what it says: %q", msg)
	}
}

// TestPreviewChangedRefusalIsShownSafely: a decision written straight into
// the bucket carries a "preview hash" made of terminal escapes; the local
// queue refuses it quoting the hash's start, and neither the refusal the
// executor publishes nor what an operator is shown of it carries an escape.
func TestPreviewChangedRefusalIsShownSafely(t *testing.T) {
	r := newRig(t)
	r.submit("esc-1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := decision("operator:eve@h", true, "\x1b]2;x\x07\x1b[2J")
	r.putDecision("esc-1", d)
	out, err := r.c.Outcome(ctx, "esc-1", d.ID)
	if err != nil || out.Refused == nil || out.Refused.Code != "preview_changed" {
		t.Fatalf("outcome %+v %v", out.Refused, err)
	}
	for what, s := range map[string]string{"published": out.Refused.Message, "shown": out.Refused.Shown()} {
		if strings.ContainsAny(s, "\x1b\x07") {
			t.Fatalf("the %s refusal carries an escape: %q", what, s)
		}
	}
	// a refusal anyone with write access put in the bucket: shown safely
	evil := natsqueue.Refusal{Message: "no \x1b[31m ghp_7Hk2LmN9pQ4rS6tU8vW1xY3zA5bC7dE9fG2h"}
	if s := evil.Shown(); strings.ContainsAny(s, "\x1b") || strings.Contains(s, "ghp_7Hk2") {
		t.Fatalf("shown: %q", s)
	}
}

// TestAgentTasksRefusesAnotherTasksResult: a signed result copied from
// another task's view verifies, but is not this task's answer: the agent's
// Task and Result refuse it (task.ErrNotThisTask), as does the operator's
// Result; the record itself is still read. A result edited to name this
// task answers another request (its request hash) and is refused too.
func TestAgentTasksRefusesAnotherTasksResult(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	va := r.submit("cp-a")
	if _, err := r.c.Decide(ctx, "cp-a", decision("operator:op@h", true, va.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	done, err := r.c.Outcome(ctx, "cp-a", "")
	if err != nil || done.Result == nil {
		t.Fatalf("cp-a: %+v %v", done.Record.State, err)
	}
	r.submit("cp-b")
	copyResult := func(res *task.Result) {
		t.Helper()
		v, rev, err := r.c.Get(ctx, "cp-b")
		if err != nil {
			t.Fatal(err)
		}
		v.Record.State, v.Result = approval.Done, res
		b, _ := json.Marshal(v)
		if _, err := r.kv.Update(ctx, natsqueue.TaskKey("cp-b"), b, rev); err != nil {
			t.Fatal(err)
		}
	}
	o := r.operator()
	check := func(what string, a natsqueue.AgentTasks) {
		t.Helper()
		if _, res, err := a.Task(ctx, "cp-b"); !errors.Is(err, task.ErrNotThisTask) || res != nil {
			t.Fatalf("%s: Task gave %+v %v", what, res, err)
		}
		if res, err := a.Result("cp-b"); !errors.Is(err, task.ErrNotThisTask) || res != nil {
			t.Fatalf("%s: Result gave %+v %v", what, res, err)
		}
		if rec, err := a.Get("cp-b"); err != nil || rec.TaskID != "cp-b" {
			t.Fatalf("%s: Get gave %+v %v", what, rec, err)
		}
		if res, err := o.Result("cp-b"); !errors.Is(err, task.ErrNotThisTask) || res != nil {
			t.Fatalf("%s: the operator's Result gave %+v %v", what, res, err)
		}
	}
	copyResult(done.Result)
	check("cp-a's result", natsqueue.AgentTasks{Client: r.c, OperatorKey: r.operatorKey()})
	renamed := *done.Result
	renamed.TaskID = "cp-b"
	copyResult(&renamed)
	check("renamed, unchecked", natsqueue.AgentTasks{Client: r.c}) // no key: the signature is not read
}

// TestAgentSubmitRefusesAnotherTasksVerdict: a verdict put under a
// manifest's key before the executor answers (anyone who may write the
// bucket could) naming another task, or carrying another task's result,
// is refused rather than returned as this submission's outcome.
func TestAgentSubmitRefusesAnotherTasksVerdict(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := natsqueue.AgentTasks{Client: r.c}
	for i, v := range []natsqueue.Verdict{
		{TaskID: "someone-else", State: "pending"},
		{TaskID: "vd-2", State: "done", Result: &task.Result{TaskID: "someone-else", Status: task.StatusSuccess}},
	} {
		id := []string{"vd-1", "vd-2"}[i]
		raw := r.env.Play(id, "/media/"+id+".mkv")
		b, _ := json.Marshal(v)
		if _, err := r.kv.Put(ctx, natsqueue.VerdictKey(natsqueue.Digest(raw)), b); err != nil {
			t.Fatal(err)
		}
		if out, err := a.Submit(ctx, raw, ""); !errors.Is(err, task.ErrNotThisTask) {
			t.Fatalf("%s: %+v %v", id, out, err)
		}
	}
}
