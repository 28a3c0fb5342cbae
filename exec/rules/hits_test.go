package rules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
)

func TestHits(t *testing.T) {
	h := newStoreHome(t)
	add := func(actor, event string, details map[string]any) {
		t.Helper()
		if _, err := h.log.Append(audit.Entry{Actor: actor, Event: event, TaskID: "t", Details: audit.Details(details)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		add("rule:kitchen-pause", audit.EventApproved, map[string]any{"n": i, "pad": strings.Repeat("x", 100*i)})
	}
	add("rule:no-ads", audit.EventDenied, map[string]any{})
	add("rule:no-ads", audit.EventDenied, map[string]any{"long": strings.Repeat("y", 300)}) // longer than the test's chunk
	add("operator:ada", audit.EventApproved, map[string]any{"actor": "rule:fake"})          // the needle in details
	add("rule:kitchen-pause", audit.EventExecuted, map[string]any{})                        // not a decision
	add("vigil", audit.EventRuleAdded, map[string]any{"rule_id": "rt-1"})
	want := map[string]int{"kitchen-pause": 3, "no-ads": 2}
	for _, chunk := range []int{64, 200, 4 << 20} {
		hitsChunk = chunk
		got, err := Hits(context.Background(), h.log.Path())
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("chunk %d: %v %v, want %v", chunk, got, err, want)
		}
	}
	hitsChunk = 4 << 20
	// a torn last line (no newline yet) is not counted
	f, _ := os.OpenFile(h.log.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":99,"actor":"rule:no-ads","event":"denied"`)
	f.Close()
	if got, _ := Hits(context.Background(), h.log.Path()); got["no-ads"] != 2 {
		t.Errorf("a torn line counted: %v", got)
	}
	if got, err := Hits(context.Background(), filepath.Join(h.dir, "none.log")); err != nil || len(got) != 0 {
		t.Errorf("no log: %v %v", got, err)
	}
}
