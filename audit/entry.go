// Package audit is Vigil's append-only, hash-chained audit log (JSON Lines):
// append under a file lock with fsync (never onto a cut or altered end: see
// DamagedError and Seal), read from the tail, verify the chain, and sign
// checkpoints that anchor it outside its folder.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gowebpki/jcs"
)

// Genesis is the prev of entry 0.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// Events the rest of Vigil writes. The set is open; these are the known ones.
const (
	EventSubmitted = "submitted"
	EventRejected  = "rejected"
	EventApproved  = "approved"
	EventDenied    = "denied"
	EventExpired   = "expired"
	EventExecuted  = "executed"
	EventFailed    = "failed"
	EventSearched  = "searched"
	EventTorn      = "torn"
	EventDemo      = "demo"
	EventSealed    = "sealed" // `vigil audit seal`: a recorded break (see Seal)

	// Runtime rules (exec/rules.Store): target "rule:<id>".
	EventRuleAdded   = "rule_added"
	EventRuleRevoked = "rule_revoked"
	EventRuleExpired = "rule_expired"
)

// Entry is one line of audit.log. Values arrive already masked: the log never
// masks after the fact. Field order here is the order on disk.
type Entry struct {
	Seq               int64           `json:"seq"`
	Time              string          `json:"time"`
	Actor             string          `json:"actor"`
	Event             string          `json:"event"`
	TaskID            string          `json:"task_id"`
	Capability        string          `json:"capability"`
	Target            string          `json:"target"`
	TokenJTI          string          `json:"token_jti"`
	Success           bool            `json:"success"`
	ErrorCode         string          `json:"error_code"`
	ContentHashBefore string          `json:"content_hash_before"`
	ContentHashAfter  string          `json:"content_hash_after"`
	Details           json.RawMessage `json:"details"`
	Prev              string          `json:"prev"`
	Hash              string          `json:"hash,omitempty"`
}

// body is the entry's canonical bytes without its hash: the line as written
// minus the hash field. Details are canonicalised (RFC 8785) at append time so
// re-encoding a parsed entry gives back exactly these bytes.
func (e Entry) body() ([]byte, error) {
	e.Hash = ""
	return marshal(e)
}

func marshal(e Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ComputeHash is hex SHA-256 over the entry's canonical bytes, which include prev.
func (e Entry) ComputeHash() (string, error) {
	b, err := e.body()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// validUTF8 replaces invalid UTF-8 in e's strings with U+FFFD, as the JSON
// encoder does when it writes them: without it the stored line would decode
// to other strings than were hashed, and no reader could accept it (the log
// would be damaged by an agent's odd file name).
func (e Entry) validUTF8() Entry {
	for _, s := range []*string{&e.Time, &e.Actor, &e.Event, &e.TaskID, &e.Capability, &e.Target,
		&e.TokenJTI, &e.ErrorCode, &e.ContentHashBefore, &e.ContentHashAfter, &e.Prev} {
		*s = strings.ToValidUTF8(*s, "\uFFFD")
	}
	return e
}

// Line is the exact bytes written to disk for a sealed entry (without newline).
func (e Entry) Line() ([]byte, error) { return marshal(e) }

// canonicalDetails validates details as a JSON object and returns its RFC 8785 form.
func canonicalDetails(d json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(d)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if t := bytes.TrimSpace(d); t[0] != '{' {
		return nil, errors.New("details: must be a JSON object")
	}
	out, err := jcs.Transform(d)
	if err != nil {
		return nil, fmt.Errorf("details: %w", err)
	}
	return out, nil
}

// Details builds a details object from a map (convenience for callers).
func Details(m map[string]any) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// Outcome is the short word the pane and CLI show for an entry.
func (e Entry) Outcome() string {
	switch {
	case e.Success:
		return "ok"
	case e.ErrorCode != "":
		return strings.ToLower(e.ErrorCode)
	default:
		return "fail"
	}
}

// parseLine decodes one line strictly and checks that it is in canonical form,
// so any change to its bytes is caught even where JSON would tolerate it
// (key case, spacing, escapes).
func parseLine(line []byte) (Entry, error) {
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, errGarbage
	}
	if dec.More() {
		return e, errGarbage
	}
	again, err := marshal(e)
	if err != nil || !bytes.Equal(again, line) {
		return e, errNotCanonical
	}
	return e, nil
}

var (
	errGarbage      = errors.New("not an audit entry")
	errNotCanonical = errors.New("bytes differ from the entry's canonical form")
)
