package natsqueue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/preview"
)

// TaskView is a task as operators see it: everything here was masked by the
// executor's local queue before it was published.
type TaskView struct {
	Record      approval.Record     `json:"task"`
	Preview     preview.HTTPPreview `json:"preview"`
	PreviewHash string              `json:"preview_hash"`
	LeaseValid  bool                `json:"lease_valid"`
	LeaseError  string              `json:"lease_error,omitempty"`
	Warnings    []string            `json:"warnings,omitempty"`
	Problem     string              `json:"problem,omitempty"`
	Result      *task.Result        `json:"result,omitempty"`
	Executor    string              `json:"executor"` // its host
	// ExecutorID names the executor that owns the task (ExecutorOptions.ID,
	// its result-signing key's id, which outlives a change of its device
	// list): only that one applies a decision.
	ExecutorID string `json:"executor_id,omitempty"`
	// RecordHash is the published record's hash: the executor republishes
	// a view only when its record changed.
	RecordHash string `json:"record_hash"`
	// QueuedAt is when the agent's submission was stored in the submit
	// stream (the server's timestamp on the message, which the agent does
	// not set): the record's SubmittedAt is the executor's clock when it
	// took the submission, which may be much later (the executor was
	// stopped, or busy with others). Operators' ages count from it.
	QueuedAt *time.Time `json:"queued_at,omitempty"`
	// Decision is an operator's decision the executor has not applied yet;
	// while one is here, no other can be made (the compare-and-set fails).
	Decision *Decision `json:"decision,omitempty"`
	// Refused is the last decision the executor could not apply, and why.
	Refused *Refusal `json:"refused,omitempty"`
}

// Decision is what an operator decided, bound to the preview they saw.
type Decision struct {
	ID          string    `json:"id"` // random: tells this decision from a later one by the same person
	Approve     bool      `json:"approve"`
	By          string    `json:"by"` // operator:<user>@<host>
	Reason      string    `json:"reason,omitempty"`
	PreviewHash string    `json:"preview_hash"`
	At          time.Time `json:"at"`
}

// Refusal is a decision that changed nothing.
type Refusal struct {
	DecisionID string `json:"decision_id"`
	By         string `json:"by"`
	Code       string `json:"code"` // preview_changed | refused
	Message    string `json:"message"`
}

// Shown is the refusal's message as a person may see it: masked and
// display-safe (the bucket holds it, and anyone who may write the bucket
// could have put it there).
func (r Refusal) Shown() string { return shownText(r.Message) }

// Verdict is the executor's answer to one submitted manifest — the same
// outcome a local `vigil submit` prints.
type Verdict struct {
	TaskID       string       `json:"task_id"`
	State        string       `json:"state"`
	Error        *task.Error  `json:"error,omitempty"`
	Result       *task.Result `json:"result,omitempty"`
	PreviewHash  string       `json:"preview_hash,omitempty"`
	ExpiresAt    *time.Time   `json:"expires_at,omitempty"`
	DeadlineKind string       `json:"deadline_kind,omitempty"`
}

// Decided says whether the task is past deciding (final, or a decision waits).
func (v TaskView) Decided() bool { return v.Record.State != approval.Pending || v.Decision != nil }

// Winner names who decided the task, for the operators who lost.
func (v TaskView) Winner() string {
	if v.Decision != nil {
		return v.Decision.By
	}
	if v.Record.DecidedBy != "" {
		return v.Record.DecidedBy
	}
	return "vigil"
}

// ShownRecord is the record as operators are shown it: submitted when the
// agent's submission reached the queue (QueuedAt) when that is earlier than
// when the executor took it, so that a task's age counts from the agent's
// submission.
func (v TaskView) ShownRecord() approval.Record {
	r := v.Record
	if v.QueuedAt != nil && !v.QueuedAt.IsZero() && v.QueuedAt.Before(r.SubmittedAt) {
		r.SubmittedAt = v.QueuedAt.UTC()
	}
	return r
}

// ApprovalView is the view in the local queue's shape, for the CLI's
// printers (the record as ShownRecord gives it).
func (v TaskView) ApprovalView() approval.View {
	return approval.View{Record: v.ShownRecord(), Preview: v.Preview, BindingHash: v.PreviewHash, LeaseValid: v.LeaseValid,
		LeaseError: v.LeaseError, Problem: v.Problem, Warnings: v.Warnings}
}

func recordHash(r approval.Record) string {
	b, _ := json.Marshal(r)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:16])
}
