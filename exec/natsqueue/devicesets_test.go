package natsqueue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// startServer runs an embedded nats-server with JetStream on a temp store.
func startServer(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	if opts == nil {
		opts = &server.Options{}
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
	return s
}

func connectJS(t testing.TB, url string, opts ...nats.Option) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// startTwoExecutors starts exec-a serving living-room and exec-b serving
// the kitchen, each on a home of its own, on server s.
func startTwoExecutors(t *testing.T, s *server.Server) (envA, envB *approvaltest.Env, exA, exB *natsqueue.Executor) {
	t.Helper()
	envA = approvaltest.New(t)
	envB = approvaltest.New(t, config.DeviceConfig{ID: kitchen, Driver: "sim"})
	var err error
	if exA, err = startExecutor(t, connectJS(t, s.ClientURL()), envA, "exec-a", "living-room"); err != nil {
		t.Fatal(err)
	}
	if exB, err = startExecutor(t, connectJS(t, s.ClientURL()), envB, "exec-b", kitchen); err != nil {
		t.Fatal(err)
	}
	return envA, envB, exA, exB
}

// startExecutor makes an executor for env serving devices, claims its
// devices (the error, if any, is returned: nothing runs then) and runs it
// until the test ends.
func startExecutor(t testing.TB, js jetstream.JetStream, env *approvaltest.Env, id string, devices ...string) (*natsqueue.Executor, error) {
	t.Helper()
	return startExecutorWith(t, natsqueue.ExecutorOptions{JS: js, Queue: env.Queue, AuditPath: env.AuditPath(),
		Host: id + "-host", Devices: devices, ID: id})
}

// startExecutorWith is startExecutor with all its options given.
func startExecutorWith(t testing.TB, o natsqueue.ExecutorOptions) (*natsqueue.Executor, error) {
	t.Helper()
	id := o.ID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ex, err := natsqueue.NewExecutor(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.Claim(ctx); err != nil {
		return nil, err
	}
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(rctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("executor %s: %v", id, err)
		}
	})
	return ex, nil
}

func journalRuns(env *approvaltest.Env, device, uri string) int {
	b, _ := os.ReadFile(filepath.Join(env.SimDir(), device+".journal"))
	return strings.Count(string(b), uri)
}

// A device id with what a subject token cannot hold.
const kitchen = "kitchen.speaker *>"

func TestDeviceSubjectIsOneTokenForAnyID(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"living-room", kitchen, "a.b", "a b", "*", ">", "é", "a.b.c", "a_b"} {
		s := natsqueue.DeviceSubject(id)
		tok := strings.TrimPrefix(s, "vigil.submit.")
		if tok == "" || strings.ContainsAny(tok, ".*> \t") || !strings.HasPrefix(s, "vigil.submit.") {
			t.Fatalf("%q → %q: not one plain token under vigil.submit", id, s)
		}
		if other, ok := seen[s]; ok {
			t.Fatalf("%q and %q share %s", id, other, s)
		}
		seen[s] = id
	}
	if got := natsqueue.SubjectFor([]byte(`{"task_id":"s","capability_id":"SEARCH_TEXT","inputs":{"query":"x"}}`)); got != natsqueue.SubmitSubject {
		t.Fatalf("a manifest naming no device goes to %s", got)
	}
	if got := natsqueue.SubjectFor([]byte(`not json`)); got != natsqueue.SubmitSubject {
		t.Fatalf("an unreadable manifest goes to %s", got)
	}
}

