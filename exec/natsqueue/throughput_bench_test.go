package natsqueue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// throughputAgents is how many agents submit at once, and how many tasks
// are then decided at once, in each round of BenchmarkQueueThroughput.
const throughputAgents = 100

// BenchmarkQueueThroughput measures one executor's rates over loopback
// (a real server, the sim device) against the same work on a local queue
// in a home of its own — its floor: the fsyncs of the record, the result
// and the audit log. Each round runs both, interleaved (local, shared,
// local, …), so that machine load hits both alike; medians of the rounds
// are reported, and the median of each round's ratio (local rate over
// shared rate: 1.25 means the shared queue takes 25% longer).
//
// Local: throughputAgents submissions one after another (Submit, then
// Preview: what an operator needs to decide), then as many approvals one
// after another (Decide: recorded, executed, result signed). Shared:
// throughputAgents agents, each on its own connection, submit at once
// (AgentTasks.Submit: publish until the executor's verdict, which carries
// the preview hash); then as many operators approve at once (their
// compare-and-sets), and one watch of the bucket sees each task done, its
// signed result in the view. Rates are tasks per second of the whole
// batch; latencies are each task's under that load: an agent's submit
// until its verdict, an operator's compare-and-set written until the
// executor published the outcome.
func BenchmarkQueueThroughput(b *testing.B) {
	r := newRig(b)
	local := approvaltest.New(b)
	ctx := context.Background()
	agents := make([]natsqueue.AgentTasks, throughputAgents)
	ops := make([]*natsqueue.Client, throughputAgents)
	for i := range agents {
		c, err := natsqueue.NewClient(ctx, r.connect())
		if err != nil {
			b.Fatal(err)
		}
		agents[i], ops[i] = natsqueue.AgentTasks{Client: c}, c
	}
	var m throughputFigures
	round := 0
	for b.Loop() {
		m.local(b, local, round)
		m.shared(b, r, agents, ops, round)
		round++
	}
	m.report(b)
}

type throughputFigures struct {
	localSubmits, localDecisions, sharedSubmits, sharedDecisions []float64       // per round, tasks/s
	localSubmit, localDecide, sharedSubmit, sharedDecide         []time.Duration // per task
}

