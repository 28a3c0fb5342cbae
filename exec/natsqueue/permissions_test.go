package natsqueue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/internal/testwait"
)

const permissionsConf = "testdata/permissions.conf"

// permServer runs nats-server with exactly the users and permissions of
// testdata/permissions.conf, the block docs/queue.md shows.
func permServer(t *testing.T) *server.Server {
	t.Helper()
	for _, u := range []string{"EXECUTOR", "AGENT", "KITCHEN_BOT", "ADA", "BOB"} {
		t.Setenv("VIGIL_"+u+"_PASSWORD", "pw-"+strings.ToLower(u))
	}
	opts, err := server.ProcessConfigFile(permissionsConf)
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, opts)
}

// roleConn is one user's connection; it records every permissions
// violation the server reports to it.
type roleConn struct {
	t          *testing.T
	js         jetstream.JetStream
	mu         sync.Mutex
	violations []string
}

func connectAs(t *testing.T, url, user, role string) *roleConn {
	t.Helper()
	rc := &roleConn{t: t}
	nc, err := nats.Connect(url, nats.UserInfo(user, "pw-"+map[string]string{"executor": "executor", "ci-agent": "agent",
		"kitchen-bot": "kitchen_bot", "ada": "ada", "bob": "bob"}[user]), nats.CustomInboxPrefix(natsqueue.InboxPrefix(role)),
		nats.PermissionErrOnSubscribe(true),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				rc.mu.Lock()
				rc.violations = append(rc.violations, err.Error())
				rc.mu.Unlock()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if rc.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	return rc
}

func (rc *roleConn) seen() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.violations...)
}

// refused waits until the server reported a violation naming subject (or
// a subject it starts: a consumer's carries its filter).
func (rc *roleConn) refused(act, subject string) {
	rc.t.Helper()
	testwait.For(rc.t, 10*time.Second, func() error {
		for _, v := range rc.seen() {
			if strings.Contains(v, `"`+subject) {
				return nil
			}
		}
		return fmt.Errorf("%s: the server did not refuse %s (violations: %q)", act, subject, rc.seen())
	})
}

// short is the wait for a request the server drops: it never answers one
// the user may not publish.
func short() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Second)
}

