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
// gives (its bucket watch): the test sends it after deciding. read tells
// the test the call has read the task pending: it is in its wait.
type signalledTasks struct {
	LocalTasks
	changed chan struct{}
	read    chan struct{}
}

func (s signalledTasks) Changes(context.Context, string) (<-chan struct{}, func(), error) {
	return s.changed, func() {}, nil
}

func (s signalledTasks) Status(ctx context.Context, id string) (TaskStatus, error) {
	st, err := s.LocalTasks.Status(ctx, id)
	if err == nil && st.Record.State == approval.Pending {
		select {
		case s.read <- struct{}{}:
		default:
		}
	}
	return st, err
}

// TestMCPWaitWakesOnTaskChange: with a poll far longer than the test, a
// waiting media call still answers once its Tasks signal a change — the
// shared queue's waits are woken by the bucket, not by polling.
func TestMCPWaitWakesOnTaskChange(t *testing.T) {
	f := newFixture(t)
	changed, read := make(chan struct{}, 1), make(chan struct{}, 1)
	d := f.deps
	d.Tasks, d.Poll = signalledTasks{LocalTasks{Queue: f.env.Queue}, changed, read}, time.Hour
	f.srv = New(d)
	cs := f.connect(t, "stdio")
	const id = "play-woken"
	q := f.env.Open()
	go func() {
		select {
		case <-read: // the call read the task pending: only the signal wakes it now
		case <-t.Context().Done():
			return
		}
		if _, _, err := q.Decide(context.Background(), id, approval.Decision{Approve: true,
			By: "operator:test", Via: "cli"}); err == nil {
			changed <- struct{}{}
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
