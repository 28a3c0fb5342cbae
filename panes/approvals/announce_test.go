package approvalspane

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
)

// written is what announce's command writes to the terminal.
func written(t *testing.T, cmd tea.Cmd) string {
	t.Helper()
	if cmd == nil {
		return ""
	}
	raw, ok := cmd().(tea.RawMsg)
	if !ok {
		t.Fatalf("announce returned %T", cmd())
	}
	return fmt.Sprint(raw.Msg)
}

func burstOf(n int, from int) []approval.Record {
	list := make([]approval.Record, n)
	for i := range list {
		list[i] = approval.Record{TaskID: fmt.Sprintf("task-%02d", from+i), Agent: "4;3;50", CapabilityID: "MEDIA_PLAY",
			Device: "tv", State: approval.Pending}
	}
	return list
}

// A burst of tasks rings one bell and sends one notification, with the
// count ("30 new tasks"), and what comes within the burst window after is
// told together once the window has passed — not a bell and an OSC 9 each.
func TestAnnounceCoalescesABurst(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &Pane{o: Options{Notify: true, Now: func() time.Time { return now }}}
	if got := written(t, p.announce(burstOf(30, 0))); got != "\a\x1b]9;Vigil: 30 new tasks\x1b\\" {
		t.Fatalf("a burst of 30 wrote %q", got)
	}
	now = now.Add(time.Second)
	if got := written(t, p.announce(burstOf(4, 30))); got != "" {
		t.Fatalf("within the window: %q", got)
	}
	now = now.Add(time.Second)
	if got := written(t, p.announce(burstOf(1, 34))); got != "" {
		t.Fatalf("within the window: %q", got)
	}
	now = now.Add(3 * time.Second)
	if got := written(t, p.announce(nil)); got != "\a\x1b]9;Vigil: 5 new tasks\x1b\\" {
		t.Fatalf("after the window: %q", got)
	}
	now = now.Add(time.Minute)
	one := burstOf(1, 40)
	if got := written(t, p.announce(one)); got != "\a\x1b]9;Vigil: 4;3;50 asks to MEDIA_PLAY on tv\x1b\\" {
		t.Fatalf("a single task: %q", got)
	}
}

func TestAnnounceBellOnlyRingsOncePerBurst(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := &Pane{o: Options{Bell: true, Now: func() time.Time { return now }}}
	if got := written(t, p.announce(burstOf(30, 0))); got != "\a" {
		t.Fatalf("a burst of 30 with the bell alone wrote %q", got)
	}
}
