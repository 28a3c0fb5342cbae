package memory

// The 13 edge cases of seed 002, each with the exact response the seed gives
// (or, where the seed's failing core is Ollama/FalkorDB, this store's own
// wording for the same category).

import (
	"strings"
	"testing"
)

func TestEdgeCases(t *testing.T) {
	s, path, _ := pythonCorpus(t)
	tool := NewTool(s, nil)
	cases := []struct {
		name, args, want string
		isErr            bool
		setup            func(t *testing.T) *Tool
	}{
		{"EC01_EmptyQuery", `{"query": ""}`, "Error: Invalid input - query: ensure this value has at least 1 character", true, nil},
		{"EC02_QueryTooLong", `{"query": "` + strings.Repeat("x", 1001) + `"}`, "Error: Invalid input - query: ensure this value has at most 1000 characters", true, nil},
		{"EC03_WhitespaceOnlyQuery", `{"query": "   "}`, "Error: Invalid input - query: cannot be whitespace-only", true, nil},
		{"EC04_LimitZero", `{"query": "test", "limit": 0}`, "Error: Invalid input - limit: ensure this value is greater than or equal to 1", true, nil},
		{"EC05_LimitExceedsMaximum", `{"query": "test", "limit": 200}`, "Error: Invalid input - limit: ensure this value is less than or equal to 100", true, nil},
		{"EC06_NegativeLimit", `{"query": "test", "limit": -5}`, "Error: Invalid input - limit: ensure this value is greater than or equal to 1", true, nil},
		{"EC07_InvalidFilterKeys", `{"query": "test", "filters": {"unknown_key": "value"}}`, "Error: Invalid input - filters: extra fields not permitted", true, nil},
		{"EC08_MalformedDateFilter", `{"query": "test", "filters": {"date_from": "2025/01/01"}}`, "Error: Invalid input - filters.date_from: invalid date format, expected YYYY-MM-DD", true, nil},
		{"EC09_InvalidDateRange", `{"query": "test", "filters": {"date_from": "2025-12-31", "date_to": "2025-01-01"}}`, "Error: Invalid input - filters: date_from must be <= date_to", true, nil},
		{"EC10_NoResultsFound", `{"query": "nonexistent topic xyz123"}`, "No results found matching your query.", false, nil},
		{"EC11_DatabaseConnectionFailure", `{"query": "test"}`, "Error: Processing error: Database connection failed: memory database is closed", true,
			func(t *testing.T) *Tool {
				c, _ := newStore(t)
				c.Close()
				return NewTool(c, nil)
			}},
		{"EC12_IndexUnavailable", `{"query": "test"}`, "Error: Search failed: Full-text index not found", true,
			func(t *testing.T) *Tool {
				c, p := newStore(t)
				if _, err := rawDB(t, p).Exec(`DROP TABLE memories_fts`); err != nil {
					t.Fatal(err)
				}
				return NewTool(c, nil)
			}},
		{"EC13_FiltersExcludeAllResults", `{"query": "Python", "filters": {"tags": ["nonexistent_tag"]}}`, "No results found matching your query.", false, nil},
	}
	_ = path
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := tool
			if c.setup != nil {
				tl = c.setup(t)
			}
			r := tl.Execute(t.Context(), []byte(c.args))
			if r.Text() != c.want || r.IsError != c.isErr || len(r.Content) != 1 || r.Content[0].Type != "text" {
				t.Fatalf("got %+v\nwant text %q isError %v", r, c.want, c.isErr)
			}
		})
	}
}

// More argument rules: the ones the seed lists under its examples, plus the
// issue's (integers only, UTF-8, unknown keys) — must-match / must-not-match.
func TestArgumentRules(t *testing.T) {
	s, _ := newStore(t)
	tool := NewTool(s, nil)
	bad := map[string]string{
		`{"query": 123}`:                                  "query: str type expected",
		`{"query": null}`:                                 "query: field required",
		`{"limit": 0}`:                                    "query: field required; limit: ensure this value is greater than or equal to 1",
		`{"query": "t", "limit": "10"}`:                   "limit: value is not a valid integer",
		`{"query": "t", "limit": 10.5}`:                   "limit: value is not a valid integer",
		`{"query": "t", "limit": true}`:                   "limit: value is not a valid integer",
		`{"query": "t", "limit": 1e-400}`:                 "limit: value is not a valid integer",
		`{"query": "t", "filters": {"tags": "python"}}`:   "filters.tags: value is not a valid list",
		`{"query": "t", "filters": {"tags": [123, 456]}}`: "filters.tags: value is not a valid string",
		`{"query": "t", "filters": {"tags": [""]}}`:       "filters.tags: ensure each tag has at least 1 character",
		`{"query": "t", "filters": {"source": 5}}`:        "filters.source: str type expected",
		`{"query": "t", "filters": {"source": "` + strings.Repeat("s", 101) + `"}}`: "filters.source: ensure this value has at most 100 characters",
		`{"query": "t", "filters": []}`:                                             "filters: value is not a valid dict",
		`{"query": "t", "filters": {"date_to": 20250101}}`:                          "filters.date_to: invalid date format, expected YYYY-MM-DD",
		`{"query": "t", "extra": 1}`:                                                "extra: extra fields not permitted",
		`{"query": "\ud800"}`:                                                       "query: must be valid UTF-8 text",
		"{\"query\": \"a\xffb\"}":                                                   "query: must be valid UTF-8 text",
		`[]`:                                                                        "arguments: value is not a valid dict",
		`not json`:                                                                  "arguments: value is not a valid dict",
		`{"query": "t"} {"query": "u"}`:                                             "arguments: value is not a valid dict",
		``:                                                                          "arguments: value is not a valid dict",
	}
	for args, want := range bad {
		r := tool.Execute(t.Context(), []byte(args))
		if !r.IsError || r.Text() != "Error: Invalid input - "+want {
			t.Errorf("%s:\n got %q\nwant %q", args, r.Text(), "Error: Invalid input - "+want)
		}
	}
	good := []string{
		`{"query": "t", "limit": 10.0}`, `{"query": "t", "limit": null}`, `{"query": "t", "filters": null}`,
		`{"query": "t", "filters": {}}`, `{"query": "t", "filters": {"tags": []}}`, `{"query": "тест"}`,
		`{"query": "\ud83d\ude00 emoji"}`, `{"query": "NEAR(a b) AND \"quoted\" OR x* ^y - :col"}`, `{"query": "?!..."}`,
	}
	for _, args := range good {
		if r := tool.Execute(t.Context(), []byte(args)); r.IsError {
			t.Errorf("%s: %q", args, r.Text())
		}
	}
	// {} filters is the same as none.
	if req, errs := ParseArguments([]byte(`{"query": "t", "filters": {}}`)); len(errs) > 0 || !req.Filters.Empty() {
		t.Fatal(req, errs)
	}
}
