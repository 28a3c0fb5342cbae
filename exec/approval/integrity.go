package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/media"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/flock"
)

// eventTampered is the audit event of a task whose stored request changed
// after submission (the audit package lists the events it knows; the set is open).
const eventTampered = "tampered"

// ErrTampered is returned by a decision on a task whose stored request no
// longer hashes to what was submitted; the task is now Tampered and nothing ran.
var ErrTampered = errors.New("the stored request changed after submission; nothing ran")

// tryLock takes the task's lock only if it is free (nil otherwise): list
// and open-time repairs skip a task another process is working on.
func (s store) tryLock(id string) func() {
	return flock.TryLock(filepath.Join(s.taskDir(id), "lock"))
}

// logEnd is the offset just after the audit log's last complete line: any
// entry appended from now on starts at or after it.
func (q *Queue) logEnd() (int64, error) { return audit.EndOfCompleteLines(q.o.Audit.Path()) }

// findLogged looks for the first entry of task id with one of events at or
// after offset from. Recovery uses it to learn whether an append that a
// crash may have interrupted happened; the scan covers only what was
// appended since the transition began.
func (q *Queue) findLogged(id string, from int64, events ...string) (audit.Entry, int64, bool, error) {
	var found audit.Entry
	var off int64
	ok := false
	from = max(from, 0) // a log_from edited below 0 scans the whole log
	_, err := audit.Scan(q.o.Audit.Path(), from, func(l audit.Line) bool {
		if l.Err == nil && l.Entry.TaskID == id && slices.Contains(events, l.Entry.Event) {
			found, off, ok = l.Entry, l.Offset, true
			return false
		}
		return true
	})
	return found, off, ok, err
}

// submittedEntry reads the audit log's submitted entry of r: the one line
// at the recorded offset (checked to be that seq and task), or — for a
// record from before offsets were kept — the first submitted entry of the
// task found by a scan. The entry is what the stored request is checked
// against, so it must be intact where it stands: its hash is recomputed and
// the entry after it (if any) must link to it. Appends check only the log's
// end, so an edit in the middle would otherwise go unseen here.
func (q *Queue) submittedEntry(r *Record) (audit.Entry, bool, error) {
	var off, seq int64
	if r.SubmittedOffset != nil && r.SubmittedSeq != nil {
		off, seq = *r.SubmittedOffset, *r.SubmittedSeq
	} else {
		e, o, ok, err := q.findLogged(r.TaskID, 0, audit.EventSubmitted)
		if err != nil || !ok {
			return e, ok, err
		}
		off, seq = o, e.Seq
	}
	if e, ok, done := q.submittedEntryNear(r, off, seq); done {
		return e, ok, nil
	}
	var e audit.Entry
	found, linked := false, true
	_, err := audit.Scan(q.o.Audit.Path(), max(off, 0), func(l audit.Line) bool {
		if !found {
			if l.Err == nil && l.Entry.Seq == seq && l.Entry.TaskID == r.TaskID && l.Entry.Event == audit.EventSubmitted {
				if h, err := l.Entry.ComputeHash(); err == nil && h == l.Entry.Hash {
					e, found = l.Entry, true
					return true // and read the next entry's link
				}
			}
			return false
		}
		linked = l.Err == nil && l.Entry.Seq == e.Seq+1 && l.Entry.Prev == e.Hash
		return false
	})
	return e, found && linked, err
}

// tamper says which stored hash no longer matches.
type tamper struct {
	what     string // "manifest", "plan", "request", "submission"
	recorded string // the hash recorded at submission
	found    string // what the stored files hash to now
	detail   string
}

func (t *tamper) message() string {
	// the hashes are named only when they differ: "recorded X, now X" says
	// nothing, the detail says what differs then
	hashes := ""
	if t.recorded != t.found {
		hashes = fmt.Sprintf(" (recorded %s, now %s)", orNone(t.recorded), orNone(t.found))
	}
	if t.detail != "" {
		return fmt.Sprintf("tampered: %s%s: %s", t.what, hashes, t.detail)
	}
	return fmt.Sprintf("tampered: the stored %s changed after submission%s", t.what, hashes)
}

func orNone(h string) string {
	if h == "" {
		return "none"
	}
	return "sha256:" + h
}

// checked is a stored task that passed its checks: the manifest and the
// plan its request makes now.
type checked struct {
	m    *task.Manifest
	plan media.Plan
}

