package natsqueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// rig is a real embedded nats-server with JetStream, a real approval queue
// in a temp home, and an executor over them running in this process.
type rig struct {
	t   testing.TB
	url string
	env *approvaltest.Env
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	c   *natsqueue.Client
}

func newRig(t testing.TB) *rig {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return newRigOn(t, s.ClientURL(), natsqueue.Layout{})
}

// newRigOn is newRig on the servers at url (comma-separated), the streams
// and bucket made with layout.
func newRigOn(t testing.TB, url string, layout natsqueue.Layout) *rig {
	t.Helper()
	return newRigWith(t, url, approvaltest.New(t), func(o *natsqueue.ExecutorOptions) { o.Layout = layout })
}

// newRigWith is newRigOn over env, the executor's options changed by opt.
func newRigWith(t testing.TB, url string, env *approvaltest.Env, opt func(*natsqueue.ExecutorOptions)) *rig {
	t.Helper()
	r := &rig{t: t, url: url, env: env}
	r.js = r.connect()
	ctx := context.Background()
	o := natsqueue.ExecutorOptions{JS: r.connect(), Queue: r.env.Queue,
		AuditPath: r.env.AuditPath(), Host: "exec-host", Devices: []string{"living-room"}, ID: "exec-1"}
	opt(&o)
	layout := o.Layout
	ex, err := natsqueue.NewExecutor(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ex.Run(rctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("executor: %v", err)
		}
	})
	if r.c, err = layout.NewClient(ctx, r.js); err != nil {
		t.Fatal(err)
	}
	if r.kv, err = r.js.KeyValue(ctx, natsqueue.TasksBucket); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) connect() jetstream.JetStream {
	nc, err := nats.Connect(r.url)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		r.t.Fatal(err)
	}
	return js
}

