package approval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/preview"
)

// shownMismatch compares what a person is shown of a task — who asked,
// with which lease, for which capability and device, and until when — with
// what the audit log's submitted entry e recorded. record.json is rewritten
// at every transition and can be edited; the entry is hash-chained. A
// difference is tampering (the record was edited: no crash changes these
// fields), and the message names the field and both values.
func shownMismatch(r *Record, e audit.Entry) *tamper {
	d := submittedFieldsOf(e)
	differs := func(field, rec, logged string) *tamper {
		return &tamper{what: "record", detail: fmt.Sprintf("record.json says %s %s, the audit log's submitted entry (seq %d) %s",
			field, shown(rec), e.Seq, shown(logged))}
	}
	switch {
	case e.Actor != r.Agent:
		return differs("agent", r.Agent, e.Actor)
	case e.TokenJTI != r.TokenJTI:
		return differs("token_jti", r.TokenJTI, e.TokenJTI)
	case e.Capability != r.CapabilityID:
		return differs("capability_id", r.CapabilityID, e.Capability)
	case e.Target != r.Device:
		return differs("device", r.Device, e.Target)
	case d.Source != nil && *d.Source != r.Source:
		return differs("source", r.Source, *d.Source)
	case d.Caps != nil && !slices.Equal(*d.Caps, r.Caps):
		return differs("caps", strings.Join(r.Caps, ","), strings.Join(*d.Caps, ","))
	}
	// the entry keeps whole seconds (RFC 3339): the record's time must fall
	// in the same second
	if at, ok := d.deadline(); ok && !r.ExpiresAt.Truncate(time.Second).Equal(at) {
		return differs("expires_at", r.ExpiresAt.UTC().Format(time.RFC3339Nano), at.Format(time.RFC3339))
	}
	if at, ok := d.leaseExpires(); ok && !r.LeaseExpires.Truncate(time.Second).Equal(at) {
		return differs("lease_expires", r.LeaseExpires.UTC().Format(time.RFC3339Nano), at.Format(time.RFC3339))
	}
	return nil
}

// submittedFields is what a submitted entry's details hold of the shown
// fields; a nil or empty one was not recorded (an entry from an older
// version) and is not compared.
type submittedFields struct {
	Source           *string   `json:"source"`
	Caps             *[]string `json:"caps"`
	ApprovalDeadline string    `json:"approval_deadline"`
	LeaseExpires     string    `json:"lease_expires"`
}

func submittedFieldsOf(e audit.Entry) submittedFields {
	var d submittedFields
	_ = json.Unmarshal(e.Details, &d)
	return d
}

func (d submittedFields) deadline() (time.Time, bool) { return parseWhole(d.ApprovalDeadline) }

func (d submittedFields) leaseExpires() (time.Time, bool) { return parseWhole(d.LeaseExpires) }

func parseWhole(s string) (time.Time, bool) {
	at, err := time.Parse(time.RFC3339, s)
	return at.UTC(), err == nil
}

// shownTamper reads the submitted entry of a record and compares the
// fields a person is shown with it (shownMismatch); e is that entry. A
// record whose entry cannot be found intact is left to the decision's full
// check, as is one mid-transition (log_from set) or from before offsets.
func (q *Queue) shownTamper(r *Record) (*tamper, audit.Entry, error) {
	if r.State == Damaged || r.LogFrom != nil || r.SubmittedSeq == nil || r.SubmittedOffset == nil {
		return nil, audit.Entry{}, nil
	}
	e, ok := q.shown.get(r)
	if !ok {
		var err error
		if e, ok, err = q.submittedEntry(r); err != nil || !ok {
			return nil, e, err
		}
		q.shown.put(r, e)
	}
	return shownMismatch(r, e), e, nil
}

// entryCache keeps, by task, the submitted entries shownTamper has read and
// found intact. The entry at the place a record names never changes (an edit
// of the log there is what a decision's own full read finds), so listing a
// pending task again reads no log: a listing reads the records it lists and
// nothing more.
type entryCache struct {
	mu sync.Mutex
	m  map[string]cachedEntry
}

type cachedEntry struct {
	off, seq int64
	e        audit.Entry
}

// maxCachedEntries bounds the cache: it is emptied when full (open tasks are
// far fewer).
const maxCachedEntries = 4096