// checkStored re-reads manifest.json, re-hashes it and the plan it makes,
// and compares both with the record and with the audit log's submitted
// entry. A mismatch (or a missing or unreadable manifest) is a *tamper; an
// error is for what prevents the check (I/O, a device gone from the config).
func (q *Queue) checkStored(r *Record) (*checked, *tamper, error) {
	m, raw, err := q.st.loadManifest(r.TaskID)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, &tamper{what: "manifest", recorded: r.ManifestHash, detail: "manifest.json is missing"}, nil
	case errors.Is(err, task.ErrNotAFile):
		return nil, &tamper{what: "manifest", recorded: r.ManifestHash, detail: "manifest.json cannot be read: " + errReason(err)}, nil
	case raw == nil && err != nil:
		return nil, nil, err
	}
	mh := sha256Hex(raw)
	if r.ManifestHash != "" && mh != r.ManifestHash {
		return nil, &tamper{what: "manifest", recorded: r.ManifestHash, found: mh}, nil
	}
	if err != nil {
		return nil, &tamper{what: "manifest", recorded: r.ManifestHash, found: mh, detail: "manifest.json no longer parses"}, nil
	}
	rh, err := m.RequestHash()
	switch {
	case err != nil:
		return nil, &tamper{what: "request", recorded: r.RequestHash, detail: "the stored request cannot be hashed: " + errReason(err)}, nil
	case m.TaskID != r.TaskID:
		return nil, &tamper{what: "request", recorded: r.RequestHash, found: rh,
			detail: fmt.Sprintf("manifest.json names task_id %s, record.json %s", shown(m.TaskID), shown(r.TaskID))}, nil
	case m.CapabilityID != r.CapabilityID:
		return nil, &tamper{what: "request", recorded: r.RequestHash, found: rh,
			detail: fmt.Sprintf("record.json says capability_id %s, manifest.json asks for %s", shown(r.CapabilityID), shown(m.CapabilityID))}, nil
	case rh != r.RequestHash:
		return nil, &tamper{what: "request", recorded: r.RequestHash, found: rh}, nil
	}
	plan, _, err := q.plan(m)
	if err != nil {
		return nil, nil, err
	}
	ph := plan.Hash()
	if r.PlanHash != "" && ph != r.PlanHash {
		return nil, &tamper{what: "plan", recorded: r.PlanHash, found: ph}, nil
	}
	e, ok, err := q.submittedEntry(r)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, &tamper{what: "submission", found: mh, detail: "the audit log holds no intact submitted entry for this task at the place the record names"}, nil
	}
	if t := shownMismatch(r, e); t != nil {
		return nil, t, nil
	}
	var d struct {
		PlanHash     string `json:"plan_hash"`
		ManifestHash string `json:"manifest_hash"`
		RequestHash  string `json:"request_hash"`
	}
	_ = json.Unmarshal(e.Details, &d)
	switch {
	case d.ManifestHash != "" && d.ManifestHash != mh:
		return nil, &tamper{what: "manifest", recorded: d.ManifestHash, found: mh,
			detail: fmt.Sprintf("differs from the audit log's submitted entry (seq %d)", e.Seq)}, nil
	case d.PlanHash != "" && d.PlanHash != ph:
		return nil, &tamper{what: "plan", recorded: d.PlanHash, found: ph,
			detail: fmt.Sprintf("differs from the audit log's submitted entry (seq %d)", e.Seq)}, nil
	case d.RequestHash != "" && d.RequestHash != rh:
		return nil, &tamper{what: "request", recorded: d.RequestHash, found: rh,
			detail: fmt.Sprintf("differs from the audit log's submitted entry (seq %d)", e.Seq)}, nil
	case d.PlanHash == "" && d.ManifestHash == "":
		return nil, &tamper{what: "submission", detail: fmt.Sprintf("the audit log's submitted entry (seq %d) records no hashes", e.Seq)}, nil
	}
	return &checked{m: m, plan: plan}, nil, nil
}

