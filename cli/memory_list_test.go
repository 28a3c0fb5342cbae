package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/safetext"
)

// memoryListHome is a home holding five memories on known days.
func memoryListHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for _, m := range [][]string{
		{"old note about go", "2025-01-01", "notes", "go"},
		{"january standup", "2025-01-15T09:00:00Z", "slack", "work"},
		{"january retro", "2025-01-15T17:30:00Z", "slack", "work"},
		{"february plan about go", "2025-02-03", "notes", "work"},
		{"newest idea", "2025-03-01", "notes", "idea"},
	} {
		if _, errs, code := run(t, home, "memory", "add", "--text", m[0], "--date", m[1], "--source", m[2], "--tag", m[3]); code != 0 {
			t.Fatalf("memory add: exit %d %s", code, errs)
		}
	}
	return home
}

// listJSON runs `vigil memory list` (stdout is not a terminal: JSON) and
// decodes each item as a map, so absent fields show.
func listJSON(t *testing.T, home string, args ...string) []map[string]any {
	t.Helper()
	out, errs, code := run(t, home, append([]string{"memory", "list"}, args...)...)
	if code != 0 {
		t.Fatalf("memory list %v: exit %d %s", args, code, errs)
	}
	var items []map[string]any
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	return items
}

func texts(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["text"].(string))
	}
	return out
}

// Filters work without a query: newest first, no score or match.
func TestMemoryListFiltersWithoutQuery(t *testing.T) {
	home := memoryListHome(t)
	cases := []struct {
		args []string
		want []string
	}{
		{nil, []string{"newest idea", "february plan about go", "january retro", "january standup", "old note about go"}},
		{[]string{"--limit", "2"}, []string{"newest idea", "february plan about go"}},
		{[]string{"--tag", "work"}, []string{"february plan about go", "january retro", "january standup"}},
		{[]string{"--source", "slack"}, []string{"january retro", "january standup"}},
		{[]string{"--from", "2025-01-15", "--to", "2025-02-03"}, []string{"february plan about go", "january retro", "january standup"}},
		{[]string{"--to", "2025-01-15T09:00:00Z"}, []string{"january standup", "old note about go"}},
		{[]string{"--from", "2025-01-15T12:00:00+01:00", "--to", "2025-01-31"}, []string{"january retro"}},
		{[]string{"--source", "email"}, nil},
	}
	for _, c := range cases {
		items := listJSON(t, home, c.args...)
		if got := texts(items); !slices.Equal(got, c.want) {
			t.Errorf("memory list %v: %q, want %q", c.args, got, c.want)
		}
		for _, it := range items {
			if _, ok := it["score"]; ok {
				t.Errorf("memory list %v: a score without a query: %v", c.args, it)
			}
			if _, ok := it["match"]; ok {
				t.Errorf("memory list %v: a match without a query: %v", c.args, it)
			}
		}
	}
}

