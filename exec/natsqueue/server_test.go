package natsqueue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/natsqueue/natstest"
)

// TestConnectRefusesTheDistroServer: Debian's nats-server (2.9.10), run as
// the real process, is refused at connect with the version, the URL, the
// minimum and how to get a newer one — before anything is created on it.
func TestConnectRefusesTheDistroServer(t *testing.T) {
	p := natstest.Start(t)
	if !strings.HasPrefix(p.Version, "2.9.") {
		t.Fatalf("this test needs the distribution's 2.9 server; %s is %s", "nats-server", p.Version)
	}
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: config.QueueConfig{URL: p.URL}, Name: "t"})
	var old *natsqueue.ServerTooOldError
	if !errors.As(err, &old) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("Connect to nats-server %s: %v, want a *ServerTooOldError", p.Version, err)
	}
	want := "nats-server " + p.Version + " at " + p.URL + " is too old: Vigil needs 2.10 or newer ("
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, "go install github.com/nats-io/nats-server/v2@") {
		t.Fatalf("the refusal says %q, want it to start %q and say how to get a newer server", msg, want)
	}
}

// TestConnectAcceptsTheEmbeddedServer: the version go.mod pins passes, its
// INFO is read, and CheckStreams tells a store without Vigil's streams
// from one with them.
func TestConnectAcceptsTheEmbeddedServer(t *testing.T) {
	s := startServer(t, nil)
	nc, err := natsqueue.Connect(natsqueue.ConnectOptions{Queue: config.QueueConfig{URL: s.ClientURL()}, Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	info, err := natsqueue.Server(nc)
	if err != nil || info.Version != server.VERSION || !info.JetStream || info.URL != s.ClientURL() {
		t.Fatalf("Server: %+v, %v; want version %s, JetStream on, url %s", info, err, server.VERSION, s.ClientURL())
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := natsqueue.CheckStreams(ctx, js); err == nil || !strings.Contains(err.Error(), natsqueue.SubmitStream+" is missing") {
		t.Fatalf("CheckStreams on an empty store: %v", err)
	}
	if _, err := natsqueue.Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	if err := natsqueue.CheckStreams(ctx, js); err != nil {
		t.Fatalf("CheckStreams after Setup: %v", err)
	}
	if err := js.DeleteStream(ctx, natsqueue.AuditStream); err != nil {
		t.Fatal(err)
	}
	if err := natsqueue.CheckStreams(ctx, js); err == nil || !strings.Contains(err.Error(), natsqueue.AuditStream+" is missing") {
		t.Fatalf("CheckStreams with the audit stream deleted: %v", err)
	}
}

// TestConnectRefusesAServerWithoutJetStream names the switch to turn on.
func TestConnectRefusesAServerWithoutJetStream(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	_, err = natsqueue.Connect(natsqueue.ConnectOptions{Queue: config.QueueConfig{URL: s.ClientURL()}, Name: "t"})
	var nojs *natsqueue.NoJetStreamError
	if !errors.As(err, &nojs) || !strings.Contains(err.Error(), "-js") {
		t.Fatalf("Connect without JetStream: %v", err)
	}
}

// TestServerInfoCheckVersions: the minimum is 2.10, pre-releases and a
// leading v included; a version that cannot be read is let through.
func TestServerInfoCheckVersions(t *testing.T) {
	for v, ok := range map[string]bool{"2.9.10": false, "2.9.25": false, "1.4.1": false, "v2.9.0": false,
		"2.10.0": true, "2.10.0-beta.1": true, "v2.11.3": true, "2.15.2": true, "3.0.0": true, "dev": true} {
		err := natsqueue.ServerInfo{Version: v, URL: "nats://h:4222", JetStream: true}.Check()
		if (err == nil) != ok {
			t.Errorf("version %q: %v, want accepted=%v", v, err, ok)
		}
	}
}
