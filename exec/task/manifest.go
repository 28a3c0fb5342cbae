package task

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
	"github.com/vigil-dev/vigil/preview"
)

// Size limits of a manifest. They are generous for real tasks and small
// enough that a hostile agent cannot make Vigil hold megabytes per task.
const (
	MaxManifestBytes   = 256 << 10 // the whole document
	MaxLeaseBytes      = 16 << 10  // the lease JWT
	MaxInputsBytes     = 64 << 10  // the inputs object, as written
	MaxInputsDepth     = 8         // nesting of objects/arrays inside inputs
	MaxTaskIDLen       = 128
	MaxCapabilityIDLen = 64
)

// Manifest is what an agent submits: which capability to run on which
// inputs, for which task, under which lease.
type Manifest struct {
	TaskID       string          `json:"task_id"`
	CapabilityID string          `json:"capability_id"`
	Inputs       json.RawMessage `json:"inputs"` // a JSON object, compacted
	Lease        string          `json:"lease"`
}

// ManifestError names the field of a manifest that broke a rule. It unwraps
// to a *task.Error so callers can report a closed failure code: problems with
// the lease field are INVALID_LEASE, anything else EXECUTION_FAILED (the seeds
// have no code for a malformed manifest).
type ManifestError struct {
	Field string // "task_id", "inputs.target_device", or "" for the document
	Rule  string
}

func (e *ManifestError) Error() string {
	if e.Field == "" {
		return "manifest: " + e.Rule
	}
	return "manifest: " + e.Field + ": " + e.Rule
}

// Code is the failure code the error maps to.
func (e *ManifestError) Code() Code {
	if e.Field == "lease" {
		return InvalidLease
	}
	return ExecutionFailed
}

// Unwrap exposes the *task.Error form for errors.As / errors.Is.
func (e *ManifestError) Unwrap() error { return &Error{Code: e.Code(), Message: e.Error()} }

func merr(field, format string, args ...any) *ManifestError {
	return &ManifestError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// DecodeManifest reads at most MaxManifestBytes from r and parses them with
// ParseManifest.
func DecodeManifest(r io.Reader) (*Manifest, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxManifestBytes+1))
	if err != nil {
		return nil, merr("", "read failed: %v", err)
	}
	return ParseManifest(data)
}

// ParseManifest decodes a manifest strictly: one JSON object, no unknown or
// duplicate keys, every field of the right type and within its limits.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestBytes {
		return nil, merr("", "larger than %d bytes", MaxManifestBytes)
	}
	if !utf8.Valid(data) {
		// encoding/json would silently turn bad bytes into U+FFFD; refuse instead.
		return nil, merr("", "not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, merr("", "not valid JSON: %v", jsonErr(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, merr("", "must be a JSON object, got %s", tokenKind(tok))
	}
	var m Manifest
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, merr("", "not valid JSON: %v", jsonErr(err))
		}
		key, _ := kt.(string)
		if seen[key] {
			return nil, merr(key, "duplicate key")
		}
		seen[key] = true
		switch key {
		case "task_id", "capability_id", "lease":
			s, err := stringValue(dec, key)
			if err != nil {
				return nil, err
			}
			switch key {
			case "task_id":
				m.TaskID = s
			case "capability_id":
				m.CapabilityID = s
			default:
				m.Lease = s
			}
		case "inputs":
			if m.Inputs, err = inputsValue(dec); err != nil {
				return nil, err
			}
		default:
			return nil, merr(fieldName(key), "unknown field (allowed: task_id, capability_id, inputs, lease)")
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, merr("", "not valid JSON: %v", jsonErr(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, merr("", "unexpected data after the object")
	}
	for _, f := range []string{"task_id", "capability_id", "inputs", "lease"} {
		if !seen[f] {
			return nil, merr(f, "required")
		}
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// inputsValue reads the inputs field's value: a JSON object within the
// size and depth limits, returned compacted.
func inputsValue(dec *json.Decoder) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, merr("inputs", "not valid JSON: %v", jsonErr(err))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, merr("inputs", "must be a JSON object, got %s", JSONKind(raw))
	}
	if len(raw) > MaxInputsBytes {
		return nil, merr("inputs", "larger than %d bytes", MaxInputsBytes)
	}
	if err := CheckJSON(raw, "inputs", MaxInputsDepth); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, merr("inputs", "not valid JSON: %v", jsonErr(err))
	}
	return buf.Bytes(), nil
}

