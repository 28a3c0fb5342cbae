package approval

import "errors"

// Decision is an answer on a pending task, a person's or a rule's. PreviewHash, when set, is the BindingHash of
// the preview they saw; the approval is refused if it no longer matches.
type Decision struct {
	Approve     bool
	By          string // operator:<user>
	Reason      string // for a denial
	PreviewHash string
	Via         string // the surface: ViaTUI, ViaCLI, ViaSSH, ViaQueue
	// Key is the SHA256 fingerprint of the SSH key the operator signed in
	// with ("SHA256:…"), for a decision made over SSH.
	Key string
	// Rule is the content hash of the rule that decided ("sha256:…"), for
	// a decision a rule made (By "rule:<id>", Via ViaRule).
	Rule string
}

// The surfaces a decision is recorded as having come through.
const (
	ViaTUI   = "tui"   // this account's TUI
	ViaCLI   = "cli"   // this account's vigil approve/deny
	ViaSSH   = "ssh"   // an operator over vigil serve --ssh, with a listed key
	ViaQueue = "queue" // a shared queue's operator, with its credentials
	ViaRule  = "rule"  // a rule of the home's ([[rules]]), at submission
)

// ErrOperatorKeyRequired refuses a decision made on a home whose
// [decisions] require_operator_key is set by anyone but an SSH operator
// with a key, or a shared queue's operator.
var ErrOperatorKeyRequired = errors.New("decisions on this home are made only by an operator over SSH (vigil serve --ssh) " +
	"or through the shared queue with operator credentials ([decisions] require_operator_key); this account cannot decide")

// MayDecide says whether this home takes a decision coming the way d says:
// with RequireOperatorKey, only over SSH with a key or from a shared
// queue's operator (ErrOperatorKeyRequired otherwise).
func (q *Queue) MayDecide(d Decision) error {
	if !q.o.RequireOperatorKey {
		return nil
	}
	// a rule is the operator's own, written where only they can write
	if (d.Via == ViaSSH && d.Key != "") || d.Via == ViaQueue || (d.Via == ViaRule && d.Rule != "") {
		return nil
	}
	return ErrOperatorKeyRequired
}

// RequiresOperatorKey says the home's [decisions] require_operator_key is set.
func (q *Queue) RequiresOperatorKey() bool { return q.o.RequireOperatorKey }

// proof is what a decision was made with, as the record keeps it in
// DecidedKey: the SSH key's fingerprint or the deciding rule's hash.
func (d Decision) proof() string {
	if d.Via == ViaRule {
		return d.Rule
	}
	return d.Key
}

// withProof adds what the decision was made with to an entry's details:
// "rule_hash" for a rule's decision, "key" for an operator's key.
func withProof(d map[string]any, via, proof string) map[string]any {
	switch {
	case proof == "":
	case via == ViaRule:
		d["rule_hash"] = proof
	default:
		d["key"] = proof
	}
	return d
}