// Each item has the contract's fields; a query adds score and match.
func TestMemoryListJSONFields(t *testing.T) {
	home := memoryListHome(t)
	items := listJSON(t, home, "--limit", "1")
	want := []string{"created_at", "id", "source", "tags", "text"}
	if len(items) != 1 || !slices.Equal(slices.Sorted(mapKeys(items[0])), want) {
		t.Fatalf("fields %v, want %v", items, want)
	}
	if items[0]["created_at"] != "2025-03-01T00:00:00Z" || items[0]["source"] != "notes" ||
		!slices.Equal(items[0]["tags"].([]any), []any{"idea"}) {
		t.Fatalf("item %v", items[0])
	}
	items = listJSON(t, home, "--query", "go", "--json")
	if got := texts(items); !slices.Equal(got, []string{"old note about go", "february plan about go"}) &&
		!slices.Equal(got, []string{"february plan about go", "old note about go"}) {
		t.Fatalf("query hits %q", got)
	}
	for _, it := range items {
		score, ok := it["score"].(float64)
		if !ok || score <= 0 || score > 1 || it["match"] != "keyword" {
			t.Fatalf("a ranked item without its score or match: %v", it)
		}
	}
	// the query with filters: only the notes
	if got := texts(listJSON(t, home, "-q", "january go", "--source", "slack")); len(got) != 2 || !strings.HasPrefix(got[0], "january") {
		t.Fatalf("query and source: %q", got)
	}
	// nothing matches: an empty array, not null
	if out, _, _ := run(t, home, "memory", "list", "--tag", "none"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("no match: %q", out)
	}
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Refused arguments exit 2 naming the flag or field; an unreadable
// database exits 3.
func TestMemoryListExitCodes(t *testing.T) {
	home := memoryListHome(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--query", " "}, "query: cannot be whitespace-only"},
		{[]string{"--limit", "0"}, "--limit: must be between 1 and 1000"},
		{[]string{"--limit", "1001"}, "--limit"},
		{[]string{"--from", "2025-02-30"}, "--from: invalid date"},
		{[]string{"--to", "yesterday"}, "--to: invalid date format"},
		{[]string{"--from", "2025-02-01", "--to", "2025-01-01"}, "--from must not be after --to"},
		{[]string{"--tag", " "}, "filters.tags"},
		{[]string{"--source", strings.Repeat("s", 101)}, "filters.source"},
	} {
		out, errs, code := run(t, home, append([]string{"memory", "list"}, c.args...)...)
		if code != ExitBadInput || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("memory list %v: exit %d, stderr %q, stdout %q; want exit 2 saying %q", c.args, code, errs, out, c.want)
		}
	}
	damaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(damaged, "memory.db"), []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := run(t, damaged, "memory", "list"); code != ExitExecution || !strings.Contains(errs, "Memory database") {
		t.Fatalf("damaged database: exit %d %q", code, errs)
	}
}

