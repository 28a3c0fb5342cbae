package mcpserver

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/grants"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
)

// Vigil is the lease authority for the agents it knows: a media call made
// with an [[agents]] token and no lease gets one minted by the home's
// issuer key when one of the agent's [[agents.grants]] covers it, for
// exactly that task (sub "agent:<name>", its task_id, the one capability,
// the one device, lease_ttl). The minted lease then goes through the
// queue's checks as any other: the verifier trusts the issuer key because
// the config lists it (LoadGrants checks that), so a minted lease and an
// external one are verified by the same code. A call no grant covers is
// refused with INVALID_LEASE naming what is not granted; nothing is
// submitted. A call that brings a lease is untouched.

// EventLeaseIssued is the audit event of a lease Vigil minted under a
// grant (grants.EventLeaseIssued).
const EventLeaseIssued = grants.EventLeaseIssued

// Grants mints leases for the agents' grants (exec/grants).
type Grants = grants.Grants

// Minted is a lease minted under a grant (exec/grants).
type Minted = grants.Minted

// LoadGrants builds the minter from the config when an agent has grants
// (nil, nil when none has; grants.Load). [queue] url is refused: the
// shared queue's tasks are verified and minted by its executor, which
// knows the agent by its NATS user (docs/queue.md), not by this home.
func LoadGrants(cfg config.Config, keyPath string) (*Grants, error) {
	granted := grants.GrantedAgent(cfg)
	if granted != "" && cfg.Queue.Enabled() {
		return nil, fmt.Errorf("[[agents]] %q has grants, but [queue] url sends tasks to a shared queue: "+
			"there the executor mints, for the agent its NATS user names; "+
			"move the grants to the executor's config", granted)
	}
	return grants.Load(cfg, keyPath)
}

// grantLease mints the lease of a media call made with an agent's token
// and none of its own, when a grant covers it (a is given the lease), or
// refuses the call (the answer is returned, audited, nothing submitted).
// Any other call is left as it is (nil). A task_id the queue would refuse
// is left to it: its refusal names the task_id.
func (s *server) grantLease(req *mcp.CallToolRequest, a *taskArgs, capID string) *mcp.CallToolResult {
	agent := CallerAgent(req)
	if agent == "" || s.d.Grants == nil || !grants.NoLease(a.lease) {
		return nil
	}
	var id string
	if json.Unmarshal(a.taskID, &id) != nil || task.ValidateTaskID(id) != nil {
		return nil
	}
	in, _ := json.Marshal(a.inputs)
	m, te, err := s.d.Grants.Mint(agent, id, capID, in, s.d.Now)
	switch {
	case err != nil:
		return toolError("ExecutionFailed", "lease: minting under a grant failed, nothing was submitted: "+err.Error())
	case te != nil:
		if err := s.recordRefusal(req, id, capID, agent, te); err != nil {
			return toolError("ExecutionFailed", err.Error())
		}
		return outcomeResult(approval.Outcome{TaskID: id, State: "rejected", Error: te})
	}
	if err := s.auditIssued(req, agent, m); err != nil {
		return toolError("ExecutionFailed", "lease: the minted lease could not be audited, nothing was submitted: "+err.Error())
	}
	a.lease, _ = json.Marshal(m.Token)
	return nil
}

// auditIssued records the minted lease before the task is submitted, so
// the trail reads lease_issued then submitted. A task_id that already
// names a task (a repeated call) stays out of that task's trail, as
// refusals do: the task keeps the lease it was submitted with.
func (s *server) auditIssued(req *mcp.CallToolRequest, agent string, m *Minted) error {
	if s.d.Audit == nil {
		return nil
	}
	act, c := m.Action, m.Claims
	details := map[string]any{"agent": agent, "device": act.Device, "grant": m.Grant, "jti": c.ID,
		"exp": c.ExpiresAt.UTC().Format(time.RFC3339), "source": source(req)}
	if act.Capability == media.CapPlay {
		host, forms := rules.HostOf(act.MediaURI)
		details["media_host"] = grants.ShowHost(host, forms)
	}
	e := audit.Entry{Actor: AgentSubject(agent), Event: EventLeaseIssued, TaskID: c.TaskID,
		Capability: act.Capability, Target: act.Device, TokenJTI: c.ID, Success: true}
	if s.taken(c.TaskID) {
		e.TaskID = ""
		details["reused_task_id"] = c.TaskID
	}
	e.Details = audit.Details(details)
	if _, err := s.d.Audit.Append(e); err != nil {
		return err
	}
	s.d.Log.Info("lease issued", "task_id", c.TaskID, "agent", agent, "capability", act.Capability, "jti", c.ID)
	return nil
}
