// Package scope is seed 000's search executor: a case-sensitive substring search over the
// configured file trees, mailboxes (Maildir, mbox) and datasets (CSV, JSON Lines), in deterministic order.
package scope

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

// The capabilities this executor serves, and the scope kind each one searches.
const (
	SearchFiles    = "SEARCH_FILES"
	SearchEmails   = "SEARCH_EMAILS"
	SearchDatasets = "SEARCH_DATASETS"

	KindFiles   = "files"
	KindEmails  = "emails"
	KindDataset = "dataset"
)

// Capabilities lists the SEARCH_* capabilities in a fixed order.
var Capabilities = []string{SearchFiles, SearchEmails, SearchDatasets}

// KindFor returns the scope kind a capability searches, and false when the
// capability is not one of the SEARCH_* ones.
func KindFor(capabilityID string) (string, bool) {
	switch capabilityID {
	case SearchFiles:
		return KindFiles, true
	case SearchEmails:
		return KindEmails, true
	case SearchDatasets:
		return KindDataset, true
	}
	return "", false
}

// Input bounds from seed 000 §3.
const (
	MaxQueryRunes = 4096
	MinMaxResults = 1
	MaxMaxResults = 1000
)

// Defaults from seed 000 §8.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMemoryBytes = 256 << 20
)

// Limits bounds one search. Zero fields take the seed's defaults.
type Limits struct {
	// Timeout is the wall-clock budget of the whole search.
	Timeout time.Duration
	// MemoryBytes bounds the bytes the search holds at once: the item being
	// read (a message, a record), its decoded text and
	// the retained results. See budget.go for how it is counted.
	MemoryBytes int64
	// Clock is read before each item to enforce Timeout; time.Now by default.
	// Injected so tests can exhaust the wall clock without sleeping.
	Clock func() time.Time
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.Clock == nil {
		l.Clock = time.Now
	}
	return l
}

// Inputs is the inputs object of a SEARCH_* task manifest.
type Inputs struct {
	Query       string `json:"query"`
	TargetScope string `json:"target_scope"`
	MaxResults  int    `json:"max_results"`
}

// Output is seed 000 §7's result object, field for field.
type Output struct {
	TaskID       string   `json:"task_id"`
	CapabilityID string   `json:"capability_id"`
	TargetScope  string   `json:"target_scope"`
	Results      []Result `json:"results"`
	Count        int      `json:"count"`
	Truncated    bool     `json:"truncated"`
}

// Result is one entry of Output.Results.
type Result struct {
	ID           string `json:"id"`
	MatchField   string `json:"match_field"`
	MatchSnippet string `json:"match_snippet"`
}

// Hit is a Result plus what a screen needs to highlight and sort it.
type Hit struct {
	ID      string
	Field   string
	Snippet string
	// MatchStart and MatchEnd are byte offsets of the first match in Snippet.
	MatchStart, MatchEnd int
	// Timestamp is the message's received_timestamp (ISO 8601 UTC, RFC 3339
	// with a Z), or "" when the message has no usable date. Emails only.
	Timestamp string
	// Sender and Subject are an email's From and Subject, decoded, so a
	// list shows date · sender · subject rather than a Maildir file name.
	// Summary is a dataset record's first columns ("name: value · …",
	// clipped). All three are untrusted text for the screen (safetext) and
	// are not part of the agents' wire format.
	Sender, Subject, Summary string
}

// Hits is the outcome of Search: the first max_results hits in order, and
// the total count of matching items.
type Hits struct {
	Hits      []Hit
	Count     int
	Truncated bool
}

// Query is what a person (or Execute, after decoding inputs) asks one scope.
type Query struct {
	Text       string
	MaxResults int
}

// Execute runs one SEARCH_* task after its lease has been checked: it checks
// the capability, decodes and validates inputs, resolves target_scope among
// scopes and searches it. The same arguments always give the same Output.
func Execute(ctx context.Context, scopes []config.ScopeConfig, taskID, capabilityID string, inputs json.RawMessage, lim Limits) (Output, *task.Error) {
	kind, ok := KindFor(capabilityID)
	if !ok {
		return Output{}, task.Errorf(task.UnsupportedCapability, "capability_id: %q is not one of SEARCH_FILES, SEARCH_EMAILS, SEARCH_DATASETS", capabilityID)
	}
	in, terr := DecodeInputs(inputs)
	if terr != nil {
		return Output{}, terr
	}
	q, terr := ValidateQuery(Query{Text: in.Query, MaxResults: in.MaxResults})
	if terr != nil {
		return Output{}, terr
	}
	sc, terr := Allowed(scopes, in.TargetScope)
	if terr != nil {
		return Output{}, terr
	}
	// A capability only reaches scopes of its own kind: a lease for
	// SEARCH_FILES must not read mail just because a mail scope exists.
	if sc.Kind != kind {
		return Output{}, task.Errorf(task.ScopeNotAllowed, "target_scope: scope %q is of kind %q; %s searches only kind %q", sc.Name, sc.Kind, capabilityID, kind)
	}
	hs, terr := search(ctx, sc, q, lim)
	if terr != nil {
		return Output{}, terr
	}
	out := Output{TaskID: taskID, CapabilityID: capabilityID, TargetScope: sc.Name,
		Results: make([]Result, 0, len(hs.Hits)), Count: hs.Count, Truncated: hs.Truncated}
	for _, h := range hs.Hits {
		out.Results = append(out.Results, Result{ID: h.ID, MatchField: h.Field, MatchSnippet: h.Snippet})
	}
	return out, nil
}

