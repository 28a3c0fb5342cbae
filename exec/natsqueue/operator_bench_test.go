package natsqueue_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
)

// BenchmarkOperatorScreenLatency measures what an operator's TUI adds over
// loopback (a real server, a real executor, the sim device): submit-to-
// screen (an agent publishes until the operator side is told the task
// changed and lists it pending), decide-to-result through the operator
// side (compare-and-set, then the executor's outcome), and log-to-copy
// (the executor's outcome until the audit mirror's copy holds the task's
// last entry). Reported as P50/P95 in ms.
func BenchmarkOperatorScreenLatency(b *testing.B) {
	r := newRig(b)
	r.submit("scr-first") // the executor's log is on the stream: the mirror knows its subject
	o := r.operator()
	changes := opChanges(b, o)
	path := filepath.Join(b.TempDir(), "audit.log")
	r.runMirror(path)
	ctx := context.Background()
	var screen, decided, copied []time.Duration
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("scr-%d", i)
		i++
		raw := r.env.Play(id, "/media/"+id+".mkv")
		t0 := time.Now()
		if _, err := r.c.Publish(ctx, raw); err != nil {
			b.Fatal(err)
		}
		for listed := false; !listed; {
			ids := <-changes
			if ids != nil && !slices.Contains(ids, id) {
				continue
			}
			recs, _ := o.Pending()
			listed = slices.ContainsFunc(recs, func(r approval.Record) bool { return r.TaskID == id })
		}
		screen = append(screen, time.Since(t0))
		pv, err := o.Preview(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		rec, _, err := o.Decide(ctx, id, approval.Decision{Approve: true, By: "operator:bench@h", PreviewHash: pv.BindingHash})
		if err != nil || rec.State != approval.Done {
			b.Fatalf("%s: %s %v", id, rec.State, err)
		}
		decided = append(decided, time.Since(t1))
		t2 := time.Now()
		for {
			want, _ := os.ReadFile(r.env.AuditPath())
			got, _ := os.ReadFile(path)
			if bytes.Equal(got, want) && bytes.Contains(got, []byte(`"`+id+`"`)) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		copied = append(copied, time.Since(t2))
	}
	report(b, "screen", screen)
	report(b, "decide", decided)
	report(b, "copy", copied)
}
