package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/natsqueue"
	"github.com/vigil-dev/vigil/exec/task"
)

// TestQueueResultRefusesForgedAndHostileViews: the bucket is written by
// whoever the server lets; `vigil result` on an agent's home neither
// prints a result the executor's key did not sign (when the home holds
// that key) nor lets a view's fields drive the terminal.
func TestQueueResultRefusesForgedAndHostileViews(t *testing.T) {
	r := newNatsRig(t)
	_, js, _ := r.client("agent")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, natsqueue.TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	put := func(v natsqueue.TaskView) {
		b, _ := json.Marshal(v)
		if _, err := kv.Put(ctx, natsqueue.TaskKey(v.Record.TaskID), b); err != nil {
			t.Fatal(err)
		}
	}
	put(natsqueue.TaskView{Record: approval.Record{TaskID: "mcpq-hostile",
		State: approval.State("pending\x1b]52;c;AAAA\x07\x1b[2J")}})
	got := r.must(1, r.agent, "agent", "result", "mcpq-hostile")
	if strings.ContainsAny(got.out+got.err, "\x1b\x07") || !strings.Contains(got.err, "no result yet") {
		t.Fatalf("hostile state reached the terminal: %q", got.err)
	}

	_, other, _ := ed25519.GenerateKey(rand.Reader)
	forged := &task.Result{TaskID: "mcpq-forged", CapabilityID: "MEDIA_PLAY", Status: task.StatusSuccess,
		ExecutedAt: time.Now().UTC().Format(time.RFC3339)}
	if err := task.NewSigner(other).Sign(forged); err != nil {
		t.Fatal(err)
	}
	put(natsqueue.TaskView{Record: approval.Record{TaskID: "mcpq-forged", State: approval.Done}, Result: forged})
	pub, _ := os.ReadFile(filepath.Join(r.exec.home, "keys", lease.OperatorPubFile))
	os.MkdirAll(filepath.Join(r.agent, "keys"), 0o700)
	if err := os.WriteFile(filepath.Join(r.agent, "keys", lease.OperatorPubFile), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	got = r.must(1, r.agent, "agent", "result", "mcpq-forged")
	if strings.Contains(got.out, "SUCCESS") || !strings.Contains(got.err, "does not verify") {
		t.Fatalf("forged result: %s%s", got.out, got.err)
	}
}
