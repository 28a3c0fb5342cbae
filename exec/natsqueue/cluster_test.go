package natsqueue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/natsqueue/natstest"
	"github.com/vigil-dev/vigil/internal/testbin"
)

// TestReplicasOnAThreeNodeCluster: with [queue] url listing three routed
// servers and replicas = 3, the executor makes both streams and the bucket
// with three replicas, each placed on all three servers, and a task goes
// through submit, decision and execution on them.
func TestReplicasOnAThreeNodeCluster(t *testing.T) {
	testbin.FullRunOnly(t, "a three-node cluster")
	c := natstest.StartCluster(t, 3)
	if n := strings.Count(c.URL, ",") + 1; n != 3 {
		t.Fatalf("url %q lists %d servers", c.URL, n)
	}
	// the url as [queue] takes it, checked and connected as Vigil does
	q := config.QueueConfig{URL: c.URL, Replicas: 3}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: q, Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if info, err := natsqueue.Server(nc); err != nil || info.Cluster != "vigil-test" {
		t.Fatalf("Server: %+v, %v", info, err)
	}

	r := newRigOn(t, c.URL, natsqueue.Layout{Replicas: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{natsqueue.SubmitStream, natsqueue.AuditStream, "KV_" + natsqueue.TasksBucket} {
		s, err := r.js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info := s.CachedInfo()
		if info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			t.Fatalf("%s: replicas %d, cluster %+v", name, info.Config.Replicas, info.Cluster)
		}
	}

	v := r.submit("cl-1")
	if v.State != "pending" {
		t.Fatalf("verdict %+v", v)
	}
	if _, err := r.c.Decide(ctx, "cl-1", decision("operator:ada@h", true, v.PreviewHash)); err != nil {
		t.Fatal(err)
	}
	out, err := r.c.Outcome(ctx, "cl-1", "")
	if err != nil || out.Record.State != approval.Done || r.runs("cl-1") != 1 {
		t.Fatalf("outcome %s %v, runs %d", out.Record.State, err, r.runs("cl-1"))
	}
}

// TestReplicasNeedACluster: replicas = 3 on a single server is refused
// saying what it needs.
func TestReplicasNeedACluster(t *testing.T) {
	s := startServer(t, nil)
	js := connectJS(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := natsqueue.Layout{Replicas: 3}.Setup(ctx, js)
	if err == nil || !strings.Contains(err.Error(), "replicas = 3 needs a JetStream cluster of at least 3 servers") {
		t.Fatalf("replicas 3 on one server: %v", err)
	}
	if _, err := js.Stream(ctx, natsqueue.SubmitStream); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatalf("a stream was made anyway: %v", err)
	}
}