func (m *throughputFigures) local(b *testing.B, env *approvaltest.Env, round int) {
	ctx := context.Background()
	ids := make([]string, throughputAgents)
	raws := make([][]byte, throughputAgents)
	for k := range ids {
		ids[k] = fmt.Sprintf("tl-%d-%d", round, k)
		raws[k] = env.Play(ids[k], "/media/"+ids[k]+".mkv")
	}
	hashes := make([]string, len(ids))
	t0 := time.Now()
	for k, id := range ids {
		t := time.Now()
		if out, err := env.Queue.Submit(ctx, raws[k], "cli"); err != nil || out.State != "pending" {
			b.Fatalf("%s: %+v %v", id, out, err)
		}
		v, err := env.Queue.Preview(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		hashes[k] = v.BindingHash
		m.localSubmit = append(m.localSubmit, time.Since(t))
	}
	m.localSubmits = append(m.localSubmits, float64(len(ids))/time.Since(t0).Seconds())
	t0 = time.Now()
	for k, id := range ids {
		t := time.Now()
		rec, _, err := env.Queue.Decide(ctx, id, approval.Decision{Approve: true, By: "operator:bench", Via: "cli",
			PreviewHash: hashes[k]})
		if err != nil || rec.State != approval.Done {
			b.Fatalf("%s: %s %v", id, rec.State, err)
		}
		m.localDecide = append(m.localDecide, time.Since(t))
	}
	m.localDecisions = append(m.localDecisions, float64(len(ids))/time.Since(t0).Seconds())
}

func (m *throughputFigures) shared(b *testing.B, r *rig, agents []natsqueue.AgentTasks, ops []*natsqueue.Client, round int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n := len(agents)
	raws := make([][]byte, n)
	for k := range raws {
		id := fmt.Sprintf("ts-%d-%d", round, k)
		raws[k] = r.env.Play(id, "/media/"+id+".mkv")
	}
	verdicts := make([]approval.Outcome, n)
	hashes := make([]string, n)
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for k := range agents {
		wg.Go(func() {
			<-start
			t := time.Now()
			verdicts[k], errs[k] = agents[k].Submit(ctx, raws[k], "")
			lat[k] = time.Since(t)
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	m.sharedSubmits = append(m.sharedSubmits, float64(n)/time.Since(t0).Seconds())
	m.sharedSubmit = append(m.sharedSubmit, lat...)
	for k, err := range errs {
		if err != nil || verdicts[k].State != "pending" {
			b.Fatalf("agent %d: %+v %v", k, verdicts[k], err)
		}
		v, _, err := r.c.Get(ctx, verdicts[k].TaskID)
		if err != nil {
			b.Fatal(err)
		}
		hashes[k] = v.PreviewHash
	}
	// the operators' compare-and-sets all at once; one watch of the bucket
	// sees each task done (an operator's own wait, Outcome, is a watch
	// each: a cost of the operators' hosts, not of the executor's rate)
	w, err := r.kv.Watch(ctx, "task.>", jetstream.UpdatesOnly())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	decided := make([]time.Time, n)
	index := map[string]int{}
	for k := range verdicts {
		index[verdicts[k].TaskID] = k
	}
	start = make(chan struct{})
	for k := range ops {
		wg.Go(func() {
			<-start
			d := decision(fmt.Sprintf("operator:op%d@h", k), true, hashes[k])
			_, errs[k] = ops[k].Decide(ctx, verdicts[k].TaskID, d)
			decided[k] = time.Now()
		})
	}
	t0 = time.Now()
	close(start)
	doneAt := make([]time.Time, n)
	for left := n; left > 0; {
		select {
		case <-ctx.Done():
			b.Fatalf("%d decisions not carried out", left)
		case ent := <-w.Updates():
			var v natsqueue.TaskView
			if ent == nil || json.Unmarshal(ent.Value(), &v) != nil {
				continue
			}
			if k, ok := index[v.Record.TaskID]; ok && doneAt[k].IsZero() && v.Record.State.Final() {
				if v.Record.State != approval.Done || v.Result == nil {
					b.Fatalf("%s: %s", v.Record.TaskID, v.Record.State)
				}
				doneAt[k] = time.Now()
				left--
			}
		}
	}
	m.sharedDecisions = append(m.sharedDecisions, float64(n)/time.Since(t0).Seconds())
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			b.Fatalf("operator %d: %v", k, err)
		}
		m.sharedDecide = append(m.sharedDecide, doneAt[k].Sub(decided[k]))
	}
}

func (m *throughputFigures) report(b *testing.B) {
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	ls, ld, ss, sd := med(m.localSubmits), med(m.localDecisions), med(m.sharedSubmits), med(m.sharedDecisions)
	b.ReportMetric(ls, "local-submits/s")
	b.ReportMetric(ld, "local-decisions/s")
	b.ReportMetric(ss, "shared-submits/s")
	b.ReportMetric(sd, "shared-decisions/s")
	// each round's local rate over the shared one run just after it, so
	// that a change of the machine's load between rounds cancels out
	ratios := func(local, shared []float64) []float64 {
		out := make([]float64, len(local))
		for i := range local {
			out[i] = local[i] / shared[i]
		}
		return out
	}
	b.ReportMetric(med(ratios(m.localSubmits, m.sharedSubmits)), "submit-ratio")
	b.ReportMetric(med(ratios(m.localDecisions, m.sharedDecisions)), "decision-ratio")
	report(b, "local-submit", m.localSubmit)
	report(b, "local-decide", m.localDecide)
	report(b, "shared-submit", m.sharedSubmit)
	report(b, "shared-decide", m.sharedDecide)
	b.ReportMetric(0, "ns/op")
}
