package approval

// Search tasks (SEARCH_*) run at submission: they change nothing, so they
// wait for no one; their outcome is stored as a search claim beside the task.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/lease"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/preview"
)

func stateOfResult(r *task.Result) string {
	if r.Status == task.StatusSuccess {
		return string(Done)
	}
	return string(Failed)
}

// searchClaim is tasks/<id>/search.json: which request a search task_id
// belongs to, so a later manifest with that id is compared with it.
type searchClaim struct {
	CapabilityID string `json:"capability_id"`
	RequestHash  string `json:"request_hash"`
	Agent        string `json:"agent"`
}

func (s store) searchPath(id string) string { return filepath.Join(s.dir, id, "search.json") }

func (s store) loadSearch(id string) (searchClaim, error) {
	var c searchClaim
	b, err := task.ReadStored(s.searchPath(id), maxRecordBytes)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("task %s: search.json is damaged", id)
	}
	return c, nil
}

// runSearch runs a non-mutating SEARCH_* task at submission: lease checks,
// then the scope executor, once per task_id (a repeat returns the stored,
// byte-identical result). The task_id rule is the media tasks' rule.
func (q *Queue) runSearch(ctx context.Context, m *task.Manifest, source string) (Outcome, error) {
	claims, err := q.o.Leases.Check(m.Lease, lease.Request{TaskID: m.TaskID, CapabilityID: m.CapabilityID})
	if err != nil {
		agent, jti := q.agentOf(m.Lease)
		return q.reject(m.TaskID, m.CapabilityID, agent, jti, asTaskError(err), source)
	}
	rh, err := m.RequestHash()
	if err != nil {
		return Outcome{}, err
	}
	unlock, err := q.st.lock(m.TaskID)
	if err != nil {
		return Outcome{}, err
	}
	defer unlock()
	existing, err := q.st.load(m.TaskID)
	switch {
	case errors.Is(err, ErrDamaged):
		return q.reject(m.TaskID, m.CapabilityID, claims.Subject, claims.ID,
			conflict(m.TaskID, "an existing task whose record is damaged"), source)
	case err == nil:
		return q.reject(m.TaskID, m.CapabilityID, claims.Subject, claims.ID,
			conflict(m.TaskID, fmt.Sprintf("it is a %s task (%s), this manifest asks for %s", existing.CapabilityID,
				existing.State, m.CapabilityID)), source)
	case !errors.Is(err, ErrNotFound):
		return Outcome{}, err
	}
	claim, cerr := q.st.loadSearch(m.TaskID)
	switch {
	case cerr == nil:
		if te := sameRequest(m.TaskID, claim.CapabilityID, claim.RequestHash, claim.Agent, m, rh, claims.Subject); te != nil {
			return q.reject(m.TaskID, m.CapabilityID, claims.Subject, claims.ID, te, source)
		}
	case errors.Is(cerr, os.ErrNotExist):
		if res, err := q.o.Results.Load(m.TaskID); err == nil {
			if te := sameRequest(m.TaskID, res.CapabilityID, res.RequestHash, "", m, rh, claims.Subject); te != nil {
				return q.reject(m.TaskID, m.CapabilityID, claims.Subject, claims.ID, te, source)
			}
		}
		b, _ := json.Marshal(searchClaim{CapabilityID: m.CapabilityID, RequestHash: rh, Agent: claims.Subject})
		if err := atomicfile.Write(q.st.searchPath(m.TaskID), b, 0o600); err != nil {
			return Outcome{}, err
		}
	default:
		return q.reject(m.TaskID, m.CapabilityID, claims.Subject, claims.ID,
			conflict(m.TaskID, "an existing search task whose claim file is damaged"), source)
	}
	var target string
	var in struct {
		TargetScope string `json:"target_scope"`
	}
	_ = json.Unmarshal(m.Inputs, &in)
	target = in.TargetScope
	res, fresh, err := q.o.Results.Do(m.TaskID, rh, func() (*task.Result, error) {
		// a search is audited: on a log that cannot take its entry it
		// neither runs nor leaves a result a repeat would hand out unaudited
		if err := q.o.Audit.CheckEnd(); err != nil {
			return nil, err
		}
		out, terr := scope.Execute(ctx, q.o.Scopes, m.TaskID, m.CapabilityID, m.Inputs, q.o.ScopeLimits)
		r := &task.Result{TaskID: m.TaskID, CapabilityID: m.CapabilityID, RequestHash: rh,
			ExecutedAt: task.FormatTime(q.o.Now()), Output: json.RawMessage("{}")}
		if terr != nil {
			r.Status, r.Error = task.StatusFailure, terr
		} else {
			b, err := json.Marshal(out)
			if err != nil {
				return nil, err
			}
			r.Status, r.Output = task.StatusSuccess, b
		}
		if err := q.o.Signer.Sign(r); err != nil {
			return nil, err
		}
		return r, nil
	})
	if err != nil {
		return q.reject(m.TaskID, m.CapabilityID, claims.Subject, claims.ID, asTaskError(err), source)
	}
	if fresh {
		e := audit.Entry{Actor: claims.Subject, Event: audit.EventSearched, TaskID: m.TaskID, Capability: m.CapabilityID,
			Target: preview.MaskString(target), TokenJTI: claims.ID, Success: res.Status == task.StatusSuccess,
			Details: audit.Details(map[string]any{"source": source})}
		if res.Error != nil {
			e.ErrorCode = string(res.Error.Code)
		}
		if _, err := q.o.Audit.Append(e); err != nil {
			return Outcome{}, err
		}
	}
	return Outcome{TaskID: m.TaskID, State: stateOfResult(res), Result: res}, nil
}
