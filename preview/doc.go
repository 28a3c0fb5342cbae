// Package preview masks secrets and personal data before any value leaves the engine, and builds the
// HTTP-style previews (seed 003) that a person approves; panes, logs and the audit trail see only its output.
package preview
