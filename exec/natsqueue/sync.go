package natsqueue

import (
	"context"
	"os"
	"time"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
)

// fullSyncEvery is how often, at most, a sync pass reads every task (a
// record changed without an entry in the log — edited by hand — is found
// then); the passes between read the open tasks and those the log names.
const fullSyncEvery = time.Minute

// sync publishes every task whose record changed since it was last
// published (expiry at the deadline, a decision made on this host, a
// recovery after a crash) and applies decisions waiting in the bucket.
//
// Every transition of a task ends with an audit entry, so a log of the
// same size as at the last pass means no record changed: nothing is read.
// Otherwise the pass reads the open tasks (Pending, which also expires
// those past their deadline) and the tasks the log's new entries name —
// not every task the home ever had, which under load, with a long history,
// kept the executor from its submissions and decisions (a pass over 800
// tasks took 23 ms of every second). At most once a fullSyncEvery it reads
// every task, as at start.
func (e *Executor) sync(ctx context.Context) {
	size := int64(-1)
	if fi, err := os.Stat(e.o.AuditPath); err == nil {
		size = fi.Size()
	}
	if size >= 0 && size == e.syncedSize {
		return
	}
	list, end, ok := e.changed()
	if !ok {
		var err error
		if list, err = e.o.Queue.List(); err != nil {
			e.o.Log.Warn("queue: list", "err", err)
			return
		}
		e.fullAt, end = time.Now(), size
		e.changes = nil
		if atLineEnd(e.o.AuditPath, size) {
			e.changes = audit.NewFollower(e.o.AuditPath, size)
		}
	}
	complete := true
	for _, r := range list {
		if ctx.Err() != nil {
			return
		}
		if r.State == approval.Damaged || e.published[r.TaskID] == recordHash(r) {
			continue
		}
		if _, ok := e.publishView(ctx, r.TaskID, publish{}); !ok {
			complete = false // tried again next pass
		}
	}
	switch {
	case !complete:
		e.fullAt = time.Time{} // the next pass reads every task again
	case ctx.Err() == nil:
		e.syncedSize = end
	}
}

// changed reads the records of the open tasks and of those the audit log
// names since the last pass, and the log's offset read to. ok is false
// when a pass must read every task: the first, one due (fullSyncEvery),
// or a log that cannot be followed (cut, unreadable).
func (e *Executor) changed() (list []approval.Record, end int64, ok bool) {
	if e.changes == nil || e.fullAt.IsZero() || time.Since(e.fullAt) >= fullSyncEvery {
		return nil, 0, false
	}
	// open tasks first: expiring one writes its entry, read just below
	open, err := e.o.Queue.Pending()
	if err != nil {
		return nil, 0, false
	}
	seen := map[string]bool{}
	for _, r := range open {
		seen[r.TaskID] = true
	}
	var ids []string
	for {
		b, err := e.changes.Read()
		if err != nil || b.Cut {
			return nil, 0, false
		}
		for _, l := range b.Lines() {
			if id := l.Entry.TaskID; l.Err == nil && id != "" && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if !b.More {
			break
		}
	}
	return append(open, e.o.Queue.Tasks(ids)...), e.changes.Offset(), true
}

// atLineEnd says whether off is where a line of the log at path starts
// (a follower can start there): 0, or just past a newline.
func atLineEnd(path string, off int64) bool {
	if off == 0 {
		return true
	}
	if off < 0 {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [1]byte
	n, err := f.ReadAt(b[:], off-1)
	return err == nil && n == 1 && b[0] == '\n'
}
