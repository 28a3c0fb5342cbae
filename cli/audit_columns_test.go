package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/audit"
)

// forgedFields are values an agent or a hand-edited log can put in an
// entry, each trying to paint columns or a row of its own: spaces that
// look like the next columns, a tab and a newline (tabwriter's separators),
// an escape, bidi and zero-width characters, and wide characters (one rune,
// two cells: tabwriter counted runes).
var forgedFields = []audit.Entry{
	{Actor: "agent:x                 approved        t-fake                    kitchen                   ok", Event: audit.EventSubmitted, TaskID: "t-1", Target: "tv"},
	{Actor: "agent:x\tapproved\tt-fake\tkitchen\tok\n99\t2026-01-01T00:00:00Z\tvigil", Event: audit.EventSubmitted, TaskID: "t-2", Target: "tv"},
	{Actor: "agent:\x1b[2K\x1b[1Gfake", Event: audit.EventSubmitted, TaskID: "t-3", Target: "tv\u202e\u200b\u200bkitchen"},
	{Actor: "agent:表表表表表表表表表表表表", Event: audit.EventSubmitted, TaskID: "t-4", Target: "客厅客厅客厅客厅客厅客厅客厅"},
	{Actor: "agent:y", Event: audit.EventRejected, TaskID: "bad id   approved   kitchen", Target: "tv", ErrorCode: "INVALID_QUERY"},
}

// checkAuditColumns: every row has the header's columns at the header's
// display positions, and no forged value reaches a column of its own.
func checkAuditColumns(t *testing.T, header string, rows []string) {
	t.Helper()
	// the header is ASCII: its byte index is its cell
	cols := map[string]int{}
	for _, name := range []string{"TIME", "ACTOR", "EVENT", "TASK", "TARGET", "OUTCOME"} {
		cols[name] = strings.Index(header, name)
	}
	for _, row := range rows {
		if strings.ContainsAny(row, "\t\x1b\u202e\u200b") {
			t.Errorf("a raw tab, escape or invisible character reached the terminal: %q", row)
		}
		if strings.Contains(row, "kitchen") || strings.Contains(row, "t-fake") {
			t.Errorf("a value painted columns of its own: %q", row)
		}
		// each column starts after two spaces at the header's cell
		for name, c := range cols {
			prefix := ansi.Truncate(row, c, "")
			if ansi.StringWidth(prefix) != c || !strings.HasSuffix(prefix, "  ") {
				t.Errorf("%s does not start at cell %d in %q", name, c, row)
			}
		}
		if f := strings.Fields(ansi.Cut(row, cols["EVENT"], cols["TASK"])); len(f) != 1 {
			t.Errorf("EVENT column holds %q", f)
		}
	}
}

func TestAuditShowCutsEachValueToItsColumn(t *testing.T) {
	home, l := auditHome(t, 0)
	for _, e := range forgedFields {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	out, errs, code := run(t, home, "audit", "show")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(rows) != len(forgedFields)+1 {
		t.Fatalf("%d lines for %d entries:\n%s", len(rows), len(forgedFields), out)
	}
	checkAuditColumns(t, rows[0], rows[1:])
	// a valid task id is whole, an invalid one (a rejected submission's) cut
	if !strings.Contains(rows[1], "  t-1  ") || strings.Contains(rows[5], "kitchen") {
		t.Errorf("task ids:\n%s", out)
	}
	// --json is the stored line, whole
	out, _, _ = run(t, home, "audit", "show", "--json")
	if !strings.Contains(out, `approved        t-fake                    kitchen`) || !strings.Contains(out, `"task_id":"bad id   approved   kitchen"`) {
		t.Fatalf("--json must keep the whole values:\n%s", out)
	}
}

func TestAuditTailCutsEachValueToItsColumn(t *testing.T) {
	home, l := auditHome(t, 0)
	for _, e := range forgedFields {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- runAudit(t, ctx, home, &out, &errb, "audit", "tail", "-n", "100") }()
	deadline := time.After(20 * time.Second)
	for strings.Count(out.String(), "\n") < len(forgedFields) {
		select {
		case <-deadline:
			t.Fatalf("waiting for the backlog; got:\n%s\nstderr: %s", out.String(), errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("tail exit %d: %s", code, errb.String())
	}
	rows := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(rows) != len(forgedFields) {
		t.Fatalf("%d lines for %d entries:\n%s", len(rows), len(forgedFields), out.String())
	}
	// tail prints no header: its rows line up under the one show would print
	checkAuditColumns(t, auditTable{seq: 7}.header(), rows)
}

// TestAuditTableMasksSecretShapedIDs: a task id or actor that is a secret
// is masked in the table; --json keeps the stored line.
func TestAuditTableMasksSecretShapedIDs(t *testing.T) {
	home, l := auditHome(t, 0)
	if _, err := l.Append(audit.Entry{Actor: "agent:" + secretID, Event: audit.EventSubmitted, TaskID: secretID, Target: "tv"}); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, home, "audit", "show")
	if code != 0 || strings.Contains(out, secretID[8:]) || !strings.Contains(out, "agent:ghp_...") {
		t.Fatalf("a secret-shaped id is shown:\n%s", out)
	}
	if out, _, _ := run(t, home, "audit", "show", "--json"); !strings.Contains(out, secretID) {
		t.Fatalf("--json must keep the stored line:\n%s", out)
	}
}
