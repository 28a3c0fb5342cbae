package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// TestQueueSecretsStayOnTheExecutor plants secrets in a manifest's media
// URI and in a denial's reason, and checks that none reaches an operator
// process's output, any value (or past revision) in the bucket, or the
// audit stream, and that the raw manifest does not stay in the submit
// stream once the executor took it.
func TestQueueSecretsStayOnTheExecutor(t *testing.T) {
	r := newNatsRig(t)
	ex := r.startExecutor()
	defer ex.stop(t)
	const (
		pw     = "Zq8vW3nR5tK1"
		gh     = "ghp_7Hk2LmN9pQ4rS6tU8vW1xY3zA5bC7dE9fG2h"
		apiKey = "q9W8e7R6t5Y4u3I2o1P0a9S8d7F6g5H4"
		reason = "no: the stream key is sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	)
	secrets := []string{pw, gh, apiKey, "sk_live_4eC39HqLyjWDarjtT1zdp7dc"}
	uri := "https://ada:" + pw + "@media.example.com/v/1.m3u8?gh=" + gh + "&api_key=" + apiKey
	var outputs []string
	for _, id := range []string{"leak-1", "leak-2"} {
		res := r.must(0, r.agent, "agent", "submit", r.manifest(id, time.Hour, uri))
		if !strings.Contains(res.out, `"pending"`) {
			t.Fatalf("submit: %s%s", res.out, res.err)
		}
	}
	for _, args := range [][]string{{"pending"}, {"pending", "--json"}, {"preview", "leak-1"}, {"preview", "leak-1", "--json"},
		{"approve", "leak-1", "--yes"}, {"deny", "leak-2", "--reason", reason}, {"preview", "leak-2", "--json"}} {
		res := r.run(r.ops["alice"], "alice", args...)
		if res.code != 0 {
			t.Fatalf("vigil %s: exit %d\n%s%s", strings.Join(args, " "), res.code, res.out, res.err)
		}
		outputs = append(outputs, "vigil "+args[0]+"\n"+res.out+res.err) // the label leaves out the reason typed
	}
	if !strings.Contains(outputs[2], "media.example.com") {
		t.Fatalf("the preview does not show the request:\n%s", outputs[2])
	}
	_, js, _ := r.client("alice")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, natsqueue.TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		hist, err := kv.History(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range hist {
			outputs = append(outputs, "bucket "+k+"\n"+string(e.Value()))
		}
	}
	var lines strings.Builder
	if _, err := natsqueue.PullAudit(ctx, js, &lines); err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, "audit stream\n"+lines.String())
	if !strings.Contains(lines.String(), `"leak-2"`) {
		t.Fatalf("the audit stream lacks the tasks:\n%s", lines.String())
	}
	for _, o := range outputs {
		for _, s := range secrets {
			if strings.Contains(o, s) {
				t.Fatalf("secret %q reached %s", s, o)
			}
		}
	}
	// what the operators saw is masked, not dropped
	var pv map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(outputs[3], "\n", 2)[1]), &pv); err != nil || pv["preview_hash"] == "" {
		t.Fatalf("preview --json: %v\n%s", err, outputs[3])
	}
	s, err := js.Stream(ctx, natsqueue.SubmitStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx) // every submit subject: one per device and the plain one
	if err != nil || info.State.Msgs != 0 {
		t.Fatalf("the submit stream still holds %d raw manifests (%v)", info.State.Msgs, err)
	}
}
