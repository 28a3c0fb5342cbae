package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/task"
)

// checkSubject refuses, before anything is submitted, a task call made
// with an agent's token whose lease names another agent: the caller is who
// its token says, whatever lease it holds. The refusal is INVALID_LEASE,
// recorded as the queue records its own lease refusals. The lease's
// signature, time and claims are still the queue's to check: this reads
// its sub without trusting it, which is enough to refuse (a forged lease
// naming the right agent is refused by the queue). A lease that cannot be
// read at all, or no lease, is also left to the queue.
func (s *server) checkSubject(req *mcp.CallToolRequest, a taskArgs, capID string) *mcp.CallToolResult {
	agent := CallerAgent(req)
	if agent == "" {
		return nil
	}
	sub, ok := leaseSubject(a.lease)
	if !ok || sub == AgentSubject(agent) {
		return nil
	}
	te := task.Errorf(task.InvalidLease, "lease: its sub names another agent than this token's; "+
		"a lease for agent %q carries sub %q", agent, AgentSubject(agent))
	var id string
	_ = json.Unmarshal(a.taskID, &id)
	if err := s.recordRefusal(req, id, capID, agent, te); err != nil {
		return toolError("ExecutionFailed", err.Error())
	}
	return outcomeResult(approval.Outcome{TaskID: id, State: "rejected", Error: te})
}

// leaseSubject reads a lease argument's sub claim, unverified.
func leaseSubject(raw json.RawMessage) (string, bool) {
	var tok string
	if json.Unmarshal(raw, &tok) != nil || tok == "" || len(tok) > lease.MaxTokenBytes {
		return "", false
	}
	var c lease.Claims
	if _, _, err := jwt.NewParser().ParseUnverified(tok, &c); err != nil {
		return "", false
	}
	return c.Subject, true
}

// recordRefusal appends the refusal to the audit log as the queue's own
// rejections are: event rejected, the error code and reason, the source;
// the actor is the token's agent (the lease's sub is unverified). A task_id
// that already names a task stays out of that task's trail.
func (s *server) recordRefusal(req *mcp.CallToolRequest, id, capID, agent string, te *task.Error) error {
	if s.d.Audit == nil {
		return nil
	}
	details := map[string]any{"reason": te.Message, "source": source(req)}
	e := audit.Entry{Actor: AgentSubject(agent), Event: audit.EventRejected, TaskID: id, Capability: capID,
		ErrorCode: string(te.Code)}
	if id != "" && s.taken(id) {
		e.TaskID = ""
		details["reused_task_id"] = id
	}
	e.Details = audit.Details(details)
	if _, err := s.d.Audit.Append(e); err != nil {
		return fmt.Errorf("the refusal could not be audited: %w", err)
	}
	s.d.Log.Info("task rejected", "task_id", id, "code", te.Code, "agent", agent)
	return nil
}

// taken reports whether id names a task the queue knows (one whose state
// cannot be read counts: its trail is kept apart all the same).
func (s *server) taken(id string) bool {
	if task.ValidateTaskID(id) != nil || s.d.Tasks == nil {
		return false
	}
	if _, err := s.d.Tasks.Get(id); !errors.Is(err, approval.ErrNotFound) {
		return true
	}
	_, err := s.d.Tasks.Result(id)
	return !errors.Is(err, task.ErrNotFound)
}

// ownsTask says whether a call may read a task: any call without an
// agent's token (as before), and an agent's call only for tasks whose lease
// named it. Another agent's task reads as no task at all.
func ownsTask(req *mcp.CallToolRequest, rec approval.Record) bool {
	agent := CallerAgent(req)
	return agent == "" || rec.Agent == AgentSubject(agent)
}
