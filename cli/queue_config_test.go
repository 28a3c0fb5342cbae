package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueueConfigErrorsNameTheKey: a bad [queue] section stops the shared
// queue's commands with exit 2 and the file and key, before any network.
func TestQueueConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ section, key string }{
		{"url = \"http://127.0.0.1:4222\"", "queue.url"},
		{"url = \"nats://127.0.0.1:1\"\ntoken_env = \"VIGIL_TEST_UNSET_TOKEN\"", "queue.token_env"},
		{"url = \"nats://127.0.0.1:1\"\ncreds_file = \"nope.creds\"", "queue.creds_file"},
	} {
		home := t.TempDir()
		cfg := filepath.Join(home, "config.toml")
		os.WriteFile(cfg, []byte("[queue]\n"+c.section+"\n"), 0o600)
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
