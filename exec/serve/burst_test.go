package serve

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/notify"
	"github.com/vigil-dev/vigil/internal/testwait"
)

// Thirty tasks at once are two runs of the notify command: the first task
// at once, then the other 29 together, naming their ids and the gate.
func TestServeFoldsABurstIntoOneNotification(t *testing.T) {
	e := newRealEnv(t, time.Minute)
	for i := range 30 {
		e.submit(fmt.Sprintf("burst-%02d", i))
	}
	var ev events
	_, stop := start(t, Options{Queue: e.open(time.Minute), TasksDir: e.TasksDir(), Audit: e.Audit, Notify: ev.add,
		MaxTick: time.Hour, NotifyWindow: 300 * time.Millisecond, SSHAddress: "vigil@gate.example:2222"})
	defer stop()
	var got []notify.Event
	testwait.Until(t, 10*time.Second, "two notifications", func() bool {
		got, _ = ev.list()
		return len(got) >= 2
	})
	time.Sleep(3 * 300 * time.Millisecond) // room for a wrong third run to show
	got, _ = ev.list()
	if len(got) != 2 {
		t.Fatalf("%d notifications, want 2: %+v", len(got), got)
	}
	first, rest := got[0], got[1]
	if first.Kind != notify.Arrived || first.Count > 1 {
		t.Fatalf("first: %+v", first)
	}
	if rest.Kind != notify.Several || rest.Count != 29 || rest.Summary != "29 new tasks" {
		t.Fatalf("burst: %+v", rest)
	}
	if ids := strings.Fields(rest.TaskID); len(ids) != 21 || ids[20] != "…" || strings.Contains(rest.TaskID, first.TaskID+" ") {
		t.Fatalf("burst ids %q (first told %s)", rest.TaskID, first.TaskID)
	}
	if rest.SSH != "ssh -p 2222 vigil@gate.example" || notify.Message(rest) != "29 new tasks" {
		t.Fatalf("burst ssh %q message %q", rest.SSH, notify.Message(rest))
	}
}
