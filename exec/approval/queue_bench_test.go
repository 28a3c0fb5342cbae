package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
)

// historyHome is a home with pending tasks submitted through the queue and
// finished ones: one real denial, its record copied under other ids (the
// record is all that opening or listing could read of a finished task), and
// the index rebuilt from the records so it lists them as finished.
func historyHome(b *testing.B, pending, finished int) *approvaltest.Env {
	b.Helper()
	env := approvaltest.New(b)
	env.Submit(env.Play("denied-template", "/media/t.mkv"))
	if _, _, err := env.Queue.Decide(context.Background(), "denied-template", Decision{By: "operator:bench", Reason: "no"}); err != nil {
		b.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(env.TasksDir(), "denied-template", "record.json"))
	if err != nil {
		b.Fatal(err)
	}
	var r Record
	if err := json.Unmarshal(tmpl, &r); err != nil {
		b.Fatal(err)
	}
	for i := range finished - 1 {
		r.TaskID = fmt.Sprintf("done-%06d", i)
		rb, _ := json.Marshal(r)
		dir := filepath.Join(env.TasksDir(), r.TaskID)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "record.json"), rb, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for i := range pending {
		env.Submit(env.Play(fmt.Sprintf("pend-%04d", i), "/media/p.mkv"))
	}
	if _, err := env.Queue.RebuildIndex(); err != nil {
		b.Fatal(err)
	}
	return env
}

// BenchmarkQueueOpen opens the queue (reconciling what is open) in a home
// with 100 pending tasks and a short or long history: the cost must not
// follow the history (issue 21: ≤ 1.2× at 100,000 finished against 100).
func BenchmarkQueueOpen(b *testing.B) {
	for _, finished := range []int{100, 10000} {
		b.Run(fmt.Sprintf("pending=100/finished=%d", finished), func(b *testing.B) {
			env := historyHome(b, 100, finished)
			for b.Loop() {
				env.Open()
			}
		})
	}
}

// BenchmarkPending lists the pending tasks in the same homes.
func BenchmarkPending(b *testing.B) {
	for _, finished := range []int{100, 10000} {
		b.Run(fmt.Sprintf("pending=100/finished=%d", finished), func(b *testing.B) {
			env := historyHome(b, 100, finished)
			for b.Loop() {
				list, err := env.Queue.Pending()
				if err != nil || len(list) != 100 || !strings.HasPrefix(list[0].TaskID, "pend-") {
					b.Fatalf("pending: %d tasks, %v", len(list), err)
				}
			}
		})
	}
}
