package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/vigil-dev/vigil/config"
)

// Request mirrors FR-LS-02/02a. Optional fields are pointers so that
// "absent" and "zero" stay distinguishable (the SRD gives absent fields
// defaults, and `glob` only applies when include_glob is absent).
type Request struct {
	Pattern           string   `json:"pattern"`
	Path              *string  `json:"path,omitempty"`
	Case              *string  `json:"case,omitempty"`
	FixedStrings      *bool    `json:"fixed_strings,omitempty"`
	WordRegexp        *bool    `json:"word_regexp,omitempty"`
	IncludeGlob       []string `json:"include_glob,omitempty"`
	ExcludeGlob       []string `json:"exclude_glob,omitempty"`
	Glob              []string `json:"glob,omitempty"` // deprecated alias of include_glob (FR-LS-VAL-11)
	Recursive         *bool    `json:"recursive,omitempty"`
	Hidden            *bool    `json:"hidden,omitempty"`
	Follow            *bool    `json:"follow,omitempty"`
	NoIgnore          *bool    `json:"no_ignore,omitempty"`
	Context           *int64   `json:"context,omitempty"`
	MaxResults        *int64   `json:"max_results,omitempty"`
	MaxMatchesPerFile *int64   `json:"max_matches_per_file,omitempty"`
	MaxFiles          *int64   `json:"max_files,omitempty"`
	MaxFileSizeBytes  *int64   `json:"max_file_size_bytes,omitempty"`
	TimeoutMS         *int64   `json:"timeout_ms,omitempty"`
	Fuzzy             *int64   `json:"fuzzy,omitempty"`
}

// Ptr returns a pointer to v; handy when building a Request in Go.
func Ptr[T any](v T) *T { return &v }

// DecodeRequest parses a request strictly: unknown fields, wrong types,
// a missing pattern and trailing data are BadArgs naming the field.
func DecodeRequest(b []byte) (Request, error) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return Request{}, decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Request{}, badField(FieldRequest, "trailing data after the JSON object")
	}
	// encoding/json matches field names case-insensitively and takes null
	// as absent; the schema allows neither, so the keys are checked as
	// written.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return Request{}, decodeError(err)
	}
	known := requestFields()
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !known[k] {
			return Request{}, badField(Field(k), "unknown field; additionalProperties is false")
		}
		if k != "pattern" && string(bytes.TrimSpace(fields[k])) == "null" {
			return Request{}, badField(Field(k), "must not be null")
		}
	}
	if p, ok := fields["pattern"]; !ok || string(bytes.TrimSpace(p)) == "null" {
		return Request{}, badField(FieldPattern, "required")
	}
	return req, nil
}

// requestFields is the set of Request's JSON field names, exactly as
// written.
func requestFields() map[string]bool {
	known := map[string]bool{}
	t := reflect.TypeFor[Request]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	return known
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fieldError(BadArgs, Field(te.Field), err, "must be of type %s, got %s", jsonType(te.Type.String()), te.Value)
	case errors.As(err, &se):
		return fieldError(BadArgs, FieldRequest, err, "invalid JSON at offset %d: %v", se.Offset, se)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badField(Field(f), "unknown field; additionalProperties is false")
	case err == io.EOF:
		return badField(FieldRequest, "empty input, expected a JSON object")
	}
	return fieldError(BadArgs, FieldRequest, err, "%v", err)
}

func jsonType(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int64":
		return "integer"
	case "[]string":
		return "array of strings"
	case "search.Request":
		return "object"
	}
	return goType
}

// Options carries everything a search needs besides the request: the
// sandbox, the [tools.search] settings, and the backend choice.
type Options struct {
	// Root is the sandbox root and working directory; "" means the process's
	// working directory. Relative request paths resolve against it.
	Root string
	// Deny globs ([sandbox] deny, relative to Root) are never searched or shown.
	Deny []string
	// Search holds binary, fallback, defaults and hard caps (SRD §5).
	Search config.SearchConfig
	// Backend is "auto" (or ""), "ugrep" or "rg".
	Backend string
	// Env is the backend's environment; nil means os.Environ(). PATH in it
	// is used to find binaries.
	Env []string
	// ProbeCache is a file remembering the backends' --version probes
	// across processes; "" keeps them for this process only.
	ProbeCache string
}

// DefaultOptions returns options with the config defaults and root.
func DefaultOptions(root string) Options {
	c := config.Default()
	return Options{Root: root, Deny: c.Sandbox.Deny, Search: c.Tools.Search, Backend: "auto"}
}

// effective is a validated request with defaults applied.
type effective struct {
	pattern     string // as given
	fixed       bool
	word        bool
	caseMode    string
	insensitive bool
	include     []string
	exclude     []string
	recursive   bool
	hidden      bool
	follow      bool
	noIgnore    bool
	context     int
	maxResults  int
	maxPerFile  int // 0 = unlimited
	maxFiles    int64
	maxSize     int64
	maxLine     int // [tools.search] max_line_bytes (linecut.go)
	timeoutMS   int64
	fuzzy       int
}

func boolOr(p *bool, d bool) bool {
	if p == nil {
		return d
	}
	return *p
}

// validateFields checks everything that needs no filesystem or backend.
func validateFields(req Request, opts Options) (effective, error) {
	cfg := opts.Search
	e := effective{pattern: req.Pattern, maxLine: maxLineOf(cfg)}
	if !cfg.Enabled {
		return e, execFailed("the search tool is disabled ([tools.search] enabled = false)")
	}
	if err := e.setPattern(req); err != nil {
		return e, err
	}
	if err := e.setGlobs(req); err != nil {
		return e, err
	}
	if err := e.setLimits(req, cfg); err != nil {
		return e, err
	}
	if err := e.setCaps(req, cfg); err != nil {
		return e, err
	}
	return e, nil
}

