package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQueueSectionParsesAndResolves(t *testing.T) {
	p := write(t, "[queue]\nurl = \"nats://a:4222,nats://b:4222\"\ncreds_file = \"vigil.creds\"\nca_file = \"/etc/ca.pem\"\nreplicas = 3\n")
	cfg, err := Load(p, "/")
	if err != nil {
		t.Fatal(err)
	}
	q := cfg.Queue.Resolved(filepath.Dir(p))
	if !q.Enabled() || q.CredsFile != filepath.Join(filepath.Dir(p), "vigil.creds") || q.CAFile != "/etc/ca.pem" ||
		q.Replicas != 3 {
		t.Fatalf("%+v", q)
	}
	if Default().Queue.Enabled() {
		t.Fatal("the shared queue is on by default")
	}
	if err := Default().Queue.Validate(); err != nil {
		t.Fatalf("no [queue]: %v", err)
	}
}

func TestQueueErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "x.creds")
	os.WriteFile(creds, []byte("x"), 0o600)
	for _, c := range []struct {
		q    QueueConfig
		key  string
		rule string
	}{
		{QueueConfig{URL: "http://h:4222"}, "queue.url", "scheme"},
		{QueueConfig{URL: "nats://"}, "queue.url", "URL like"},
		{QueueConfig{URL: "nats://u:p@h:4222"}, "queue.url", "credentials"},
		{QueueConfig{CredsFile: creds}, "queue.creds_file", "queue.url is not"},
		{QueueConfig{URL: "nats://h", CredsFile: creds, TokenEnv: "T"}, "queue", "choose one"},
		{QueueConfig{URL: "nats://h", UserEnv: "U"}, "queue.password_env", "go together"},
		{QueueConfig{URL: "nats://h", CertFile: creds}, "queue.key_file", "go together"},
		{QueueConfig{URL: "nats://h", CredsFile: filepath.Join(dir, "missing.creds")}, "queue.creds_file", "readable file"},
		{QueueConfig{URL: "nats://h", CAFile: dir}, "queue.ca_file", "readable file"},
		{QueueConfig{URL: "nats://h", Replicas: 6}, "queue.replicas", "1 to 5"},
		{QueueConfig{URL: "nats://h", Replicas: -1}, "queue.replicas", "1 to 5"},
		{QueueConfig{Replicas: 3}, "queue.replicas", "queue.url is not"},
	} {
		err := c.q.Validate()
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(ce.Rule, c.rule) {
			t.Errorf("%+v: got %v, want %s: …%s…", c.q, err, c.key, c.rule)
		}
	}
	if err := (QueueConfig{URL: "tls://h:4222", UserEnv: "U", PasswordEnv: "P", CertFile: creds, KeyFile: creds}).Validate(); err != nil {
		t.Fatalf("a valid section: %v", err)
	}
}

func TestQueueUnknownKeyIsAnError(t *testing.T) {
	_, err := Load(write(t, "[queue]\nurl = \"nats://h\"\npassword = \"hunter2\"\n"), "/")
	if err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("got %v", err)
	}
}

func TestQueueAgentName(t *testing.T) {
	if err := (QueueConfig{URL: "nats://127.0.0.1:4222", Agent: "kitchen-bot"}).Validate(); err != nil {
		t.Fatalf("agent: %v", err)
	}
	for _, c := range []struct {
		q    QueueConfig
		want string
	}{
		{QueueConfig{URL: "nats://127.0.0.1:4222", Agent: "kitchen bot"}, "queue.agent: must be an [[agents]] name"},
		{QueueConfig{URL: "nats://127.0.0.1:4222", Agent: "bot\x1b"}, "queue.agent: must be an [[agents]] name"},
		{QueueConfig{Agent: "kitchen-bot"}, "queue.agent: is set but queue.url is not"},
	} {
		if err := c.q.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v (want %s)", c.q, err, c.want)
		}
	}
}