func (c *entryCache) get(r *Record) (audit.Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ce, ok := c.m[r.TaskID]
	if !ok || ce.off != *r.SubmittedOffset || ce.seq != *r.SubmittedSeq {
		return audit.Entry{}, false
	}
	return ce.e, true
}

func (c *entryCache) put(r *Record, e audit.Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedEntries {
		c.m = map[string]cachedEntry{}
	}
	c.m[r.TaskID] = cachedEntry{off: *r.SubmittedOffset, seq: *r.SubmittedSeq, e: e}
}

// restoreShown puts back into r what the submitted entry e recorded of the
// fields shownMismatch compares, so what is shown (and written on, when the
// task is then marked tampered) is what was submitted, not the edit.
func restoreShown(r *Record, e audit.Entry) {
	d := submittedFieldsOf(e)
	r.Agent, r.TokenJTI, r.CapabilityID, r.Device = e.Actor, e.TokenJTI, e.Capability, e.Target
	if d.Source != nil {
		r.Source = *d.Source
	}
	if d.Caps != nil {
		r.Caps = *d.Caps
	}
	if at, ok := d.deadline(); ok && !r.ExpiresAt.Truncate(time.Second).Equal(at) {
		r.ExpiresAt = at
	}
	if at, ok := d.leaseExpires(); ok && !r.LeaseExpires.Truncate(time.Second).Equal(at) {
		r.LeaseExpires = at
	}
}

// shown quotes a stored value for a message: masked, control and
// invisible characters escaped.
func shown(s string) string { return strconv.Quote(preview.MaskString(s)) }

// entryWindow is how much of the log submittedEntryNear reads: a submitted
// entry and the one after it, whose lines are well under a kilobyte each.
const entryWindow = 8 << 10

// submittedEntryNear is submittedEntry's answer from one small read at the
// recorded offset (a listing checks every pending task this way, and a
// full Scan's buffer is a megabyte): the entry there and the next one's link
// to it. done is false when the window does not settle it (the entry or the
// next line longer than the window, or the entry last in the window), and
// the caller scans instead.
func (q *Queue) submittedEntryNear(r *Record, off, seq int64) (e audit.Entry, ok, done bool) {
	lines, _, err := audit.ReadRange(q.o.Audit.Path(), max(off, 0), max(off, 0)+entryWindow)
	if err != nil || len(lines) < 2 {
		return e, false, false
	}
	l, next := lines[0], lines[1]
	if l.Err != nil || l.Entry.Seq != seq || l.Entry.TaskID != r.TaskID || l.Entry.Event != audit.EventSubmitted {
		return e, false, true
	}
	if h, err := l.Entry.ComputeHash(); err != nil || h != l.Entry.Hash {
		return e, false, true
	}
	return l.Entry, next.Err == nil && next.Entry.Seq == seq+1 && next.Entry.Prev == l.Entry.Hash, true
}

// checkShown holds what a record shows of who asked, with which lease and
// until when to its submitted entry (one small read of the log). A pending
// record that differs was edited: it is marked tampered now (an edited
// deadline must neither keep it approvable nor keep `vigil serve`, which
// reads tasks through Get, from expiring it). Otherwise — a finished record,
// or a pending one whose lock is busy or whose tampering the log refused —
// it is shown with the entry's values, Damage saying what record.json
// claimed, and a pending one as Damaged.
func (q *Queue) checkShown(r *Record) {
	t, e, err := q.shownTamper(r)
	if err != nil || t == nil {
		return
	}
	if r.State == Pending {
		if tr, ok := q.tamperShown(r.TaskID); ok {
			*r = tr
			return
		}
	}
	restoreShown(r, e)
	if r.State == Pending {
		r.State = Damaged
	}
	r.Damage = t.message()
}

// tamperShown marks pending task id tampered when its record's shown fields
// still differ from its submitted entry once its lock is held; ok says it
// did (r is then the tampered record).
func (q *Queue) tamperShown(id string) (r Record, ok bool) {
	unlock := q.st.tryLock(id)
	if unlock == nil {
		return r, false
	}
	defer unlock()
	r, err := q.st.load(id)
	if err != nil || r.State != Pending {
		return r, false
	}
	t, e, err := q.shownTamper(&r)
	if err != nil || t == nil {
		return r, false
	}
	restoreShown(&r, e)
	if err := q.tamperLocked(&r, t); err != nil {
		q.o.Log.Warn("an edited record could not be marked tampered", "task_id", id, "err", err)
		return r, false
	}
	return r, true
}