// taskEntries calls fn for each entry of r's task (and its offset) from the
// task's submitted entry on, until fn returns false, checking on the way
// that every entry's hash is right and that it links to the one before.
// Appends check only the log's end, so an entry edited in the middle (a
// decision renamed to another task, say) would otherwise hide what the log
// says about the task; a break is an *audit.DamagedError, and a decision
// fails closed on it. A record from before offsets were kept is read by a
// plain scan from the log's start.
func (q *Queue) taskEntries(r *Record, fn func(e audit.Entry, off int64) bool) error {
	path := q.o.Audit.Path()
	if r.SubmittedOffset == nil || r.SubmittedSeq == nil {
		_, err := audit.Scan(path, 0, func(l audit.Line) bool {
			return l.Err != nil || l.Entry.TaskID != r.TaskID || fn(l.Entry, l.Offset)
		})
		return err
	}
	next, prev := *r.SubmittedSeq, ""
	var bad error
	_, err := audit.Scan(path, max(*r.SubmittedOffset, 0), func(l audit.Line) bool {
		e := l.Entry
		why := ""
		if l.Err != nil {
			why = "not an intact audit entry"
		} else if h, err := e.ComputeHash(); err != nil || h != e.Hash {
			why = "its hash does not match its content (edited)"
		} else if e.Seq != next || (prev != "" && e.Prev != prev) {
			why = fmt.Sprintf("seq %d does not link on to entry #%d", e.Seq, next-1)
		}
		if why != "" {
			bad = &audit.DamagedError{Index: next, Reason: fmt.Sprintf("entry #%d, read for task %s: %s", next, r.TaskID, why)}
			return false
		}
		next, prev = e.Seq+1, e.Hash
		return e.TaskID != r.TaskID || fn(e, l.Offset)
	})
	if err != nil {
		return err
	}
	return bad
}

// checkDecidedBy holds a finished record's decided_by to the audit log: the
// actor of the task's decision entry (approved, denied, or a failure at the
// approval stage) is who decided. A record that names someone else (edited
// by hand to shift the blame or the credit) is shown with the log's actor,
// and Damage says what the record claimed. A log that cannot be read there
// leaves the record as it is: decisions fail closed on that already.
func (q *Queue) checkDecidedBy(r *Record) {
	if !r.State.Final() || r.DecidedBy == "" || r.LogFrom != nil {
		return
	}
	e, found, err := q.decisionEntry(r)
	switch {
	case err != nil:
	case !found:
		r.Damage = fmt.Sprintf("record.json says decided by %s, but the audit log holds no decision for this task", r.DecidedBy)
		r.DecidedBy = ""
	case e.Actor != r.DecidedBy:
		r.Damage = fmt.Sprintf("record.json says decided by %s, but the audit log's decision (seq %d) was made by %s",
			r.DecidedBy, e.Seq, e.Actor)
		r.DecidedBy = e.Actor
	}
}

// decisionWindow is how much of the log after a task's submitted entry is
// read first for its decision: a decision comes within the approval
// timeout, a few entries later on a quiet queue.
const decisionWindow = 64 << 10

// decisionEntry finds the decision entry of r's task. It first reads a
// window of the log from the submitted entry (a lookup of a finished task
// must not cost a scan to the log's end: `vigil serve` looks up every task
// once) and takes the decision there if its hash is right and the entry
// after it links to it; otherwise it reads the task's entries through the
// chain (taskEntries).
func (q *Queue) decisionEntry(r *Record) (audit.Entry, bool, error) {
	if r.SubmittedOffset != nil && r.SubmittedSeq != nil {
		from := max(*r.SubmittedOffset, 0)
		lines, _, err := audit.ReadRange(q.o.Audit.Path(), from, from+decisionWindow)
		if err == nil && len(lines) > 0 && lines[0].Err == nil && lines[0].Entry.Seq == *r.SubmittedSeq &&
			lines[0].Entry.TaskID == r.TaskID {
			for i, l := range lines {
				if l.Err != nil || l.Entry.TaskID != r.TaskID || !isDecision(l.Entry) {
					continue
				}
				h, herr := l.Entry.ComputeHash()
				linked := i+1 < len(lines) && lines[i+1].Err == nil && lines[i+1].Entry.Prev == l.Entry.Hash
				if herr == nil && h == l.Entry.Hash && linked {
					return l.Entry, true, nil
				}
				break // not provably intact here: the careful way below
			}
		}
	}
	var found *audit.Entry
	err := q.taskEntries(r, func(e audit.Entry, _ int64) bool {
		if isDecision(e) {
			found = &e
			return false
		}
		return true
	})
	if err != nil || found == nil {
		return audit.Entry{}, false, err
	}
	return *found, true, nil
}

// isDecision reports whether e is a person's decision on a task: an
// approval, a denial, or a failure found when an approval was made (a
// revoked lease), which the deciding person's name is logged with.
func isDecision(e audit.Entry) bool {
	switch e.Event {
	case audit.EventApproved, audit.EventDenied:
		return true
	case audit.EventFailed:
		var d struct {
			Stage string `json:"stage"`
		}
		return json.Unmarshal(e.Details, &d) == nil && d.Stage == "approval"
	}
	return false
}