// setPattern checks the pattern and sets how it matches: fixed, word and
// case (smart case looks for an ASCII capital in the pattern).
func (e *effective) setPattern(req Request) error {
	if strings.TrimSpace(req.Pattern) == "" {
		return badField(FieldPattern, "must be non-empty after trimming whitespace")
	}
	if strings.IndexByte(req.Pattern, 0) >= 0 {
		return badField(FieldPattern, "must not contain a NUL byte")
	}
	e.caseMode = "smart"
	if req.Case != nil {
		switch *req.Case {
		case "smart", "sensitive", "insensitive":
			e.caseMode = *req.Case
		default:
			return badField(FieldCase, "must be one of smart, sensitive, insensitive; got %q", *req.Case)
		}
	}
	e.fixed = boolOr(req.FixedStrings, false)
	e.word = boolOr(req.WordRegexp, false)
	switch e.caseMode {
	case "insensitive":
		e.insensitive = true
	case "smart":
		e.insensitive = !hasASCIIUpper(req.Pattern)
	}
	return nil
}

// setGlobs checks the include and exclude globs (glob is include's older
// name) and sets the walk's switches.
func (e *effective) setGlobs(req Request) error {
	e.include = req.IncludeGlob
	if req.IncludeGlob == nil {
		e.include = req.Glob // FR-LS-VAL-11
	}
	field := FieldIncludeGlob
	if req.IncludeGlob == nil && req.Glob != nil {
		field = FieldGlob
	}
	for i, g := range e.include {
		if err := checkGlob(field, i, g); err != nil {
			return err
		}
	}
	e.exclude = req.ExcludeGlob
	for i, g := range e.exclude {
		if err := checkGlob(FieldExcludeGlob, i, g); err != nil {
			return err
		}
	}
	e.recursive = boolOr(req.Recursive, true)
	e.hidden = boolOr(req.Hidden, false)
	e.follow = boolOr(req.Follow, false)
	e.noIgnore = boolOr(req.NoIgnore, false)
	return nil
}

// setLimits checks the fields with fixed bounds: context, max_results,
// timeout_ms and fuzzy, defaulting from the config.
func (e *effective) setLimits(req Request, cfg config.SearchConfig) error {
	if req.Context != nil {
		if *req.Context < 0 {
			return badField(FieldContext, "must be >= 0, got %d", *req.Context)
		}
		if *req.Context > 1000 {
			return badField(FieldContext, "must be <= 1000, got %d", *req.Context)
		}
		e.context = int(*req.Context)
	}
	// The configured default obeys the request's own bound (config
	// validation refuses more; Options built in code are clamped), so
	// max_results + 1 never overflows.
	e.maxResults = int(min(max(cfg.DefaultMaxResults, 1), config.MaxResultsLimit))
	if req.MaxResults != nil {
		if *req.MaxResults < 1 {
			return badField(FieldMaxResults, "must be >= 1, got %d", *req.MaxResults)
		}
		if *req.MaxResults > config.MaxResultsLimit {
			return badField(FieldMaxResults, "must be <= %d, got %d", config.MaxResultsLimit, *req.MaxResults)
		}
		e.maxResults = int(*req.MaxResults)
	}
	e.timeoutMS = max(cfg.DefaultTimeoutMS, 1)
	if req.TimeoutMS != nil {
		if *req.TimeoutMS < 1 {
			return badField(FieldTimeoutMS, "must be >= 1, got %d", *req.TimeoutMS)
		}
		e.timeoutMS = *req.TimeoutMS
	}
	if req.Fuzzy != nil {
		if *req.Fuzzy < 1 || *req.Fuzzy > 4 {
			return badField(FieldFuzzy, "must be in [1, 4], got %d", *req.Fuzzy)
		}
		e.fuzzy = int(*req.Fuzzy)
	}
	return nil
}

// setCaps checks the fields the config caps (max_matches_per_file,
// max_files, max_file_size_bytes); unset, they are unlimited but for the
// file size, which defaults to its cap.
func (e *effective) setCaps(req Request, cfg config.SearchConfig) error {
	mpf, err := capCheck(FieldMaxMatchesPerFile, req.MaxMatchesPerFile, cfg.MaxMatchesPerFile)
	if err != nil {
		return err
	}
	e.maxPerFile = int(mpf)
	if e.maxFiles, err = capCheck(FieldMaxFiles, req.MaxFiles, cfg.MaxFiles); err != nil {
		return err
	}
	if e.maxSize, err = capCheck(FieldMaxFileSizeBytes, req.MaxFileSizeBytes, cfg.MaxFileSizeBytes); err != nil {
		return err
	}
	if e.maxSize == 0 {
		e.maxSize = cfg.MaxFileSizeBytes // CFG-LS-05
	}
	return nil
}

// capCheck checks an optional field against 1 and its hard cap (none when
// hard is 0); unset is 0.
func capCheck(name Field, v *int64, hard int64) (int64, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 1 {
		return 0, badField(name, "must be >= 1, got %d", *v)
	}
	if hard > 0 && *v > hard {
		return 0, badField(name, "must be <= the configured hard cap %d, got %d", hard, *v)
	}
	return *v, nil
}

func checkGlob(field Field, i int, g string) error {
	if strings.TrimSpace(g) == "" {
		return elemError(field, i, nil, "must be a non-empty string")
	}
	if _, err := compileGlob(g); err != nil {
		return elemError(field, i, err, "invalid glob %q: %v", g, err)
	}
	return nil
}

// hasASCIIUpper is FR-LS-SRC-04's smartcase test: only A-Z count.
func hasASCIIUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}
