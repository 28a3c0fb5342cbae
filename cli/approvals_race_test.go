package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/internal/testbin"
)

// runAll starts n vigil processes at once (each with args(i)) and returns
// their exit codes.
func (h *crashHome) runAll(n int, args func(i int) []string) []int {
	h.t.Helper()
	codes := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := h.child("", args(i)...)
			<-start
			out, err := c.CombinedOutput()
			codes[i] = c.ProcessState.ExitCode()
			if err != nil && codes[i] < 0 {
				h.t.Errorf("vigil %v: %v\n%s", args(i), err, out)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	return codes
}

// Races between real processes: the same task_id submitted by 20 processes
// at once (some with other inputs) makes one task and one submitted entry;
// 10 approvals and 10 denials of one task at once make exactly one decision,
// the device sees it at most once, and everyone else is told it was decided.
func TestApprovalsRaceBetweenProcesses(t *testing.T) {
	testbin.FullRunOnly(t, "runs vigil 40 times at once")
	h := newCrashHome(t, testbin.Vigil(t))
	same := h.manifest("race", "1h")
	b, _ := os.ReadFile(same)
	other := filepath.Join(h.home, "race-other.json")
	// other inputs under the same id; either may win the race, so its media
	// still names /media/race.mkv (what checkInvariants counts on the device)
	os.WriteFile(other, []byte(strings.Replace(string(b), "/media/race.mkv", "/media/race.mkv.alt", 1)), 0o600)
	codes := h.runAll(20, func(i int) []string {
		if i%4 == 3 {
			return []string{"submit", other}
		}
		return []string{"submit", same}
	})
	for i, c := range codes {
		want := 0
		if i%4 == 3 {
			want = 2
		}
		// the other request may come first; then the same one is refused instead
		if c != want && c != 2-want {
			t.Errorf("submit %d: exit %d", i, c)
		}
	}
	count := func(id, event string) int {
		n := 0
		audit.Scan(filepath.Join(h.home, "audit.log"), 0, func(l audit.Line) bool {
			if l.Err == nil && l.Entry.TaskID == id && l.Entry.Event == event {
				n++
			}
			return true
		})
		return n
	}
	if n := count("race", audit.EventSubmitted); n != 1 {
		t.Fatalf("%d submitted entries for one task_id", n)
	}
	codes = h.runAll(20, func(i int) []string {
		if i%2 == 0 {
			return []string{"approve", "race", "--yes"}
		}
		return []string{"deny", "race", "--reason", fmt.Sprintf("no %d", i)}
	})
	wins := 0
	for i, c := range codes {
		switch c {
		case 0:
			wins++
		case 1: // already decided
		default:
			t.Errorf("decision %d: exit %d", i, c)
		}
	}
	recs := h.checkInvariants("race")
	decisions := count("race", audit.EventApproved) + count("race", audit.EventDenied)
	if decisions != 1 {
		t.Fatalf("%d decision entries", decisions)
	}
	if wins != 1 {
		t.Fatalf("%d decisions reported success", wins)
	}
	if s := recs["race"].State; s != approval.Done && s != approval.Denied {
		t.Fatalf("state %s", s)
	}
}
