package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeAndValidate(t *testing.T) {
	for in, want := range map[string]string{
		`{"pattern":"x","bogus":1}`:                 "bogus: unknown field",
		`{"pattern":"   "}`:                         "pattern: must be non-empty",
		`{}`:                                        "pattern: required",
		`{"pattern":"x","context":-1}`:              "context: must be >= 0",
		`{"pattern":"x","fuzzy":5}`:                 "fuzzy: must be in [1, 4]",
		`{"pattern":"x","max_files":1e9}`:           "max_files: must be of type integer",
		`{"pattern":"x","include_glob":[""]}`:       "include_glob[0]: must be a non-empty",
		`{"pattern":"x","exclude_glob":["[a"]}`:     "exclude_glob[0]: invalid glob",
		`{"pattern":"x","max_matches_per_file":51}`: "max_matches_per_file: must be <= the configured hard cap 50",
		`{"pattern":"x","path":"../etc"}`:           "path: \"../etc\" escapes the sandbox root",
		`{"pattern":"x","path":".git"}`:             "denied by the sandbox deny list",
		`{"pattern":"x","path":"nope"}`:             "does not exist",
	} {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, ".git"), 0o755)
		req, err := DecodeRequest([]byte(in))
		if err == nil {
			err = Validate(req, DefaultOptions(root))
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

// Field names are matched case-insensitively by encoding/json; the schema
// has additionalProperties:false, so "PATTERN" must be an unknown field.
func TestDecodeRejectsCaseVariantFields(t *testing.T) {
	for _, in := range []string{
		`{"PATTERN":"x"}`,
		`{"Pattern":"x"}`,
		`{"pattern":"x","Max_Results":5}`,
		`{"pattern":"x","PATH":"/etc"}`,
		`{"pattern":"x","Include_Glob":["*.go"]}`,
	} {
		if _, err := DecodeRequest([]byte(in)); err == nil {
			t.Errorf("%s: accepted; want BadArgs unknown field", in)
		}
	}
}

// null is not a string/boolean/integer/array: the schema rejects it (the
// decoder alone would treat it as absent).
func TestDecodeRejectsNull(t *testing.T) {
	for _, f := range []string{"path", "case", "fixed_strings", "include_glob", "exclude_glob", "glob", "recursive", "hidden", "follow", "no_ignore", "context", "max_results", "max_files", "timeout_ms", "fuzzy"} {
		in := `{"pattern":"x","` + f + `":null}`
		_, err := DecodeRequest([]byte(in))
		var te *ToolError
		if err == nil || !errors.As(err, &te) || te.Kind != BadArgs || !strings.Contains(te.Message, f) {
			t.Errorf("%s: got %v; want BadArgs naming %s", in, err, f)
		}
	}
}

// [tools.search] enabled = false stops a search.
func TestDisabledToolDoesNotRun(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "needle\n")
	opts := DefaultOptions(root)
	opts.Search.Enabled = false
	if _, err := Run(context.Background(), Request{Pattern: "needle"}, opts, nil); err == nil {
		t.Errorf("search ran with [tools.search] enabled = false")
	}
}
