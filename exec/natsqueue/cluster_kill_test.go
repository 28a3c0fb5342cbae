package natsqueue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/natsqueue/natstest"
	"github.com/vigil-dev/vigil/internal/testbin"
)

// clusterConn connects to every server of the cluster, reconnecting for
// ever (as natsqueue.Connect does), calling onReconnect when it is back.
func clusterConn(t *testing.T, url string, onReconnect func()) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) {
			if onReconnect != nil {
				onReconnect()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// retry runs f until it succeeds, a *LostError ends it, or ctx ends: what
// an agent or operator told "try again" does.
func retry[T any](ctx context.Context, f func(context.Context) (T, error)) (T, int, error) {
	for tries := 1; ; tries++ {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := f(actx)
		cancel()
		var lost *natsqueue.LostError
		if err == nil || errors.As(err, &lost) || ctx.Err() != nil {
			return v, tries, err
		}
		if os.Getenv("VIGIL_DEBUG_CLUSTER") != "" {
			fmt.Fprintf(os.Stderr, "retry %d: %v\n", tries, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestClusterLosesTheExecutorsNode: on a three-node cluster with three
// replicas, the node the executor is connected to is killed while
// submissions and decisions are in flight. Every submission is answered
// and every approval carried out exactly once (the agent and operator
// retrying what they are told failed), the audit copy pulled from the
// stream is the executor's log and verifies; the node restarted, resending
// every submission and decision doubles nothing.
func TestClusterLosesTheExecutorsNode(t *testing.T) {
	loseANode(t, func(t *testing.T, c *natstest.Cluster, exNC *nats.Conn, _ jetstream.JetStream) int {
		for i, s := range c.Servers {
			if s.Name() == exNC.ConnectedServerName() {
				return i
			}
		}
		t.Fatalf("the executor is connected to %q, no server of the cluster", exNC.ConnectedServerName())
		return -1
	})
}

// TestClusterLosesTheSubmitStreamsLeader is the same with the node that
// leads VIGIL_SUBMIT (and its consumers' placement follows) killed,
// whichever node the executor is connected to.
func TestClusterLosesTheSubmitStreamsLeader(t *testing.T) {
	loseANode(t, func(t *testing.T, c *natstest.Cluster, _ *nats.Conn, js jetstream.JetStream) int {
		s, err := js.Stream(context.Background(), natsqueue.SubmitStream)
		if err != nil {
			t.Fatal(err)
		}
		leader := s.CachedInfo().Cluster.Leader
		for i, srv := range c.Servers {
			if srv.Name() == leader {
				return i
			}
		}
		t.Fatalf("%s's leader %q is no server of the cluster", natsqueue.SubmitStream, leader)
		return -1
	})
}

// loseANode runs the flow of TestClusterLosesTheExecutorsNode, killing the
// node pick names.
func loseANode(t *testing.T, pick func(*testing.T, *natstest.Cluster, *nats.Conn, jetstream.JetStream) int) {
	testbin.FullRunOnly(t, "a three-node cluster killed mid-flow")
	c := natstest.StartCluster(t, 3)
	layout := natsqueue.Layout{Replicas: 3}
	env := approvaltest.New(t)
	var ex *natsqueue.Executor
	exNC := clusterConn(t, c.URL, func() { ex.Reconnected() })
	exJS, _ := jetstream.New(exNC)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var err error
	ex, err = natsqueue.NewExecutor(ctx, natsqueue.ExecutorOptions{JS: exJS, Queue: env.Queue, AuditPath: env.AuditPath(),
		Host: "exec-host", Devices: []string{"living-room"}, ID: "exec-1", Layout: layout, Log: debugLog()})
	if err != nil {
		t.Fatal(err)
	}
	// as under `vigil serve`, the executor's context has no deadline: each
	// request then gets the client's own timeout (5 s), so one whose reply
	// was lost with the node fails and is tried again (with a deadline, it
	// would wait for that deadline, and the executor with it)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ex.Run(rctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("executor: %v", err)
		}
	}()
	cliJS, _ := jetstream.New(clusterConn(t, c.URL, nil))
	cl, err := layout.NewClient(ctx, cliJS)
	if err != nil {
		t.Fatal(err)
	}

	const n = 20
	ids := make([]string, n)
	raws := make([][]byte, n)
	hashes := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("kill-%02d", i)
		raws[i] = env.Play(ids[i], "/media/"+ids[i]+".mkv")
	}
	submit := func(i int) {
		v, tries, err := retry(ctx, func(ctx context.Context) (natsqueue.Verdict, error) {
			d, err := cl.Publish(ctx, raws[i])
			if err != nil {
				return natsqueue.Verdict{}, err
			}
			return cl.Verdict(ctx, d)
		})
		if err != nil || v.PreviewHash == "" {
			t.Fatalf("submit %s: %+v %v after %d tries", ids[i], v, err, tries)
		}
		hashes[i] = v.PreviewHash
	}
	decide := func(i int) {
		_, tries, err := retry(ctx, func(ctx context.Context) (natsqueue.TaskView, error) {
			return cl.Decide(ctx, ids[i], decision("operator:ada@h", true, hashes[i]))
		})
		var lost *natsqueue.LostError
		if err != nil && !errors.As(err, &lost) { // lost: an earlier try of ours was written
			t.Fatalf("decide %s: %v after %d tries", ids[i], err, tries)
		}
	}
	for i := range n / 2 {
		submit(i)
	}
	for i := range n / 4 {
		decide(i)
	}
	// the node goes, with decisions waiting and more to come
	victim := pick(t, c, exNC, cliJS)
	executors := victim >= 0 && c.Servers[victim].Name() == exNC.ConnectedServerName()
	killed := time.Now()
	c.Stop(victim)
	for i := n / 2; i < n; i++ {
		submit(i)
	}
	for i := n / 4; i < n; i++ {
		decide(i)
	}
	for i := range n {
		v, _, err := retry(ctx, func(ctx context.Context) (natsqueue.TaskView, error) { return cl.Outcome(ctx, ids[i], "") })
		if err != nil || v.Record.State != approval.Done {
			t.Fatalf("%s after the node was killed: %s %v", ids[i], v.Record.State, err)
		}
	}
	t.Logf("node %d killed (the executor's: %v); all %d tasks done %s later", victim+1, executors, n,
		time.Since(killed).Round(time.Millisecond))
	checkOnce := func(when string) {
		t.Helper()
		for _, id := range ids {
			if runs := journalRuns(env, "living-room", "/media/"+id+".mkv"); runs != 1 {
				t.Fatalf("%s: %s ran %d times", when, id, runs)
			}
		}
	}
	checkOnce("after the kill")

	// the node back; every submission and decision sent again
	c.Start(victim)
	c.WaitReady(60 * time.Second)
	for i := range n {
		submit(i)
		decide(i)
	}
	time.Sleep(2 * time.Second) // what a doubled execution would take
	checkOnce("after the restart and the resends")

	// the audit copy in the stream is the log, and verifies
	deadline := time.Now().Add(30 * time.Second)
	dir := t.TempDir()
	for {
		var buf bytes.Buffer
		_, err := natsqueue.PullAudit(ctx, cliJS, &buf)
		want, _ := os.ReadFile(env.AuditPath())
		if err == nil && bytes.Equal(buf.Bytes(), want) {
			if err := natsqueue.WriteAuditCopy(dir, buf.Bytes()); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit stream holds %d bytes (%v), the log %d", buf.Len(), err, len(want))
		}
		time.Sleep(200 * time.Millisecond)
	}
	verifies(t, filepath.Join(dir, "audit.log"))
}

func debugLog() *slog.Logger {
	if os.Getenv("VIGIL_DEBUG_CLUSTER") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}
