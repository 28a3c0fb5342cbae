package natsqueue

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/grants"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/exec/task"
)

// On the shared queue the executor is the lease authority for the agents
// its config knows: a manifest on an agent's subject (AgentSubjectFor),
// which only that agent's NATS user may publish, that carries no lease
// gets one minted with the executor's issuer key under the agent's
// [[agents.grants]] (grants.Grants.Mint), audited as lease_issued, and is
// submitted with it; the agent holds no key. One no grant covers is
// refused INVALID_LEASE naming what is not granted, as on `vigil mcp
// --http`. A manifest that brings a lease is submitted as it is, and the
// local queue verifies that lease as any other.

// grantLease is the manifest to submit for a delivery: raw itself unless
// it came on an agent's subject without a lease; then raw with the minted
// lease, or a refusal (the verdict to answer with, already audited).
// err is a failure to mint or audit: the delivery is tried again.
func (e *Executor) grantLease(m jetstream.Msg, raw []byte) ([]byte, *Verdict, error) {
	agent, ok := agentOfSubject(m.Subject())
	if !ok {
		return raw, nil, nil
	}
	var man struct {
		TaskID     string          `json:"task_id"`
		Capability string          `json:"capability_id"`
		Inputs     json.RawMessage `json:"inputs"`
		Lease      json.RawMessage `json:"lease"`
	}
	if json.Unmarshal(raw, &man) != nil || !grants.NoLease(man.Lease) || task.ValidateTaskID(man.TaskID) != nil {
		return raw, nil, nil // the local queue reads, verifies or refuses it
	}
	var te *task.Error
	var minted *grants.Minted
	if e.o.Grants == nil {
		te = task.Errorf(task.InvalidLease, "lease: none given, and this executor grants no agent leases "+
			"(no [[agents.grants]]); send a lease")
	} else {
		var err error
		if minted, te, err = e.o.Grants.Mint(agent, man.TaskID, man.Capability, man.Inputs, e.now); err != nil {
			return nil, nil, err
		}
	}
	if te != nil {
		if err := e.auditRefusal(m, agent, man.TaskID, man.Capability, te); err != nil {
			return nil, nil, err
		}
		return nil, &Verdict{TaskID: man.TaskID, State: "rejected", Error: te}, nil
	}
	if err := e.auditIssued(m, agent, minted); err != nil {
		return nil, nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, nil, err
	}
	all["lease"], _ = json.Marshal(minted.Token)
	out, err := json.Marshal(all)
	return out, nil, err
}

func (e *Executor) now() time.Time {
	if e.o.Now != nil {
		return e.o.Now()
	}
	return time.Now()
}

// auditIssued records the minted lease before the task is submitted, so
// the trail reads lease_issued then submitted (as on `vigil mcp --http`).
func (e *Executor) auditIssued(m jetstream.Msg, agent string, mi *grants.Minted) error {
	act, c := mi.Action, mi.Claims
	details := map[string]any{"agent": agent, "device": act.Device, "grant": mi.Grant, "jti": c.ID,
		"exp": c.ExpiresAt.UTC().Format(time.RFC3339), "source": submitSource(m)}
	if act.Capability == media.CapPlay {
		host, forms := rules.HostOf(act.MediaURI)
		details["media_host"] = grants.ShowHost(host, forms)
	}
	e2 := audit.Entry{Actor: grants.AgentSubject(agent), Event: grants.EventLeaseIssued, TaskID: c.TaskID,
		Capability: act.Capability, Target: act.Device, TokenJTI: c.ID, Success: true, Details: audit.Details(details)}
	if e.taken(c.TaskID) {
		e2.TaskID = ""
		details["reused_task_id"] = c.TaskID
		e2.Details = audit.Details(details)
	}
	if _, err := e.appendAudit(e2); err != nil {
		return err
	}
	e.o.Log.Info("queue: lease issued", "task_id", c.TaskID, "agent", agent, "capability", act.Capability, "jti", c.ID)
	return nil
}

// auditRefusal records a submission refused before the local queue saw it,
// as the local queue records its own refusals.
func (e *Executor) auditRefusal(m jetstream.Msg, agent, id, capID string, te *task.Error) error {
	details := map[string]any{"reason": te.Message, "source": submitSource(m)}
	ent := audit.Entry{Actor: grants.AgentSubject(agent), Event: audit.EventRejected, TaskID: id, Capability: capID,
		ErrorCode: string(te.Code)}
	if e.taken(id) {
		ent.TaskID = ""
		details["reused_task_id"] = id
	}
	ent.Details = audit.Details(details)
	_, err := e.appendAudit(ent)
	return err
}

// appendAudit appends to the home's log, opening it the first time.
func (e *Executor) appendAudit(ent audit.Entry) (audit.Entry, error) {
	if e.o.Audit == nil {
		l, err := audit.Open(e.o.AuditPath, e.now)
		if err != nil {
			return audit.Entry{}, err
		}
		e.o.Audit = l
	}
	return e.o.Audit.Append(ent)
}

// taken says whether id names a task the local queue has: a refused or
// repeated submission stays out of that task's trail.
func (e *Executor) taken(id string) bool {
	_, err := e.o.Queue.Get(id)
	return err == nil
}
