package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueueConfigErrorsNameTheKey: a bad [queue] section, or a file it
// names that is not what the key says, stops the shared queue's commands
// with exit 2 and the file and key, before any network (no server runs on
// port 1: a command that tried to connect would say so instead).
func TestQueueConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ section, key, file string }{
		{"url = \"http://127.0.0.1:4222\"", "queue.url", ""},
		{"url = \"nats://127.0.0.1:1\"\ntoken_env = \"VIGIL_TEST_UNSET_TOKEN\"", "queue.token_env", ""},
		{"url = \"nats://127.0.0.1:1\"\ncreds_file = \"nope.creds\"", "queue.creds_file", ""},
		{"url = \"nats://127.0.0.1:1\"\ncreds_file = \"bad.creds\"", "queue.creds_file", "bad.creds"},
		{"url = \"tls://127.0.0.1:1\"\nca_file = \"bad.pem\"", "queue.ca_file", "bad.pem"},
	} {
		home := t.TempDir()
		cfg := filepath.Join(home, "config.toml")
		os.WriteFile(cfg, []byte("[queue]\n"+c.section+"\n"), 0o600)
		if c.file != "" {
			os.WriteFile(filepath.Join(home, c.file), []byte("not what the key says\n"), 0o600)
		}
		for _, args := range [][]string{{"pending"}, {"preview", "t1"}, {"deny", "t1", "--reason", "r"}, {"approve", "t1", "--yes"}} {
			out, errs, code := runReal(t, home, args...)
			want := 2
			if code != want || !strings.Contains(errs, c.key) {
				t.Fatalf("%s / vigil %s: exit %d, want %d naming %s\n%s%s", c.section, strings.Join(args, " "), code, want, c.key, out, errs)
			}
		}
	}
}

// TestQueueServeWithoutDevicesRefuses: `vigil serve` on the shared queue is
// the executor; on a home with no devices it would take and reject every
// submission, so it refuses to start (exit 2, naming queue.url).
func TestQueueServeWithoutDevicesRefuses(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("[queue]\nurl = \"nats://127.0.0.1:1\"\n"), 0o600)
	runReal(t, home, "keys", "init")
	out, errs, code := runReal(t, home, "serve")
	if code != 2 || !strings.Contains(errs, "queue.url") || !strings.Contains(errs, "no [[devices]]") {
		t.Fatalf("serve: exit %d\n%s%s", code, out, errs)
	}
}