// validate checks the decoded fields' values: the task id, the capability
// id and the lease's presence and length.
func (m *Manifest) validate() error {
	if err := ValidateTaskID(m.TaskID); err != nil {
		return err
	}
	if err := validateCapabilityID(m.CapabilityID); err != nil {
		return err
	}
	if m.Lease == "" {
		return merr("lease", "must not be empty")
	}
	if len(m.Lease) > MaxLeaseBytes {
		return merr("lease", "longer than %d bytes", MaxLeaseBytes)
	}
	return nil
}

// ValidateTaskID checks a task_id. It doubles as a file name in the results
// folder, so it is limited to characters that cannot climb out of it.
func ValidateTaskID(id string) error {
	const rule = "must be 1-128 characters from A-Z a-z 0-9 . _ : - and start with a letter or digit"
	if id == "" {
		return merr("task_id", "must not be empty")
	}
	if len(id) > MaxTaskIDLen {
		return merr("task_id", "longer than %d characters", MaxTaskIDLen)
	}
	for i, c := range id {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._:-", c)) {
			// the value is not echoed: it may hold what a terminal acts on
			return merr("task_id", "%s; found U+%04X at byte %d", rule, c, i)
		}
	}
	return nil
}

func validateCapabilityID(id string) error {
	if id == "" {
		return merr("capability_id", "must not be empty")
	}
	if len(id) > MaxCapabilityIDLen {
		return merr("capability_id", "longer than %d characters", MaxCapabilityIDLen)
	}
	for i, c := range id {
		if !(c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return merr("capability_id", "must be upper-case letters, digits and _ starting with a letter (e.g. MEDIA_PLAY), got %q", id)
		}
	}
	return nil
}

// RequestHash identifies what a task asks for, independent of its lease and
// of how the JSON was spelled: hex SHA-256 of the RFC 8785 form of
// {"capability_id", "inputs"}. Idempotency compares it.
func (m *Manifest) RequestHash() (string, error) {
	capJSON, _ := json.Marshal(m.CapabilityID)
	inputs := m.Inputs
	if len(inputs) == 0 {
		inputs = json.RawMessage("{}")
	}
	doc := append(append(append([]byte(`{"capability_id":`), capJSON...), `,"inputs":`...), inputs...)
	doc = append(doc, '}')
	canon, err := jcs.Transform(doc)
	if err != nil {
		return "", merr("inputs", "cannot be canonicalized: %v", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

func stringValue(dec *json.Decoder, field string) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", merr(field, "not valid JSON: %v", jsonErr(err))
	}
	if s, ok := tok.(string); ok {
		return s, nil
	}
	if d, ok := tok.(json.Delim); ok {
		if err := skipRest(dec, d); err != nil {
			return "", merr(field, "not valid JSON: %v", jsonErr(err))
		}
	}
	return "", merr(field, "must be a string, got %s", tokenKind(tok))
}

// skipRest consumes the rest of an object or array whose opening delimiter
// has already been read.
func skipRest(dec *json.Decoder, open json.Delim) error {
	depth := 1
	for depth > 0 {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// CheckJSON walks a JSON value and rejects duplicate object keys (parsers
// disagree on which one wins, so a signed or approved value could be read two
// ways) and nesting deeper than maxDepth. path names the value in errors.
func CheckJSON(raw []byte, path string, maxDepth int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := walk(dec, path, 0, maxDepth); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return merr(path, "unexpected data after the value")
	}
	return nil
}

func walk(dec *json.Decoder, path string, depth, maxDepth int) error {
	tok, err := dec.Token()
	if err != nil {
		return merr(path, "not valid JSON: %v", jsonErr(err))
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxDepth {
		return merr(path, "nested deeper than %d levels", maxDepth)
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return merr(path, "not valid JSON: %v", jsonErr(err))
			}
			key, _ := kt.(string)
			child := path + "." + fieldName(key)
			if seen[key] {
				return merr(child, "duplicate key")
			}
			seen[key] = true
			if err := walk(dec, child, depth+1, maxDepth); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := walk(dec, fmt.Sprintf("%s[%d]", path, i), depth+1, maxDepth); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return merr(path, "not valid JSON: %v", jsonErr(err))
	}
	return nil
}

// fieldName keeps hostile keys from flooding an error message.
// fieldName is an agent's key as an error may quote it: masked whole, then
// cut (a key cut first could leave part of a secret no mask recognises).
func fieldName(key string) string {
	key = preview.MaskString(key)
	if len(key) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(key[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", key[:cut])
	}
	return key
}

func tokenKind(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "an object"
	}
	return "an unknown token"
}

// JSONKind names the kind of a raw JSON value for error messages
// ("a string", "an array", …).
func JSONKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}

func jsonErr(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}
