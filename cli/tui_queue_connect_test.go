package cli

import (
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// TestRetryWaitDoublesToItsCap: the TUI tries again soon, then less often,
// never less often than the cap.
func TestRetryWaitDoublesToItsCap(t *testing.T) {
	var got []time.Duration
	for n := range 6 {
		got = append(got, retryWait(n))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

// TestWillNotHealTellsRefusalsFromOutages: a server that is down is tried
// again; refused credentials, an untrusted certificate and a server too old
// (or without JetStream) for the shared queue are not.
func TestWillNotHealTellsRefusalsFromOutages(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("queue.url: cannot reach nats://h:4222: %w", nats.ErrNoServers), false},
		{fmt.Errorf("dial tcp: i/o timeout"), false},
		{fmt.Errorf("queue.url: cannot reach nats://h:4222: %w", nats.ErrAuthorization), true},
		{fmt.Errorf("queue.url: cannot reach nats://h:4222: nats: Authorization Violation"), true},
		{fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), true},
		{fmt.Errorf("queue.url: %w", &natsqueue.ServerTooOldError{Version: "2.9.10", URL: "nats://h:4222"}), true},
		{fmt.Errorf("queue.url: %w", &natsqueue.NoJetStreamError{Version: "2.10.1", URL: "nats://h:4222"}), true},
	} {
		if got := willNotHeal(c.err); got != c.want {
			t.Errorf("willNotHeal(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestCheckQueueFilesNamesTheKey: files the connection would read only in
// its handshake are read first; a bad one is named by its key, and a real
// credentials file passes.
func TestCheckQueueFilesNamesTheKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	junk := write("junk", "not a file of that kind\n")
	for _, c := range []struct {
		q   config.QueueConfig
		key string
	}{
		{config.QueueConfig{CredsFile: junk}, "queue.creds_file"},
		{config.QueueConfig{CAFile: junk}, "queue.ca_file"},
		{config.QueueConfig{CertFile: junk, KeyFile: junk}, "queue.cert_file"},
	} {
		err := checkQueueFiles(c.q)
		if err == nil || !strings.HasPrefix(err.Error(), c.key+":") {
			t.Errorf("%+v: %v, want an error naming %s", c.q, err, c.key)
		}
	}
	acct, _ := nkeys.CreateAccount()
	user, _ := nkeys.CreateUser()
	pub, _ := user.PublicKey()
	tok, err := jwt.NewUserClaims(pub).Encode(acct)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(tok, seed)
	if err != nil {
		t.Fatal(err)
	}
	good := write("good.creds", string(creds))
	if err := checkQueueFiles(config.QueueConfig{CredsFile: good}); err != nil {
		t.Fatalf("a real credentials file: %v", err)
	}
	// a seed alone (no JWT) is not a credentials file, and the error does
	// not quote it
	bare := write("bare.creds", string(seed)+"\n")
	if err := checkQueueFiles(config.QueueConfig{CredsFile: bare}); err == nil || strings.Contains(err.Error(), string(seed)) {
		t.Fatalf("a seed alone: %v", err)
	}
}
