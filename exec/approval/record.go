package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/flock"
)

// State is where a task is in its life.
type State string

const (
	Pending   State = "pending"
	Approved  State = "approved"
	Executing State = "executing"
	Done      State = "done"
	Denied    State = "denied"
	Expired   State = "expired"
	Failed    State = "failed"
	// Tampered: the stored request (manifest, plan or record) no longer
	// hashes to what was submitted; nothing runs. Final, with a signed
	// EXECUTION_FAILED result naming both hashes.
	Tampered State = "tampered"
	// Damaged is never written: a record that cannot be read is reported in
	// this state (with Record.Damage saying why) so one bad task does not
	// take the queue down. It cannot be decided or executed.
	Damaged State = "damaged"
)

// Final reports whether no further transition can happen.
func (s State) Final() bool {
	return s == Done || s == Denied || s == Expired || s == Failed || s == Tampered
}

// Deadline kinds of Record.Deadline.
const (
	DeadlineApproval = "approval"
	DeadlineLease    = "lease"
)

// Record is one task's durable state. Every string in it is safe to show:
// the lease token lives only in manifest.json.
type Record struct {
	TaskID       string     `json:"task_id"`
	CapabilityID string     `json:"capability_id"`
	State        State      `json:"state"`
	Agent        string     `json:"agent"`
	TokenJTI     string     `json:"token_jti"`
	LeaseExpires time.Time  `json:"lease_expires"`
	Caps         []string   `json:"caps"`
	Device       string     `json:"device"`
	Source       string     `json:"source"` // cli | inbox
	SubmittedAt  time.Time  `json:"submitted_at"`
	ExpiresAt    time.Time  `json:"expires_at"` // the approval deadline
	RequestHash  string     `json:"request_hash"`
	DecidedAt    *time.Time `json:"decided_at,omitempty"`
	DecidedBy    string     `json:"decided_by,omitempty"`
	DecidedVia   string     `json:"decided_via,omitempty"` // tui | cli | ssh | queue | vigil (timeouts, recovery)
	// DecidedKey is what the decision was made with: the SHA256
	// fingerprint of an SSH operator's key ("SHA256:…"), or for a rule's
	// decision (decided_via "rule") the rule's content hash ("sha256:…").
	DecidedKey  string      `json:"decided_key,omitempty"`
	Reason      string      `json:"reason,omitempty"` // a denial's reason, masked
	PreviewHash string      `json:"preview_hash,omitempty"`
	PlanHash    string      `json:"plan_hash,omitempty"`
	Error       *task.Error `json:"error,omitempty"`
	// ManifestHash is the hex SHA-256 of manifest.json as stored at
	// submission; the audit log's submitted entry holds it too.
	ManifestHash string `json:"manifest_hash,omitempty"`
	// SubmittedSeq and SubmittedOffset locate the audit log's submitted
	// entry, so checks read that one line instead of scanning the log.
	SubmittedSeq    *int64 `json:"submitted_seq,omitempty"`
	SubmittedOffset *int64 `json:"submitted_offset,omitempty"`
	// LogFrom is set while the audit entry of the transition into State may
	// still be missing: that entry, if written, lies at or after this offset
	// of the log. Recovery looks there before writing it (see the package doc).
	LogFrom *int64 `json:"log_from,omitempty"`
	// FinishedAt is when the task reached its final state.
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// DecidingRule is set at submission when a rule decides the task
	// ("rule:<id>"): in the moment it is pending before that decision is
	// recorded, nobody is told it arrived (see RuleDeciding).
	DecidingRule string `json:"deciding_rule,omitempty"`
	// Damage says why a record could not be read (State Damaged only).
	Damage string `json:"damage,omitempty"`
}

// Decider says who decided in a person's words: "rule kitchen-pause" for
// a rule's decision, else DecidedBy as stored ("operator:ada"). Callers
// show it through safetext.
func (r Record) Decider() string {
	if id, ok := strings.CutPrefix(r.DecidedBy, "rule:"); ok && r.DecidedVia == ViaRule {
		return "rule " + id
	}
	return r.DecidedBy
}

// Deadline is the moment the task stops being approvable: the earlier of
// the approval timeout and the lease's exp (a zero LeaseExpires has none).
// kind is DeadlineApproval or DeadlineLease.
func (r Record) Deadline() (at time.Time, kind string) {
	if !r.LeaseExpires.IsZero() && r.LeaseExpires.Before(r.ExpiresAt) {
		return r.LeaseExpires, DeadlineLease
	}
	return r.ExpiresAt, DeadlineApproval
}