// `memory search` prints the same response as before and exits 2 when the
// tool refused the arguments, 3 when the search failed.
func TestMemorySearchExitCodes(t *testing.T) {
	home := memoryListHome(t)
	out, _, code := run(t, home, "memory", "search", `{"query":"january"}`)
	if code != 0 || !strings.Contains(out, `"isError": false`) || !strings.Contains(out, "Found 2 results") {
		t.Fatalf("a search: exit %d %s", code, out)
	}
	out, _, code = run(t, home, "memory", "search", `{"query":"zzzz"}`)
	if code != 0 || !strings.Contains(out, "No results found") {
		t.Fatalf("no results: exit %d %s", code, out)
	}
	out, errs, code := run(t, home, "memory", "search", `{"query":"","limit":0}`)
	want := "Error: Invalid input - query: ensure this value has at least 1 character; limit: ensure this value is greater than or equal to 1"
	if code != ExitBadInput || !strings.Contains(out, want) || !strings.Contains(out, `"isError": true`) || errs != "" {
		t.Fatalf("refused: exit %d stdout %s stderr %q", code, out, errs)
	}
	out, _, code = run(t, home, "memory", "search", "-q", "x", "--limit", "101", "--text")
	if code != ExitBadInput || !strings.HasPrefix(out, "Error: Invalid input - limit") {
		t.Fatalf("refused (--text): exit %d %q", code, out)
	}
	// filters without a query: refused by the tool's command, which says where to go
	if _, errs, code := run(t, home, "memory", "search", "--tag", "work"); code != ExitBadInput || !strings.Contains(errs, "vigil memory list --tag") {
		t.Fatalf("filters alone: exit %d %q", code, errs)
	}
	damaged := t.TempDir()
	if err := os.WriteFile(filepath.Join(damaged, "memory.db"), []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code = run(t, damaged, "memory", "search", `{"query":"x"}`)
	if code != ExitExecution || !strings.Contains(out, "Error: Processing error: Memory database") || errs != "" {
		t.Fatalf("failed: exit %d stdout %s stderr %q", code, out, errs)
	}
}

// On a terminal the list is a table whose every value went through
// safetext: a memory's escape sequence, line end or bidi control cannot
// paint the screen or a column; --json still prints JSON there.
func TestMemoryListTableOnATerminal(t *testing.T) {
	h := newHostileHome(t)
	text := "evil \x1b[2J\x1b[H text\nsecond line"
	if _, errs, code := h.run(nil, "memory", "add", "--text", text, "--tag", "t\u202eag", "--source", "src\tx", "--date", "2025-05-01"); code != 0 {
		t.Fatalf("memory add: %s", errs)
	}
	got, code := h.onTerminal("", "memory", "list")
	if code != 0 {
		t.Fatalf("exit %d: %q", code, got)
	}
	if strings.Contains(got, "\x1b") || strings.Contains(got, "\u202e") || strings.Contains(got, "\t") {
		t.Fatalf("raw control characters reached the terminal: %q", got)
	}
	lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(got, "\r\n", "\n"), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID  CREATED           SOURCE") ||
		!strings.Contains(lines[1], "2025-05-01 00:00") || !strings.Contains(lines[1], "evil "+safetext.Line("\x1b[2J")) ||
		!strings.HasSuffix(lines[1], "…") || lines[2] != "1 memory, newest first" {
		t.Fatalf("table:\n%s", got)
	}
	if strings.Contains(lines[0], "SCORE") {
		t.Fatalf("a score column without a query:\n%s", got)
	}
	got, _ = h.onTerminal("", "memory", "list", "-q", "evil")
	if !strings.Contains(got, "SCORE  MATCH") || !strings.Contains(got, "keyword") || !strings.Contains(got, "1 memory, best first") {
		t.Fatalf("ranked table:\n%s", got)
	}
	got, _ = h.onTerminal("", "memory", "list", "--json")
	var items []map[string]any
	if err := json.Unmarshal([]byte(got), &items); err != nil || len(items) != 1 || items[0]["text"] != text {
		t.Fatalf("--json on a terminal: %v %q", err, got)
	}
}

// A wide terminal shows the whole text, its lines joined by spaces.
func TestMemoryTableJoinsLines(t *testing.T) {
	var b strings.Builder
	items := memoryListItems([]memory.Hit{{Memory: memory.Memory{ID: 7, Text: "first line\r\nsecond\nthird\rfourth", Source: "",
		CreatedAt: time.Date(2025, 5, 1, 8, 30, 0, 0, time.UTC)}}}, false)
	if err := writeMemoryTable(&b, items, false, 200); err != nil {
		t.Fatal(err)
	}
	row := strings.Split(b.String(), "\n")[1]
	if !strings.HasPrefix(row, "7   2025-05-01 08:30  -") || !strings.HasSuffix(row, "first line second third\\rfourth") {
		t.Fatalf("row %q", row)
	}
}

// With [memory.embedder] a listing's query is the hybrid search: each item
// says how it was found; without a query the embedder is not asked.
func TestMemoryListHybridMatch(t *testing.T) {
	home, es, _ := memoryEmbedHome(t, "model-a", true)
	for _, text := range []string{"The car is booked for Friday", "Water the tomatoes"} {
		if _, e, code := runMemoryEmbed(t, home, true, "memory", "add", "--text", text); code != 0 {
			t.Fatalf("add: %d %s", code, e)
		}
	}
	out, errs, code := runMemoryEmbed(t, home, true, "memory", "list", "-q", "vehicle reservation")
	var items []map[string]any
	if err := json.Unmarshal([]byte(out), &items); err != nil || code != 0 || len(items) != 1 ||
		items[0]["match"] != "meaning" || items[0]["text"] != "The car is booked for Friday" || items[0]["score"] != 0.5 {
		t.Fatalf("exit %d %v %s %s", code, err, out, errs)
	}
	es.mu.Lock()
	es.down = true
	es.mu.Unlock()
	if out, errs, code := runMemoryEmbed(t, home, true, "memory", "list", "--limit", "1"); code != 0 || !strings.Contains(out, "Water the tomatoes") {
		t.Fatalf("a listing without a query asked the failing embedder: exit %d %s %s", code, out, errs)
	}
	// required = true and the embedder down: the search failed, exit 3
	if _, errs, code := runMemoryEmbed(t, home, true, "memory", "list", "-q", "car"); code != ExitExecution || !strings.Contains(errs, "Embedding generation failed") {
		t.Fatalf("exit %d %s", code, errs)
	}
}