// TestPermissionsLetEachRoleDoItsPartOnly: with the documented users, the
// whole flow works (an agent submits, the executor publishes the view, an
// operator approves, the executor runs it once, the agent reads the signed
// result, the operator pulls the audit) with no permission refused; then
// every act outside a role's part is tried and refused by the server, and
// changed nothing.
func TestPermissionsLetEachRoleDoItsPartOnly(t *testing.T) {
	s := permServer(t)
	url := s.ClientURL()
	env := approvaltest.New(t)
	exe := connectAs(t, url, "executor", natsqueue.RoleExecutor)
	ex, err := startExecutor(t, exe.js, env, "exec-a", "living-room")
	if err != nil {
		t.Fatal(err)
	}
	agent := connectAs(t, url, "ci-agent", natsqueue.RoleAgent)
	ada := connectAs(t, url, "ada", natsqueue.RoleOperator)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	ac, err := natsqueue.NewClient(ctx, agent.js)
	if err != nil {
		t.Fatal(err)
	}
	a := natsqueue.AgentTasks{Client: ac}
	out, err := a.Submit(ctx, env.Play("perm-1", "/media/perm-1.mkv"), "mcp:ci")
	if err != nil || out.State != "pending" {
		t.Fatalf("agent submit: %+v %v", out, err)
	}
	oc, err := natsqueue.NewClient(ctx, ada.js)
	if err != nil {
		t.Fatal(err)
	}
	views, err := oc.List(ctx)
	if err != nil || len(views) != 1 {
		t.Fatalf("operator list: %d %v", len(views), err)
	}
	changes, stop, err := a.TaskChanges(ctx, "perm-1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	d := decision("operator:ada", true, views[0].PreviewHash)
	if _, err := oc.Decide(ctx, "perm-1", d); err != nil {
		t.Fatalf("operator decide: %v", err)
	}
	if v, err := oc.Outcome(ctx, "perm-1", d.ID); err != nil || v.Record.State != approval.Done {
		t.Fatalf("outcome: %s %v", v.Record.State, err)
	}
	select {
	case <-changes:
	case <-ctx.Done():
		t.Fatal("the agent's watch saw no change")
	}
	rec, res, err := a.Task(ctx, "perm-1")
	if err != nil || rec.State != approval.Done || res == nil {
		t.Fatalf("agent result: %+v %v %v", rec.State, res, err)
	}
	var copyBuf bytes.Buffer
	if n, err := natsqueue.PullAudit(ctx, ada.js, &copyBuf); err != nil || n == 0 {
		t.Fatalf("operator audit pull: %d %v", n, err)
	}
	if b, _ := os.ReadFile(env.AuditPath()); !bytes.HasPrefix(b, copyBuf.Bytes()) {
		t.Fatal("the pulled audit is not the executor's log")
	}
	if journalRuns(env, "living-room", "/media/perm-1.mkv") != 1 {
		t.Fatal("the approved task did not run once")
	}
	for name, rc := range map[string]*roleConn{"executor": exe, "agent": agent, "operator": ada} {
		if v := rc.seen(); len(v) != 0 {
			t.Fatalf("the %s was refused something it needs: %q", name, v)
		}
	}

	// the view as it is now: no forbidden act may change it
	taskKey := natsqueue.TaskKey("perm-1")
	kvOf := func(rc *roleConn) jetstream.KeyValue {
		kv, err := rc.js.KeyValue(ctx, natsqueue.TasksBucket)
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	agentKV, adaKV := kvOf(agent), kvOf(ada)
	before, err := adaKV.Get(ctx, taskKey)
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := json.Marshal(map[string]any{"task": map[string]any{"task_id": "perm-1"}, "decision": d})
	submitSubject := natsqueue.DeviceSubject("living-room")
	auditSubject := natsqueue.AuditSubjectFor("exec-a")
	raw := env.Play("perm-2", "/media/perm-2.mkv")

	type act struct {
		who     *roleConn
		name    string
		subject string // the subject the server must refuse
		do      func(ctx context.Context) error
	}
	acts := []act{
		{agent, "an agent puts a decision into the bucket", "$KV.vigil_tasks." + taskKey, func(ctx context.Context) error {
			_, err := agentKV.Put(ctx, taskKey, forged)
			return err
		}},
		{agent, "an agent writes a verdict", "$KV.vigil_tasks.verdict.x", func(ctx context.Context) error {
			_, err := agentKV.Put(ctx, "verdict.x", []byte("{}"))
			return err
		}},
		{agent, "an agent deletes VIGIL_SUBMIT", "$JS.API.STREAM.DELETE.VIGIL_SUBMIT", func(ctx context.Context) error {
			return agent.js.DeleteStream(ctx, natsqueue.SubmitStream)
		}},
		{agent, "an agent edits VIGIL_SUBMIT", "$JS.API.STREAM.UPDATE.VIGIL_SUBMIT", func(ctx context.Context) error {
			_, err := agent.js.UpdateStream(ctx, jetstream.StreamConfig{Name: natsqueue.SubmitStream,
				Subjects: []string{">"}, Retention: jetstream.WorkQueuePolicy})
			return err
		}},
		{agent, "an agent deletes the bucket", "$JS.API.STREAM.DELETE.KV_vigil_tasks", func(ctx context.Context) error {
			return agent.js.DeleteKeyValue(ctx, natsqueue.TasksBucket)
		}},
		{agent, "an agent consumes VIGIL_SUBMIT", "$JS.API.CONSUMER.CREATE.VIGIL_SUBMIT.sneak", func(ctx context.Context) error {
			_, err := agent.js.CreateOrUpdateConsumer(ctx, natsqueue.SubmitStream, jetstream.ConsumerConfig{Durable: "sneak",
				FilterSubject: "vigil.submit.other"})
			return err
		}},
		{agent, "an agent deletes the executor's consumer", "$JS.API.CONSUMER.DELETE.VIGIL_SUBMIT." + ex.Consumer(), func(ctx context.Context) error {
			return agent.js.DeleteConsumer(ctx, natsqueue.SubmitStream, ex.Consumer())
		}},
		{agent, "an agent reads a waiting manifest", "$JS.API.STREAM.MSG.GET.VIGIL_SUBMIT", func(ctx context.Context) error {
			s, err := agent.js.Stream(ctx, natsqueue.SubmitStream)
			if err != nil {
				return err
			}
			_, err = s.GetMsg(ctx, 1)
			return err
		}},
		{agent, "an agent listens on the executor's inbox", "_INBOX_vigil_executor.>", func(ctx context.Context) error {
			sub, err := agent.js.Conn().SubscribeSync("_INBOX_vigil_executor.>")
			if err != nil {
				return err
			}
			_, err = sub.NextMsgWithContext(ctx)
			return err
		}},
		{agent, "an agent forges an audit line", auditSubject, func(ctx context.Context) error {
			_, err := agent.js.Publish(ctx, auditSubject, []byte("{}"))
			return err
		}},
		{ada, "an operator publishes a submission", submitSubject, func(ctx context.Context) error {
			_, err := ada.js.Publish(ctx, submitSubject, raw)
			return err
		}},
		{ada, "an operator publishes a deviceless submission", "vigil.submit", func(ctx context.Context) error {
			_, err := ada.js.Publish(ctx, "vigil.submit", raw)
			return err
		}},
		{ada, "an operator consumes VIGIL_SUBMIT", "$JS.API.CONSUMER.CREATE.VIGIL_SUBMIT.sneak", func(ctx context.Context) error {
			_, err := ada.js.CreateOrUpdateConsumer(ctx, natsqueue.SubmitStream, jetstream.ConsumerConfig{Durable: "sneak",
				FilterSubject: "vigil.submit.other"})
			return err
		}},
		{ada, "an operator deletes the bucket", "$JS.API.STREAM.DELETE.KV_vigil_tasks", func(ctx context.Context) error {
			return ada.js.DeleteKeyValue(ctx, natsqueue.TasksBucket)
		}},
		{ada, "an operator purges the audit stream", "$JS.API.STREAM.PURGE.VIGIL_AUDIT", func(ctx context.Context) error {
			s, err := ada.js.Stream(ctx, natsqueue.AuditStream)
			if err != nil {
				return err
			}
			return s.Purge(ctx)
		}},
		{ada, "an operator deletes VIGIL_SUBMIT", "$JS.API.STREAM.DELETE.VIGIL_SUBMIT", func(ctx context.Context) error {
			return ada.js.DeleteStream(ctx, natsqueue.SubmitStream)
		}},
		{ada, "an operator writes a verdict", "$KV.vigil_tasks.verdict.x", func(ctx context.Context) error {
			_, err := adaKV.Put(ctx, "verdict.x", []byte("{}"))
			return err
		}},
		{ada, "an operator forges an audit line", auditSubject, func(ctx context.Context) error {
			_, err := ada.js.Publish(ctx, auditSubject, []byte("{}"))
			return err
		}},
		{ada, "an operator listens on the executor's inbox", "_INBOX_vigil_executor.>", func(ctx context.Context) error {
			sub, err := ada.js.Conn().SubscribeSync("_INBOX_vigil_executor.>")
			if err != nil {
				return err
			}
			_, err = sub.NextMsgWithContext(ctx)
			return err
		}},
		{exe, "the executor deletes the audit stream", "$JS.API.STREAM.DELETE.VIGIL_AUDIT", func(ctx context.Context) error {
			return exe.js.DeleteStream(ctx, natsqueue.AuditStream)
		}},
	}
	// all at once: each waits out a request the server never answers
	errs := make([]error, len(acts))
	var wg sync.WaitGroup
	for i, x := range acts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx, cancel := short()
			defer cancel()
			errs[i] = x.do(actx)
		}()
	}
	wg.Wait()
	for i, x := range acts {
		if errs[i] == nil {
			t.Fatalf("%s: it succeeded", x.name)
		}
		x.who.refused(x.name, x.subject)
	}

	// nothing changed: the streams, the bucket and the consumer are there,
	// the view is the same revision, no verdict was forged, nothing ran
	for _, name := range []string{natsqueue.SubmitStream, natsqueue.AuditStream, "KV_vigil_tasks"} {
		if _, err := exe.js.Stream(ctx, name); err != nil {
			t.Fatalf("stream %s after the attempts: %v", name, err)
		}
	}
	if _, err := exe.js.Consumer(ctx, natsqueue.SubmitStream, ex.Consumer()); err != nil {
		t.Fatalf("the executor's consumer after the attempts: %v", err)
	}
	after, err := kvOf(ada).Get(ctx, taskKey)
	if err != nil || after.Revision() != before.Revision() {
		t.Fatalf("the view changed: revision %d → %d (%v)", before.Revision(), after.Revision(), err)
	}
	if _, err := kvOf(ada).Get(ctx, "verdict.x"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("a forged verdict: %v", err)
	}
	if _, err := env.Queue.Get("perm-2"); err == nil {
		t.Fatal("an operator's submission reached the executor")
	}
	s2, _ := exe.js.Stream(ctx, natsqueue.SubmitStream)
	if info, err := s2.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Fatalf("the submit stream holds %d messages (%v)", info.State.Msgs, err)
	}
}

// TestAgentMayNotCreateTheStreams: on a server where nothing exists yet, an
// agent (no create rights) is told to start the executor first, instead
// of a bare timeout.
func TestAgentMayNotCreateTheStreams(t *testing.T) {
	s := permServer(t)
	agent := connectAs(t, s.ClientURL(), "ci-agent", natsqueue.RoleAgent)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := natsqueue.NewClient(ctx, agent.js)
	if err == nil || !strings.Contains(err.Error(), "may not create it") || !strings.Contains(err.Error(), "vigil serve") {
		t.Fatalf("an agent on an empty server: %v", err)
	}
	agent.refused("creating the submit stream", "$JS.API.STREAM.CREATE.VIGIL_SUBMIT")
}

// TestDocsShowThePermissionsTested: docs/queue.md holds the tested file
// verbatim, so what a reader pastes is what passed.
func TestDocsShowThePermissionsTested(t *testing.T) {
	conf, err := os.ReadFile(permissionsConf)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/queue.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, conf) {
		t.Fatalf("docs/queue.md does not hold %s verbatim; paste it into the nats-server.conf block", permissionsConf)
	}
}
