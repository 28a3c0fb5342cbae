package approval_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/config"
	. "github.com/vigil-dev/vigil/exec/approval"
)

// BenchmarkRuleAllowedSubmit is issue 33's submit-to-executed for a task a
// rule allows, on a local home (the sim device; every durable step
// fsynced): target P95 ≤ 30 ms. Beside it, the same work decided by a
// person right after submitting, the path without rules.
func BenchmarkRuleAllowedSubmit(b *testing.B) {
	for _, byRule := range []bool{true, false} {
		name := map[bool]string{true: "rule", false: "person"}[byRule]
		b.Run(name, func(b *testing.B) {
			e, q, _ := withRules(b, config.RuleConfig{ID: "bench", Decision: map[bool]string{true: "allow", false: "ask"}[byRule],
				Capabilities: []string{"MEDIA_PLAY"}})
			raws := make([][]byte, b.N)
			for i := range raws {
				raws[i] = e.Play(fmt.Sprintf("b-%s-%06d", name, i), "/media/movie.mkv")
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				out := submitTo(b, q, raws[i])
				if !byRule {
					v, err := q.Preview(context.Background(), out.TaskID)
					if err != nil {
						b.Fatal(err)
					}
					rec, _, err := q.Decide(context.Background(), out.TaskID, Decision{Approve: true, By: "operator:bench", PreviewHash: v.BindingHash})
					if err != nil {
						b.Fatal(err)
					}
					out.State = string(rec.State)
				}
				took = append(took, time.Since(start))
				if out.State != string(Done) {
					b.Fatalf("not done: %+v", out)
				}
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
