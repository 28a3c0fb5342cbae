package natsqueue_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// BenchmarkQueueLatency measures, over loopback with a real server and a
// real executor (sim device), the two waits a person notices:
// submit-to-visible (an agent publishes until an operator can read the
// task's view) and decision-to-execution (an operator's compare-and-set
// until the signed result is in the view). Reported as P50/P95 in ms.
func BenchmarkQueueLatency(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	var visible, executed []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("lat-%d", i)
		i++
		raw := r.env.Play(id, "/media/"+id+".mkv")
		t0 := time.Now()
		if _, err := r.c.Publish(ctx, raw); err != nil {
			b.Fatal(err)
		}
		v := waitView(b, r, id)
		visible = append(visible, time.Since(t0))
		d := decision("operator:bench@h", true, v.PreviewHash)
		t1 := time.Now()
		if _, err := r.c.Decide(ctx, id, d); err != nil {
			b.Fatal(err)
		}
		out, err := r.c.Outcome(ctx, id, d.ID)
		if err != nil || out.Record.State != approval.Done {
			b.Fatalf("%s: %s %v", id, out.Record.State, err)
		}
		executed = append(executed, time.Since(t1))
	}
	report(b, "visible", visible)
	report(b, "execute", executed)
}

// BenchmarkQueueDecisionsPerSecond: many tasks pending, operators decide
// them all (compare-and-set each) and the executor carries each out; the
// rate is decisions applied (result published) per second.
func BenchmarkQueueDecisionsPerSecond(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	const n = 50
	total := time.Duration(0)
	done := 0
	round := 0
	for b.Loop() {
		b.StopTimer()
		views := make([]natsqueue.Verdict, n)
		for k := range n {
			views[k] = r.submit(fmt.Sprintf("dps-%d-%d", round, k))
		}
		b.StartTimer()
		t0 := time.Now()
		ids := make([]string, n)
		for k, v := range views {
			d := decision("operator:bench@h", true, v.PreviewHash)
			if _, err := r.c.Decide(ctx, v.TaskID, d); err != nil {
				b.Fatal(err)
			}
			ids[k] = d.ID
		}
		for k, v := range views {
			if out, err := r.c.Outcome(ctx, v.TaskID, ids[k]); err != nil || out.Record.State != approval.Done {
				b.Fatalf("%s: %s %v", v.TaskID, out.Record.State, err)
			}
		}
		total += time.Since(t0)
		done += n
		round++
	}
	b.ReportMetric(float64(done)/total.Seconds(), "decisions/s")
}

func waitView(b *testing.B, r *rig, id string) natsqueue.TaskView {
	w, err := r.kv.Watch(context.Background(), natsqueue.TaskKey(id))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	for ent := range w.Updates() {
		if ent == nil {
			continue
		}
		v, _, err := r.c.Get(context.Background(), id)
		if err == nil {
			return v
		}
	}
	b.Fatal("watch ended")
	return natsqueue.TaskView{}
}

func report(b *testing.B, name string, ds []time.Duration) {
	slices.Sort(ds)
	pct := func(p float64) float64 {
		return float64(ds[int(float64(len(ds)-1)*p)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), name+"-p50-ms")
	b.ReportMetric(pct(0.95), name+"-p95-ms")
}

// BenchmarkLocalQueueFloor is the floor the shared queue adds to: the same
// submit and approve+execute straight on the executor's local queue (its
// fsyncs, lease checks, preview and sim device), no network.
func BenchmarkLocalQueueFloor(b *testing.B) {
	r := newRig(b) // same home setup; the executor idles
	ctx := context.Background()
	var submitted, executed []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("floor-%d", i)
		i++
		raw := r.env.Play(id, "/media/"+id+".mkv")
		t0 := time.Now()
		if _, err := r.env.Queue.Submit(ctx, raw, "cli"); err != nil {
			b.Fatal(err)
		}
		v, err := r.env.Queue.Preview(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		submitted = append(submitted, time.Since(t0))
		t1 := time.Now()
		rec, _, err := r.env.Queue.Decide(ctx, id, approval.Decision{Approve: true, By: "operator:bench", Via: "cli",
			PreviewHash: v.BindingHash})
		if err != nil || rec.State != approval.Done {
			b.Fatalf("%s: %s %v", id, rec.State, err)
		}
		executed = append(executed, time.Since(t1))
	}
	report(b, "visible", submitted)
	report(b, "execute", executed)
}