// TestTwoExecutorsTakeOnlyTheirDevices: two executors with disjoint device
// sets on one server; each takes only its devices' submissions, publishes
// views naming itself, applies only decisions on its own tasks, and runs
// each approved task once.
func TestTwoExecutorsTakeOnlyTheirDevices(t *testing.T) {
	s := startServer(t, nil)
	envA, envB, exA, exB := startTwoExecutors(t, s)
	if exA.Consumer() == exB.Consumer() {
		t.Fatal("two device sets, one consumer name")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := natsqueue.NewClient(ctx, connectJS(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	type sub struct {
		env      *approvaltest.Env
		device   string
		executor string
	}
	var ids []string
	want := map[string]sub{}
	for i := range 3 {
		for _, x := range []sub{{envA, "living-room", exA.ID()}, {envB, kitchen, exB.ID()}} {
			id := fmt.Sprintf("ds-%s-%d", x.executor, i)
			raw := x.env.Manifest(id, "MEDIA_PLAY", map[string]any{"media_uri": "/media/" + id + ".mkv",
				"target_device": x.device}, 30*time.Minute)
			d, err := c.Publish(ctx, raw)
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.Verdict(ctx, d)
			if err != nil || v.State != "pending" {
				t.Fatalf("%s: %+v %v", id, v, err)
			}
			ids = append(ids, id)
			want[id] = x
		}
	}
	for _, id := range ids {
		v, _, err := c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if v.ExecutorID != want[id].executor {
			t.Fatalf("%s is %s's, its view names %q", id, want[id].executor, v.ExecutorID)
		}
		if _, err := c.Decide(ctx, id, decision("operator:ada@h", true, v.PreviewHash)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		out, err := c.Outcome(ctx, id, "")
		if err != nil || out.Record.State != approval.Done || out.Result == nil {
			t.Fatalf("%s: %s %v", id, out.Record.State, err)
		}
	}
	for _, id := range ids {
		x := want[id]
		other := envA
		if x.env == envA {
			other = envB
		}
		uri := "/media/" + id + ".mkv"
		if n := journalRuns(x.env, x.device, uri); n != 1 {
			t.Fatalf("%s ran %d times on %s", id, n, x.device)
		}
		if _, err := other.Queue.Get(id); err == nil {
			t.Fatalf("%s reached the other executor's queue", id)
		}
		if journalRuns(other, "living-room", uri)+journalRuns(other, kitchen, uri) != 0 {
			t.Fatalf("%s ran on the other executor", id)
		}
	}
	// each executor's log is its own in the audit stream, whole and in order
	js := connectJS(t, s.ClientURL())
	var buf bytes.Buffer
	if _, err := natsqueue.PullAudit(ctx, js, &buf); !errors.Is(err, natsqueue.ErrSeveralExecutors) ||
		!strings.Contains(err.Error(), "exec-a") || !strings.Contains(err.Error(), "exec-b") {
		t.Fatalf("pulling with two executors and none named: %v", err)
	}
	if ids, err := natsqueue.AuditExecutors(ctx, js); err != nil || strings.Join(ids, " ") != "exec-a exec-b" {
		t.Fatalf("audit executors %q %v", ids, err)
	}
	for id, env := range map[string]*approvaltest.Env{"exec-a": envA, "exec-b": envB} {
		testwait.For(t, 20*time.Second, func() error {
			buf.Reset()
			_, err := natsqueue.PullExecutorAudit(ctx, js, id, &buf)
			local, _ := os.ReadFile(env.AuditPath())
			if err != nil || !bytes.Equal(buf.Bytes(), local) {
				return fmt.Errorf("%s's audit copy (%d bytes, %v) is not its log (%d bytes)", id, buf.Len(), err, len(local))
			}
			return nil
		})
	}
}

// TestOverlappingExecutorRefusesNamingTheDevice: a third executor claiming
// a device another serves is refused at start with the device and the
// other's consumer named, and takes nothing; the same executor (same id)
// with a changed device list replaces its own earlier consumer.
func TestOverlappingExecutorRefusesNamingTheDevice(t *testing.T) {
	s := startServer(t, nil)
	_, _, exA, _ := startTwoExecutors(t, s)
	envC := approvaltest.New(t, config.DeviceConfig{ID: kitchen, Driver: "sim"})
	for _, devs := range [][]string{{"living-room"}, {kitchen, "living-room"}, {"garage", kitchen}} {
		_, err := startExecutor(t, connectJS(t, s.ClientURL()), envC, "exec-c", devs...)
		var ce *natsqueue.ClaimError
		if !errors.As(err, &ce) {
			t.Fatalf("%q: %v, want a ClaimError", devs, err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", ce.Device)) || !strings.Contains(err.Error(), ce.Consumer) {
			t.Fatalf("%q: the error does not name the device and consumer: %v", devs, err)
		}
		if ce.Device == "living-room" && ce.Consumer != exA.Consumer() {
			t.Fatalf("living-room is %s's, the error names %s", exA.Consumer(), ce.Consumer)
		}
	}
	js := connectJS(t, s.ClientURL())
	ctx := context.Background()
	stream, err := js.Stream(ctx, natsqueue.SubmitStream)
	if err != nil {
		t.Fatal(err)
	}
	names := consumerNames(t, stream)
	if len(names) != 2 {
		t.Fatalf("consumers after the refusals: %v", names)
	}
	// exec-b's device list grows: its earlier consumer is replaced, not a conflict
	envB2 := approvaltest.New(t, config.DeviceConfig{ID: kitchen, Driver: "sim"}, config.DeviceConfig{ID: "garage", Driver: "sim"})
	exB2, err := startExecutor(t, connectJS(t, s.ClientURL()), envB2, "exec-b", kitchen, "garage")
	if err != nil {
		t.Fatalf("the same executor with one more device: %v", err)
	}
	names = consumerNames(t, stream)
	if len(names) != 2 || !strings.Contains(strings.Join(names, " "), exB2.Consumer()) {
		t.Fatalf("consumers after exec-b's devices changed: %v", names)
	}
}

func consumerNames(t *testing.T, s jetstream.Stream) []string {
	t.Helper()
	l := s.ConsumerNames(context.Background())
	var out []string
	for n := range l.Name() {
		out = append(out, n)
	}
	if l.Err() != nil {
		t.Fatal(l.Err())
	}
	return out
}

// TestEarlierSubmitStreamIsUpgraded: a VIGIL_SUBMIT left by the earlier
// release (one subject, one consumer over all of it, a manifest waiting)
// is refused by clients with a message saying what to do, and upgraded by
// the executor: per-device subjects added, the old consumer removed, and
// the waiting manifest answered.
func TestEarlierSubmitStreamIsUpgraded(t *testing.T) {
	s := startServer(t, nil)
	js := connectJS(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: natsqueue.SubmitStream, Subjects: []string{"vigil.submit"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: natsqueue.DedupeWindow}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, natsqueue.SubmitStream, jetstream.ConsumerConfig{Durable: natsqueue.ExecutorConsumer,
		AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	env := approvaltest.New(t)
	raw := env.Play("old-1", "/media/old-1.mkv")
	if _, err := js.Publish(ctx, "vigil.submit", raw, jetstream.WithMsgID(natsqueue.Digest(raw))); err != nil {
		t.Fatal(err)
	}
	if _, err := natsqueue.NewClient(ctx, js); !errors.Is(err, natsqueue.ErrOldSubmitStream) {
		t.Fatalf("a client on the earlier stream: %v", err)
	}
	if _, err := startExecutor(t, connectJS(t, s.ClientURL()), env, "exec-a", "living-room"); err != nil {
		t.Fatal(err)
	}
	c, err := natsqueue.NewClient(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Verdict(ctx, natsqueue.Digest(raw))
	if err != nil || v.State != "pending" || v.TaskID != "old-1" {
		t.Fatalf("the waiting manifest: %+v %v", v, err)
	}
	stream, _ := js.Stream(ctx, natsqueue.SubmitStream)
	info, err := stream.Info(ctx)
	if err != nil || strings.Join(info.Config.Subjects, " ") != "vigil.submit vigil.submit.>" {
		t.Fatalf("subjects %v %v", info.Config.Subjects, err)
	}
	for _, n := range consumerNames(t, stream) {
		if n == natsqueue.ExecutorConsumer {
			t.Fatal("the earlier executor's consumer is still there")
		}
	}
	// and new submissions flow on the device's subject
	if v := submitVia(t, c, env.Play("new-1", "/media/new-1.mkv")); v.State != "pending" {
		t.Fatalf("after the upgrade: %+v", v)
	}
}

func submitVia(t *testing.T, c *natsqueue.Client, raw []byte) natsqueue.Verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.Publish(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Verdict(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestUnservedDeviceWaitsInTheStream: a manifest for a device no executor
// serves is taken by none (no verdict) and stays in the stream until one
// serving it starts, which then answers it.
func TestUnservedDeviceWaitsInTheStream(t *testing.T) {
	s := startServer(t, nil)
	envA := approvaltest.New(t)
	if _, err := startExecutor(t, connectJS(t, s.ClientURL()), envA, "exec-a", "living-room"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := natsqueue.NewClient(ctx, connectJS(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	envB := approvaltest.New(t, config.DeviceConfig{ID: kitchen, Driver: "sim"})
	raw := envB.Manifest("uw-1", "MEDIA_PLAY", map[string]any{"media_uri": "/media/uw-1.mkv", "target_device": kitchen}, 30*time.Minute)
	a := natsqueue.AgentTasks{Client: c, VerdictWait: 2 * time.Second}
	if _, err := a.Submit(ctx, raw, ""); !errors.Is(err, natsqueue.ErrNoVerdict) || !strings.Contains(err.Error(), "no executor has taken it") {
		t.Fatalf("submit for an unserved device: %v", err)
	}
	if _, err := startExecutor(t, connectJS(t, s.ClientURL()), envB, "exec-b", kitchen); err != nil {
		t.Fatal(err)
	}
	v, err := c.Verdict(ctx, natsqueue.Digest(raw))
	if err != nil || v.State != "pending" || v.TaskID != "uw-1" {
		t.Fatalf("once served: %+v %v", v, err)
	}
}

// TestTaskIDIsOneRequestAcrossExecutors: a manifest for one executor's
// device reusing the task_id of another executor's task is rejected, and
// the first task's view stays that executor's.
func TestTaskIDIsOneRequestAcrossExecutors(t *testing.T) {
	s := startServer(t, nil)
	envA, envB, exA, _ := startTwoExecutors(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := natsqueue.NewClient(ctx, connectJS(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	if v := submitVia(t, c, envA.Play("same-1", "/media/same-1.mkv")); v.State != "pending" {
		t.Fatalf("first: %+v", v)
	}
	v := submitVia(t, c, envB.Manifest("same-1", "MEDIA_PLAY", map[string]any{"media_uri": "/media/other.mkv",
		"target_device": kitchen}, 30*time.Minute))
	if v.State != "rejected" || v.Error == nil || !strings.Contains(v.Error.Message, "another executor") {
		t.Fatalf("the reused task_id: %+v", v)
	}
	if _, err := envB.Queue.Get("same-1"); err == nil {
		t.Fatal("the reused task_id reached the second executor's queue")
	}
	view, _, err := c.Get(ctx, "same-1")
	if err != nil || view.ExecutorID != exA.ID() {
		t.Fatalf("the view: %q %v", view.ExecutorID, err)
	}
}

// TestDeviceListChangeKeepsTheExecutorsTasks: an executor restarted with
// one more device (a new consumer name) still owns its pending tasks and
// applies the decisions on them, and its earlier consumer is gone.
func TestDeviceListChangeKeepsTheExecutorsTasks(t *testing.T) {
	s := startServer(t, nil)
	env := approvaltest.New(t, config.DeviceConfig{ID: "garage", Driver: "sim"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first, err := natsqueue.NewExecutor(ctx, natsqueue.ExecutorOptions{JS: connectJS(t, s.ClientURL()), Queue: env.Queue,
		AuditPath: env.AuditPath(), Host: "h", Devices: []string{"living-room"}, ID: "exec-a"})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- first.Run(rctx) }()
	c, err := natsqueue.NewClient(ctx, connectJS(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	v := submitVia(t, c, env.Play("chg-1", "/media/chg-1.mkv"))
	if v.State != "pending" {
		t.Fatalf("submit: %+v", v)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	second, err := startExecutor(t, connectJS(t, s.ClientURL()), env, "exec-a", "living-room", "garage")
	if err != nil {
		t.Fatalf("the same executor with one more device: %v", err)
	}
	if second.Consumer() == first.Consumer() {
		t.Fatal("a new device list, the same consumer name")
	}
	if _, err := c.Decide(ctx, "chg-1", decision("operator:ada@h", true, v.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	out, err := c.Outcome(ctx, "chg-1", "")
	if err != nil || out.Record.State != approval.Done || journalRuns(env, "living-room", "/media/chg-1.mkv") != 1 {
		t.Fatalf("after the change: %s %v", out.Record.State, err)
	}
	stream, err := connectJS(t, s.ClientURL()).Stream(ctx, natsqueue.SubmitStream)
	if err != nil {
		t.Fatal(err)
	}
	if names := consumerNames(t, stream); len(names) != 1 || names[0] != second.Consumer() {
		t.Fatalf("consumers %v, want only %s", names, second.Consumer())
	}
}