// LastChange is when the task last moved: finished, else decided, else
// submitted (what a list of decided tasks is ordered by, newest first).
func (r Record) LastChange() time.Time {
	switch {
	case r.FinishedAt != nil:
		return *r.FinishedAt
	case r.DecidedAt != nil:
		return *r.DecidedAt
	}
	return r.SubmittedAt
}

// ErrNotFound means no task with that id was submitted.
var ErrNotFound = errors.New("no such task")

// DecidedError is returned to every decision after the first.
type DecidedError struct {
	TaskID string
	State  State
	By     string
	Code   task.Code // the outcome's failure code, when there is one
}

func (e *DecidedError) Error() string {
	what := string(e.State)
	if e.Code != "" {
		what += " (" + string(e.Code) + ")"
	}
	if e.By != "" {
		return fmt.Sprintf("task %s was already decided: %s by %s", e.TaskID, what, e.By)
	}
	return fmt.Sprintf("task %s was already decided: %s", e.TaskID, what)
}

type store struct{ dir string }

func (s store) taskDir(id string) string { return filepath.Join(s.dir, id) }
func (s store) recordPath(id string) string {
	return filepath.Join(s.dir, id, "record.json")
}
func (s store) manifestPath(id string) string {
	return filepath.Join(s.dir, id, "manifest.json")
}

// lock takes the task's exclusive lock (across processes).
func (s store) lock(id string) (func(), error) {
	if err := os.MkdirAll(s.taskDir(id), 0o700); err != nil {
		return nil, err
	}
	return flock.Lock(filepath.Join(s.taskDir(id), "lock"))
}

// ErrDamaged means a task's record cannot be read. Only that task is
// affected: lists show it in State Damaged with the reason.
var ErrDamaged = errors.New("task record is damaged")

var knownStates = map[State]bool{Pending: true, Approved: true, Executing: true, Done: true, Denied: true,
	Expired: true, Failed: true, Tampered: true}

// load reads a record. A record that exists but cannot be used comes back
// as a Damaged record with the reason, and an error wrapping ErrDamaged.
func (s store) load(id string) (Record, error) {
	var r Record
	b, err := task.ReadStored(s.recordPath(id), maxRecordBytes)
	if errors.Is(err, os.ErrNotExist) {
		return r, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	damaged := func(why string) (Record, error) {
		return Record{TaskID: id, State: Damaged, Damage: why}, fmt.Errorf("task %s: %w: %s", id, ErrDamaged, why)
	}
	if err != nil {
		return damaged("record.json cannot be read: " + errReason(err))
	}
	if err := json.Unmarshal(b, &r); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return damaged(fmt.Sprintf("record.json is not valid JSON (byte %d)", se.Offset))
		case errors.As(err, &te):
			return damaged(fmt.Sprintf("record.json: field %s has the wrong type", te.Field))
		}
		return damaged("record.json is not a task record")
	}
	switch {
	case r.TaskID != id:
		return damaged("record.json names another task_id than its folder")
	case !knownStates[r.State]:
		return damaged("record.json has an unknown state")
	case r.RequestHash == "" || r.CapabilityID == "":
		return damaged("record.json lacks its request_hash or capability_id")
	}
	return r, nil
}

// errReason says why a file could not be read without the path or content.
func errReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return "I/O error"
}

func (s store) save(r Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.recordPath(r.TaskID), append(b, '\n'), 0o600)
}

// loadManifest reads manifest.json: its bytes, their hash and the parsed manifest.
func (s store) loadManifest(id string) (*task.Manifest, []byte, error) {
	b, err := s.readManifest(id)
	if err != nil {
		return nil, nil, err
	}
	m, err := task.ParseManifest(b)
	return m, b, err
}

// Bounds on what a task's stored files can be (task.ReadStored refuses
// anything larger, and anything that is not a regular file, without reading
// it): a record is a few hundred bytes; a manifest is stored re-encoded, so
// escaping can make it larger than the MaxManifestBytes it was submitted in.
const (
	maxRecordBytes   = 1 << 20
	maxManifestBytes = 8 * task.MaxManifestBytes
)

// readManifest reads manifest.json's bytes (see task.ReadStored).
func (s store) readManifest(id string) ([]byte, error) {
	return task.ReadStored(s.manifestPath(id), maxManifestBytes)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ids lists submitted task ids.
func (s store) ids() ([]string, error) {
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && task.ValidateTaskID(e.Name()) == nil {
			if _, err := os.Lstat(s.recordPath(e.Name())); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}
