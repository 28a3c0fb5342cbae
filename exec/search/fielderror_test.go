package search

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestFieldErrorNamesTheField: every refusal of a request carries the
// field it is about (and the list element), so that a UI can put it beside
// the right input; the message starts with the same name, and carries no
// spec ids.
func TestFieldErrorNamesTheField(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "x\n")
	specID := regexp.MustCompile(`\b(N?FR|CFG)-[A-Z]`)
	cases := []struct {
		req   string
		field Field
		index int
		kind  ErrorKind
	}{
		{`{"pattern":"  "}`, FieldPattern, -1, BadArgs},
		{`{}`, FieldPattern, -1, BadArgs},
		{`{"pattern":"x","case":"upper"}`, FieldCase, -1, BadArgs},
		{`{"pattern":"x","context":-1}`, FieldContext, -1, BadArgs},
		{`{"pattern":"x","max_results":0}`, FieldMaxResults, -1, BadArgs},
		{`{"pattern":"x","timeout_ms":0}`, FieldTimeoutMS, -1, BadArgs},
		{`{"pattern":"x","fuzzy":9}`, FieldFuzzy, -1, BadArgs},
		{`{"pattern":"x","max_files":0}`, FieldMaxFiles, -1, BadArgs},
		{`{"pattern":"x","max_matches_per_file":0}`, FieldMaxMatchesPerFile, -1, BadArgs},
		{`{"pattern":"x","max_file_size_bytes":0}`, FieldMaxFileSizeBytes, -1, BadArgs},
		{`{"pattern":"x","include_glob":["*.go","["]}`, FieldIncludeGlob, 1, BadArgs},
		{`{"pattern":"x","glob":[""]}`, FieldGlob, 0, BadArgs},
		{`{"pattern":"x","exclude_glob":["a","b","{"]}`, FieldExcludeGlob, 2, BadArgs},
		{`{"pattern":"x","path":"../up"}`, FieldPath, -1, BadArgs},
		{`{"pattern":"x","path":"missing"}`, FieldPath, -1, ExecutionFailed},
		{`{"pattern":"x","hidden":"yes"}`, FieldHidden, -1, BadArgs},
		{`{"pattern":"x","recursive":null}`, FieldRecursive, -1, BadArgs},
		{`{"pattern":"x","colour":1}`, Field("colour"), -1, BadArgs},
		{`{"pattern":"x"} {}`, FieldRequest, -1, BadArgs},
		{`{"pattern":`, FieldRequest, -1, BadArgs},
	}
	for _, c := range cases {
		_, err := searchErr("auto", root, c.req)
		var te *ToolError
		if !errors.As(err, &te) || te.Kind != c.kind {
			t.Errorf("%s: got %v, want a %s ToolError", c.req, err, c.kind)
			continue
		}
		fe, ok := FieldOf(err)
		if !ok || fe.Field != c.field || fe.Index != c.index {
			t.Errorf("%s: FieldOf = %+v, %v; want field %s index %d", c.req, fe, ok, c.field, c.index)
			continue
		}
		if !strings.HasPrefix(te.Message, string(c.field)) || te.Message != fe.Error() {
			t.Errorf("%s: message %q does not start with the field's own error %q", c.req, te.Message, fe.Error())
		}
		if specID.MatchString(te.Message) {
			t.Errorf("%s: message %q carries a spec id", c.req, te.Message)
		}
	}
}

// TestRegexErrorPointsIntoThePersonsPattern: a pattern a backend refuses
// is reported in the person's own words: their pattern, quoted, and a
// byte offset into it — not the pattern as Vigil rewrote it (case folding
// turns `a` into `[aA]`, ugrep gets a "(?m)" prefix and `\<(...)\>` for
// words), whose offsets mean nothing to the person.
func TestRegexErrorPointsIntoThePersonsPattern(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "x\n")
	cases := []struct {
		name, req, pattern string
		offset             map[string]int // by backend: where each one points
	}{
		{"unclosed group", `{"pattern":"a(b","case":"sensitive"}`, "a(b",
			map[string]int{"rg": 1, "ugrep": 3}},
		{"folded for case", `{"pattern":"([a","case":"insensitive"}`, "([a",
			map[string]int{"rg": 1, "ugrep": 2}},
		{"word", `{"pattern":"ab(","word_regexp":true}`, "ab(",
			map[string]int{"rg": 2, "ugrep": 3}},
		{"after a wide character", `{"pattern":"é(x","case":"insensitive"}`, "é(x",
			map[string]int{"rg": 2, "ugrep": 4}},
		{"second line", "{\"pattern\":\"ab\\n(c\"}", "ab\n(c",
			map[string]int{"rg": 3, "ugrep": 5}},
	}
	eachBackend(t, func(t *testing.T, be string) {
		for _, c := range cases {
			_, err := searchErr(be, root, c.req)
			fe, ok := FieldOf(err)
			var re *RegexError
			if !ok || fe.Field != FieldPattern || !errors.As(err, &re) {
				t.Errorf("%s: got %v, want a pattern RegexError", c.name, err)
				continue
			}
			if re.Offset != c.offset[be] || re.Reason == "" {
				t.Errorf("%s: offset %d reason %q, want offset %d (%v)", c.name, re.Offset, re.Reason, c.offset[be], err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "invalid regular expression "+strconv.Quote(c.pattern)) {
				t.Errorf("%s: %q does not quote the person's pattern", c.name, msg)
			}
			for _, rewritten := range []string{"(?m)", "[aA]", `\<`, "position"} {
				if strings.Contains(msg, rewritten) {
					t.Errorf("%s: %q shows Vigil's rewritten pattern (%s)", c.name, msg, rewritten)
				}
			}
		}
	})
}

// TestReadRefusal reads the backends' reports as they print them, with no
// backend installed: a caret under a numbered line, and reports that point
// at nothing.
func TestReadRefusal(t *testing.T) {
	cases := []struct {
		backend, stderr, pattern string
		reason                   string
		offset                   int
	}{
		{"rg", "regex parse error:\n    a(b\n     ^\nerror: unclosed group", "a(b", "unclosed group", 1},
		{"rg", "regex parse error:\n~~~\n1: ab\n2: (c\n   ^\n~~~\nerror: unclosed group", "ab\n(c", "unclosed group", 3},
		{"rg", "regex parse error:\n    x(?P<a>x)\n     ^\nerror: oops", "other", "oops", -1},
		{"rg", "error: compiled regex exceeds size limit", "a{99}", "compiled regex exceeds size limit", -1},
		{"ugrep", "ugrep: error: error at position 7\n(?m)a(b\n       \\___mismatched ( )", "a(b", "mismatched ( )", 3},
		{"ugrep", "ugrep: error: error at position 5\n(?m)é(\n     \\___x", "é(", "x", 0},
		{"ugrep", "ugrep: error: out of memory", "a", "out of memory", -1},
		{"ugrep", "ugrep: error: error at position 7\n(?m)a(b\n       \\___mismatched ( )", "", "mismatched ( )", -1},
	}
	for _, c := range cases {
		reason, off := readRefusal(c.backend, c.stderr, c.pattern)
		if reason != c.reason || off != c.offset {
			t.Errorf("%s %q: got %q at %d, want %q at %d", c.backend, c.stderr, reason, off, c.reason, c.offset)
		}
	}
}
