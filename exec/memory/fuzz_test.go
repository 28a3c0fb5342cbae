package memory

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzArguments throws arbitrary argument objects at the tool over a real
// store: it must never panic, always answer with exactly one text block, and
// keep its categories straight.
func FuzzArguments(f *testing.F) {
	for _, seed := range []string{
		`{"query": "What is Python?"}`, `{}`, `{"query": ""}`, `{"query": "t", "limit": 10.5}`,
		`{"query": "t", "limit": "10"}`, `{"query": "t", "filters": {"tags": ["a", "b"], "source": "s", "date_from": "2025-01-01", "date_to": "2025-12-31"}}`,
		`{"query": "NEAR(\"a\" b) OR * ^ : -"}`, `{"query": "\u0301"}`, `{"query": "\ud800"}`, `[]`, `null`, `{"query": "t", "limit": 1e999}`,
	} {
		f.Add([]byte(seed))
	}
	s, _ := newStore(f)
	addFiller(f, s, 10)
	addMem(f, s, "Python is a programming language", []string{"python"}, "documentation", "2025-01-01")
	tool := NewTool(s, nil)
	f.Fuzz(func(t *testing.T, args []byte) {
		r := tool.Execute(t.Context(), args)
		if len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text == "" {
			t.Fatalf("bad response %+v", r)
		}
		text := r.Text()
		switch {
		case r.IsError && strings.HasPrefix(text, "Error: Invalid input - "):
		case r.IsError && text == UnexpectedText:
			t.Fatalf("unexpected error for %q", args)
		case r.IsError:
			t.Fatalf("store failure for %q: %q", args, text)
		case text == NoResultsText || strings.HasPrefix(text, "Found "):
			if _, errs := ParseArguments(args); len(errs) > 0 {
				t.Fatalf("success despite %v", errs)
			}
		default:
			t.Fatalf("unknown response %q", text)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}