// submit publishes a MEDIA_PLAY manifest and waits for the executor's verdict.
func (r *rig) submit(id string) natsqueue.Verdict {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := r.c.Publish(ctx, r.env.Play(id, "/media/"+id+".mkv"))
	if err != nil {
		r.t.Fatal(err)
	}
	v, err := r.c.Verdict(ctx, d)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

func (r *rig) runs(id string) int {
	b, _ := os.ReadFile(filepath.Join(r.env.SimDir(), "living-room.journal"))
	return strings.Count(string(b), "/media/"+id+".mkv")
}

func decision(by string, approve bool, hash string) natsqueue.Decision {
	return natsqueue.Decision{ID: by + "-" + fmt.Sprint(time.Now().UnixNano()), Approve: approve, By: by,
		PreviewHash: hash, Reason: map[bool]string{false: "no"}[approve], At: time.Now()}
}

func TestTaskKeyTakesEveryValidTaskID(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for _, id := range []string{"a", "a:b", "a..b", "A-1_2:3.4", strings.Repeat("z", 128)} {
		key := natsqueue.TaskKey(id)
		if _, err := r.kv.Put(ctx, key, []byte("{}")); err != nil {
			t.Fatalf("%q → %q: %v", id, key, err)
		}
	}
	if natsqueue.TaskKey("a:b") == natsqueue.TaskKey("a_b") {
		t.Fatal("two task ids share a key")
	}
}

func TestVerdictIsTheLocalSubmitsOutcome(t *testing.T) {
	r := newRig(t)
	v := r.submit("v-1")
	if v.State != "pending" || v.TaskID != "v-1" || v.PreviewHash == "" || v.ExpiresAt == nil {
		t.Fatalf("verdict %+v", v)
	}
	// the same request again: the stored answer, one task
	if again := r.submit("v-1"); again.State != "pending" {
		t.Fatalf("resubmission: %+v", again)
	}
	// a bad lease: rejected with the local error
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw := r.env.Play("v-2", "/media/v-2.mkv")
	var m map[string]any
	json.Unmarshal(raw, &m)
	m["lease"] = "not.a.jwt"
	bad, _ := json.Marshal(m)
	d, _ := r.c.Publish(ctx, bad)
	rej, err := r.c.Verdict(ctx, d)
	if err != nil || rej.State != "rejected" || rej.Error == nil || rej.Error.Code != "INVALID_LEASE" {
		t.Fatalf("bad lease: %+v %v", rej, err)
	}
	if _, _, err := r.c.Get(ctx, "v-2"); !errors.Is(err, natsqueue.ErrNoTask) {
		t.Fatalf("a rejected task has a view: %v", err)
	}
}

// TestDecideCompareAndSet: eight operators decide at once; one wins, the
// others are told who, and the executor runs it once.
func TestDecideCompareAndSet(t *testing.T) {
	r := newRig(t)
	v := r.submit("cas-1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := natsqueue.NewClient(ctx, r.connect())
			if err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = c.Decide(ctx, "cas-1", decision(fmt.Sprintf("operator:op%d@h", i), true, v.PreviewHash))
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		var lost *natsqueue.LostError
		switch {
		case err == nil && winner < 0:
			winner = i
		case errors.As(err, &lost):
		default:
			t.Fatalf("op%d: %v (winner %d)", i, err, winner)
		}
	}
	if winner < 0 {
		t.Fatal("nobody won")
	}
	for i, err := range errs {
		if i != winner && !strings.Contains(err.Error(), fmt.Sprintf("operator:op%d@h", winner)) {
			t.Fatalf("op%d was told %q; op%d won", i, err, winner)
		}
	}
	out, err := r.c.Outcome(ctx, "cas-1", "")
	if err != nil || out.Record.State != approval.Done || out.Result == nil || r.runs("cas-1") != 1 {
		t.Fatalf("outcome %s %v, runs %d", out.Record.State, err, r.runs("cas-1"))
	}
}

// putDecision writes a decision straight into the bucket, as any client
// with write access could, bypassing the client's own checks.
func (r *rig) putDecision(id string, d natsqueue.Decision) {
	r.t.Helper()
	ctx := context.Background()
	ent, err := r.kv.Get(ctx, natsqueue.TaskKey(id))
	if err != nil {
		r.t.Fatal(err)
	}
	var v natsqueue.TaskView
	json.Unmarshal(ent.Value(), &v)
	v.Decision = &d
	b, _ := json.Marshal(v)
	if _, err := r.kv.Update(ctx, natsqueue.TaskKey(id), b, ent.Revision()); err != nil {
		r.t.Fatal(err)
	}
}

// TestExecutorRefusesWhatTheLocalQueueRefuses: an approval carrying
// another preview hash, or naming no operator, changes nothing and runs
// nothing; the refusal is published for the operator who made it.
func TestExecutorRefusesWhatTheLocalQueueRefuses(t *testing.T) {
	r := newRig(t)
	v := r.submit("ref-1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		d    natsqueue.Decision
		code string
	}{
		{decision("operator:eve@h", true, "sha256:"+strings.Repeat("0", 64)), "preview_changed"},
		{decision("mallory", true, v.PreviewHash), "refused"},
		{decision("operator:eve@h", true, ""), "refused"},
	} {
		r.putDecision("ref-1", c.d)
		out, err := r.c.Outcome(ctx, "ref-1", c.d.ID)
		if err != nil || out.Record.State != approval.Pending || out.Refused == nil || out.Refused.Code != c.code ||
			out.Refused.DecisionID != c.d.ID || out.Decision != nil {
			t.Fatalf("%+v: %+v %v", c.d, out.Refused, err)
		}
	}
	if r.runs("ref-1") != 0 {
		t.Fatal("a refused decision ran")
	}
	// the client refuses a stale hash before it reaches the bucket
	if _, err := r.c.Decide(ctx, "ref-1", decision("operator:eve@h", true, "sha256:old")); !errors.Is(err, approval.ErrPreviewChanged) {
		t.Fatalf("stale hash: %v", err)
	}
}

// TestFinalViewShowsTheExecutorsOwnPreview: the view of a task just carried
// out shows the preview the executor published for it, never what else
// was in the bucket beside the decision: an operator who may write the
// bucket puts a forged preview (same hash) with their approval, and the
// final view shows the executor's, bound by the record's preview_hash.
func TestFinalViewShowsTheExecutorsOwnPreview(t *testing.T) {
	r := newRig(t)
	r.submit("own-1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ent, err := r.kv.Get(ctx, natsqueue.TaskKey("own-1"))
	if err != nil {
		t.Fatal(err)
	}
	var v natsqueue.TaskView
	if err := json.Unmarshal(ent.Value(), &v); err != nil {
		t.Fatal(err)
	}
	published := v.Preview
	d := decision("operator:eve@h", true, v.PreviewHash)
	v.Decision = &d
	v.Preview.EstimatedEffect, v.Preview.URL = "forged", "http://forged.example/"
	b, _ := json.Marshal(v)
	if _, err := r.kv.Update(ctx, natsqueue.TaskKey("own-1"), b, ent.Revision()); err != nil {
		t.Fatal(err)
	}
	out, err := r.c.Outcome(ctx, "own-1", d.ID)
	if err != nil || out.Record.State != approval.Done || out.Result == nil {
		t.Fatalf("outcome %s %v", out.Record.State, err)
	}
	if out.Preview.URL != published.URL || out.Preview.EstimatedEffect == "forged" ||
		out.PreviewHash != out.Record.PreviewHash {
		t.Fatalf("final view shows %+v (hash %s, record %s); published %+v", out.Preview, out.PreviewHash,
			out.Record.PreviewHash, published)
	}
	// the view is the local queue's record and result, as a read gives
	// them (so the sync pass finds nothing to publish again)
	rec, err := r.env.Queue.Get("own-1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.env.Queue.Result("own-1")
	if err != nil {
		t.Fatal(err)
	}
	gotRec, _ := json.Marshal(out.Record)
	wantRec, _ := json.Marshal(rec)
	gotRes, _ := json.Marshal(out.Result)
	wantRes, _ := json.Marshal(res)
	if string(gotRec) != string(wantRec) || string(gotRes) != string(wantRes) {
		t.Fatalf("final view:\n%s\n%s\nthe local queue:\n%s\n%s", gotRec, gotRes, wantRec, wantRes)
	}
}
