package natsqueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// BenchmarkAgentTasksLatency measures what an agent on another host waits
// for (`vigil mcp`'s media tools over the shared queue): submit-to-verdict
// (AgentTasks.Submit: publish until the executor's answer) and
// decision-to-agent (an operator's compare-and-set until the agent, woken
// by its watch on the task's key, reads the signed result). P50/P95 in ms;
// BenchmarkLocalQueueFloor is the floor.
func BenchmarkAgentTasksLatency(b *testing.B) {
	r := newRig(b)
	ctx := context.Background()
	a := natsqueue.AgentTasks{Client: r.c, OperatorKey: r.operatorKey()}
	var verdict, answered []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("agent-lat-%d", i)
		i++
		raw := r.env.Play(id, "/media/"+id+".mkv")
		t0 := time.Now()
		out, err := a.Submit(ctx, raw, "bench")
		if err != nil || out.State != "pending" {
			b.Fatalf("%s: %+v %v", id, out, err)
		}
		verdict = append(verdict, time.Since(t0))
		changes, stop, err := a.TaskChanges(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		v, _, err := r.c.Get(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := r.c.Decide(ctx, id, decision("operator:bench@h", true, v.PreviewHash)); err != nil {
			b.Fatal(err)
		}
		for {
			<-changes
			_, res, err := a.Task(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if res != nil {
				break
			}
		}
		answered = append(answered, time.Since(t1))
		stop()
	}
	report(b, "verdict", verdict)
	report(b, "answered", answered)
}
