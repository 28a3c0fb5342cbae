package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/vigil-dev/vigil/audit"
)

// TestAuditShowFilterAgreesWithFullParse: `audit show --task/--event`
// (needle search, only candidate lines parsed) prints byte for byte what
// the full parse of every line, filtered on the entry, prints, on values
// with escaped quotes, backslashes, controls, bidi and other unicode, text
// that spells a key, and a needle inside another entry's details.
func TestAuditShowFilterAgreesWithFullParse(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "audit.log")
	l, err := audit.Open(path, auditClock())
	if err != nil {
		t.Fatal(err)
	}
	entries := []audit.Entry{
		{Actor: `agent "q" \ b`, Event: audit.EventSubmitted, TaskID: `task-"7"`, Target: "tab\tnew\nline"},
		{Actor: "ctl\x1b[31m\x7f", Event: audit.EventApproved, TaskID: "task-7", Target: "tv\u202egnp.exe\u2028"},
		{Actor: "café ☕", Event: audit.EventExecuted, TaskID: "task-7x", Target: "<b>&</b>"},
		{Actor: "a", Event: audit.EventDenied, TaskID: `","task_id":"task-7`, Target: `","event":"approved`},
		{Actor: "a", Event: audit.EventFailed, TaskID: "task-8", Success: false, ErrorCode: "X",
			Details: json.RawMessage(`{"task_id":"task-7","event":"approved","q":"\"task_id\":\"task-7\""}`)},
		{Actor: "日本", Event: audit.EventApproved, TaskID: "task-7", Success: true},
	}
	for _, e := range entries {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	full := func(q audit.Query) (string, string) {
		var lines []audit.Line
		audit.Scan(path, 0, func(l audit.Line) bool {
			if l.Err != nil || q.Match(l.Entry) {
				lines = append(lines, l)
			}
			return true
		})
		var out, errb bytes.Buffer
		app := NewApp()
		app.Out, app.Err = &out, &errb
		if err := printEntriesJSON(app, lines); err != nil {
			t.Fatal(err)
		}
		var table bytes.Buffer
		app.Out = &table
		printEntriesTable(app, lines)
		return out.String(), table.String()
	}
	matched := 0
	for _, q := range []audit.Query{
		{TaskID: "task-7"}, {TaskID: `task-"7"`}, {TaskID: "task-7x"}, {TaskID: `","task_id":"task-7`},
		{TaskID: "task-8"}, {Event: audit.EventApproved}, {Event: audit.EventDenied},
		{TaskID: "task-7", Event: audit.EventApproved}, {TaskID: "task-8", Event: audit.EventApproved},
	} {
		args := []string{"audit", "show"}
		if q.TaskID != "" {
			args = append(args, "--task", q.TaskID)
		}
		if q.Event != "" {
			args = append(args, "--event", q.Event)
		}
		wantJSON, wantTable := full(q)
		gotJSON, errs, code := run(t, home, append(args, "--json")...)
		if code != 0 || gotJSON != wantJSON {
			t.Fatalf("%v --json: exit %d %s\ngot  %q\nwant %q", args, code, errs, gotJSON, wantJSON)
		}
		gotTable, errs, code := run(t, home, args...)
		if code != 0 || gotTable != wantTable {
			t.Fatalf("%v: exit %d %s\ngot  %q\nwant %q", args, code, errs, gotTable, wantTable)
		}
		if gotJSON != "" {
			matched++
		}
	}
	if matched < 7 {
		t.Fatalf("only %d queries matched anything", matched)
	}
}
