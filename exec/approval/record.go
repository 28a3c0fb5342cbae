// Package approval is the pending-action queue: agents submit leased tasks,
// a person decides once (first decision wins across processes), approved
// media tasks run exactly once, and every step lands in the audit log.
//
// On disk (under the state folder): tasks/<task_id>/manifest.json (as
// submitted, 0600), tasks/<task_id>/record.json (the state machine, rewritten
// atomically under tasks/<task_id>/lock), results/<task_id>.json (the signed
// result, written once by task.Store), inbox/new (manifests dropped by other
// programs), inbox/rejected (why a dropped manifest was refused).
//
// Crash recovery (Reconcile, run whenever a queue opens): a task left
// "approved" had its decision recorded but never started, so it executes now;
// a task left "executing" either has a stored result (the crash came after
// the device call and the result write: the record catches up) or has none
// (the crash came between the "executing" write and the result: the device
// may or may not have acted, so the task is marked failed with
// EXECUTION_FAILED "interrupted" and never re-run). Nothing runs twice.
package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	TaskID       string      `json:"task_id"`
	CapabilityID string      `json:"capability_id"`
	State        State       `json:"state"`
	Agent        string      `json:"agent"`
	TokenJTI     string      `json:"token_jti"`
	LeaseExpires time.Time   `json:"lease_expires"`
	Caps         []string    `json:"caps"`
	Device       string      `json:"device"`
	Source       string      `json:"source"` // cli | inbox
	SubmittedAt  time.Time   `json:"submitted_at"`
	ExpiresAt    time.Time   `json:"expires_at"` // the approval deadline
	RequestHash  string      `json:"request_hash"`
	DecidedAt    *time.Time  `json:"decided_at,omitempty"`
	DecidedBy    string      `json:"decided_by,omitempty"`
	DecidedVia   string      `json:"decided_via,omitempty"` // tui | cli | vigil (timeouts, recovery)
	Reason       string      `json:"reason,omitempty"`      // a denial's reason, masked
	PreviewHash  string      `json:"preview_hash,omitempty"`
	PlanHash     string      `json:"plan_hash,omitempty"`
	Error        *task.Error `json:"error,omitempty"`
	// FinishedAt is when the task reached its final state.
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Damage says why a record could not be read (State Damaged only).
	Damage string `json:"damage,omitempty"`
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

// ErrNotFound means no task with that id was submitted.
var ErrNotFound = errors.New("no such task")

// DecidedError is returned to every decision after the first.
type DecidedError struct {
	TaskID string
	State  State
	By     string
}

func (e *DecidedError) Error() string {
	if e.By != "" {
		return fmt.Sprintf("task %s was already decided: %s by %s", e.TaskID, e.State, e.By)
	}
	return fmt.Sprintf("task %s was already decided: %s", e.TaskID, e.State)
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

func (s store) load(id string) (Record, error) {
	var r Record
	b, err := os.ReadFile(s.recordPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return r, fmt.Errorf("task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("task %s: record is damaged: %w", id, err)
	}
	return r, nil
}

func (s store) save(r Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.recordPath(r.TaskID), append(b, '\n'), 0o600)
}

func (s store) loadManifest(id string) (*task.Manifest, error) {
	b, err := os.ReadFile(s.manifestPath(id))
	if err != nil {
		return nil, err
	}
	return task.ParseManifest(b)
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
		if e.IsDir() {
			if _, err := os.Stat(s.recordPath(e.Name())); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out, nil
}
