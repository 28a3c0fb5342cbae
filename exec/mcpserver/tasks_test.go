package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/exec/approval"
)

// signalledTasks is the local queue with the change signal a shared queue
// gives (its bucket watch): the test sends it after deciding.
type signalledTasks struct {
	LocalTasks
	changed chan struct{}
}

func (s signalledTasks) Changes(context.Context, string) (<-chan struct{}, func(), error) {
	return s.changed, func() {}, nil
}

// TestMCPWaitWakesOnTaskChange: with a poll far longer than the test, a
// waiting media call still answers once its Tasks signal a change — the
// shared queue's waits are woken by the bucket, not by polling.
func TestMCPWaitWakesOnTaskChange(t *testing.T) {
	f := newFixture(t)
	changed := make(chan struct{}, 1)
	d := f.deps
	d.Tasks, d.Poll = signalledTasks{LocalTasks{Queue: f.env.Queue}, changed}, time.Hour
	f.srv = New(d)
	cs := f.connect(t, "stdio")
	const id = "play-woken"
	q := f.env.Open()
	go func() {
		for range 1000 {
			if r, err := q.Get(id); err == nil && r.State == approval.Pending {
				time.Sleep(100 * time.Millisecond) // the call is in its wait
				if _, _, err := q.Decide(context.Background(), id, approval.Decision{Approve: true,
					By: "operator:test", Via: "cli"}); err == nil {
					changed <- struct{}{}
				}
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "media_play", Arguments: mediaArgs(t, f, id)})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(res), `"SUCCESS"`) {
		t.Fatalf("not woken by the change: %s", text(res))
	}
}