// Search runs a query against one scope, for the Search pane. It validates
// the query like Execute does and returns hits with match offsets.
func Search(ctx context.Context, sc config.ScopeConfig, q Query, lim Limits) (Hits, *task.Error) {
	q, terr := ValidateQuery(q)
	if terr != nil {
		return Hits{}, terr
	}
	return search(ctx, sc, q, lim)
}

// DecodeInputs decodes a SEARCH_* inputs object strictly: unknown fields,
// wrong types, trailing data and text that is not UTF-8 are INVALID_QUERY.
func DecodeInputs(raw json.RawMessage) (Inputs, *task.Error) {
	var in Inputs
	// encoding/json silently turns invalid UTF-8 and lone surrogate escapes
	// into U+FFFD, so both are checked on the raw bytes first.
	if !utf8.Valid(raw) {
		return in, task.Errorf(task.InvalidQuery, "inputs: must be valid UTF-8")
	}
	if hasLoneSurrogate(raw) {
		return in, task.Errorf(task.InvalidQuery, "inputs: a \\u escape is an unpaired UTF-16 surrogate, which is not valid UTF-8")
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return in, task.Errorf(task.InvalidQuery, "inputs: required object with query, target_scope and max_results")
	}
	var present map[string]json.RawMessage
	if err := json.Unmarshal(raw, &present); err != nil {
		return in, task.Errorf(task.InvalidQuery, "inputs: must be a JSON object: %v", err)
	}
	for _, f := range []string{"query", "target_scope", "max_results"} {
		if _, ok := present[f]; !ok {
			return in, task.Errorf(task.InvalidQuery, "inputs.%s: required", f)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return in, task.Errorf(task.InvalidQuery, "inputs.%s: must be %s, got JSON %s", te.Field, wantType(te.Field), te.Value)
		}
		return in, task.Errorf(task.InvalidQuery, "inputs: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return in, task.Errorf(task.InvalidQuery, "inputs: unexpected data after the object")
	}
	return in, nil
}

func wantType(field string) string {
	if field == "max_results" {
		return "an integer"
	}
	return "a string"
}

// ValidateQuery applies seed 000 §3 to a query: it trims the text and checks
// UTF-8, 1–4096 code points and max_results in [1,1000].
func ValidateQuery(q Query) (Query, *task.Error) {
	if !utf8.ValidString(q.Text) {
		return q, task.Errorf(task.InvalidQuery, "query: must be valid UTF-8")
	}
	q.Text = strings.TrimSpace(q.Text)
	n := utf8.RuneCountInString(q.Text)
	if n < 1 || n > MaxQueryRunes {
		return q, task.Errorf(task.InvalidQuery, "query: must be 1 to %d code points after trimming, got %d", MaxQueryRunes, n)
	}
	if q.MaxResults < MinMaxResults || q.MaxResults > MaxMaxResults {
		return q, task.Errorf(task.InvalidQuery, "max_results: must be between %d and %d, got %d", MinMaxResults, MaxMaxResults, q.MaxResults)
	}
	return q, nil
}

// Allowed finds the scope named name in the allowlist.
func Allowed(scopes []config.ScopeConfig, name string) (config.ScopeConfig, *task.Error) {
	for _, s := range scopes {
		if s.Name == name {
			return s, nil
		}
	}
	return config.ScopeConfig{}, task.Errorf(task.ScopeNotAllowed, "target_scope: %q is not a configured scope", name)
}

// hasLoneSurrogate reports whether a JSON text has a \uD800–\uDFFF escape
// that is not a high surrogate followed by a low one.
func hasLoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // skip the escaped character, which may be a backslash
			continue
		}
		v, ok := hex4(raw, i+2)
		if !ok {
			continue
		}
		switch {
		case v >= 0xD800 && v < 0xDC00:
			if w, ok := hex4(raw, i+8); ok && i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' && w >= 0xDC00 && w < 0xE000 {
				i += 11
				continue
			}
			return true
		case v >= 0xDC00 && v < 0xE000:
			return true
		}
		i += 5
	}
	return false
}

func hex4(b []byte, at int) (int, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// search runs a validated query on one scope.
func search(ctx context.Context, sc config.ScopeConfig, q Query, lim Limits) (Hits, *task.Error) {
	lim = lim.withDefaults()
	r := newRun(ctx, q, lim)
	var err error
	switch sc.Kind {
	case KindFiles:
		err = searchFiles(r, sc)
	case KindEmails:
		err = searchEmails(r, sc)
	case KindDataset:
		err = searchDataset(r, sc)
	default:
		return Hits{}, task.Errorf(task.ScopeUnavailable, "scope %q: kind %q is not files, emails or dataset", sc.Name, sc.Kind)
	}
	if err != nil {
		return Hits{}, asTaskError(err)
	}
	return r.finish(), nil
}

// asTaskError keeps a *task.Error as it is and files anything else (an I/O
// error mid-search) under EXECUTION_FAILED.
func asTaskError(err error) *task.Error {
	var te *task.Error
	if errors.As(err, &te) {
		return te
	}
	return task.Errorf(task.ExecutionFailed, "%v", err)
}

// statScope checks that a scope's path exists, is readable and is not a
// symlink; anything else is SCOPE_UNAVAILABLE.
func statScope(sc config.ScopeConfig) (os.FileInfo, error) {
	if sc.Path == "" {
		return nil, task.Errorf(task.ScopeUnavailable, "scope %q: path is empty", sc.Name)
	}
	fi, err := os.Lstat(sc.Path)
	if err != nil {
		return nil, task.Errorf(task.ScopeUnavailable, "scope %q: %v", sc.Name, unwrapPath(err))
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, task.Errorf(task.ScopeUnavailable, "scope %q: path %s is a symlink, which scopes reject", sc.Name, sc.Path)
	}
	return fi, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
