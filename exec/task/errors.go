// Package task holds what every executor shares: the task manifest, the
// closed set of failure codes from the seeds, and signed results.
package task

import "fmt"

// Code is one of the seeds' failure codes. The set is closed: nothing else
// may appear in a result's error.
type Code string

const (
	InvalidLease          Code = "INVALID_LEASE"
	LeaseExpired          Code = "LEASE_EXPIRED"
	UnsupportedCapability Code = "UNSUPPORTED_CAPABILITY"
	InvalidQuery          Code = "INVALID_QUERY"
	ScopeNotAllowed       Code = "SCOPE_NOT_ALLOWED"
	ScopeUnavailable      Code = "SCOPE_UNAVAILABLE"
	ExecutionFailed       Code = "EXECUTION_FAILED"
	ResourceExhausted     Code = "RESOURCE_EXHAUSTED"
	ApprovalDenied        Code = "APPROVAL_DENIED"
	ApprovalTimeout       Code = "APPROVAL_TIMEOUT"
)

// Codes lists every failure code, in the order CLI.md gives them.
var Codes = []Code{InvalidLease, LeaseExpired, UnsupportedCapability, InvalidQuery,
	ScopeNotAllowed, ScopeUnavailable, ExecutionFailed, ResourceExhausted,
	ApprovalDenied, ApprovalTimeout}

// Error is a failure with one of the closed codes and a message that says
// which check or rule failed.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Is lets errors.Is match on the code alone: errors.Is(err, &task.Error{Code: task.LeaseExpired}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
