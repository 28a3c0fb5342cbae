package approval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/atomicfile"
	"github.com/vigil-dev/vigil/internal/flock"
)

// The index (tasks/.index/) lets the queue find its open tasks without
// reading every record ever stored: a finished task costs nothing until
// someone asks for it (its result, the decided list, a lookup by id). Task
// ids start with a letter or digit, so ".index" never names a task.
//
//	open/<id>   an empty marker per task that is not final, or whose last
//	            transition may be unfinished (log_from). Written before the
//	            record becomes non-final (durably: the folder is synced), and
//	            removed only after the record is final without log_from.
//	            So every task that needs the queue's attention has a marker;
//	            a marker may outlive its task (a crash between the final
//	            record and the removal), and is then removed by the next
//	            reconcile, which reads the task's own record first.
//	finished    one id a line, appended when a task is retired (before its
//	            marker goes), newest last: the decided list reads its tail.
//	            A crash can repeat a line; readers keep the last.
//	built       written last by a rebuild: without it (a home from before
//	            the index, or a rebuild that did not finish) the index is
//	            rebuilt from the records.
//
// The index is never the authority: every decision, repair and listing
// reads the task's own record, and a marker only says where to look. A
// missing or damaged index is rebuilt from the records, and the queue's log
// says so.
const (
	indexDir      = ".index"
	indexOpen     = "open"
	indexFinished = "finished"
	indexBuilt    = "built"
	indexStamp    = "vigil task index v1\n"
)

type index struct{ dir string } // tasks/.index

func (x index) openDir() string             { return filepath.Join(x.dir, indexOpen) }
func (x index) markerPath(id string) string { return filepath.Join(x.dir, indexOpen, id) }
func (x index) finishedPath() string        { return filepath.Join(x.dir, indexFinished) }
func (x index) builtPath() string           { return filepath.Join(x.dir, indexBuilt) }

// mark makes id's open marker durable (a no-op when it is there).
func (x index) mark(id string) error {
	if _, err := os.Lstat(x.markerPath(id)); err == nil {
		return nil
	}
	if err := os.MkdirAll(x.openDir(), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(x.markerPath(id), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return atomicfile.SyncDir(x.openDir())
}

// marked reports whether id has an open marker.
func (x index) marked(id string) bool {
	_, err := os.Lstat(x.markerPath(id))
	return err == nil
}

// unmark removes id's open marker. It need not be durable: a marker that
// comes back after a power cut only sends the next reconcile to a final
// record, which it then retires again.
func (x index) unmark(id string) error {
	if err := os.Remove(x.markerPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// appendFinished adds id to the finished list. One short O_APPEND write is
// atomic against other processes appending at the same time.
func (x index) appendFinished(id string) error {
	if err := os.MkdirAll(x.dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(x.finishedPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(id + "\n")
	return errors.Join(werr, f.Close())
}

// errIndexDamaged marks an index that must be rebuilt from the records.
var errIndexDamaged = errors.New("task index is damaged")

// openIDs lists the open markers. An index that is missing, unfinished or
// holds anything but task-id markers is reported with errIndexDamaged (or
// os.ErrNotExist when there is none) so the caller rebuilds it.
func (x index) openIDs() ([]string, error) {
	b, err := task.ReadStored(x.builtPath(), 4096)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w: %s is missing", os.ErrNotExist, indexBuilt)
	case err != nil:
		return nil, fmt.Errorf("%w: %s cannot be read: %s", errIndexDamaged, indexBuilt, errReason(err))
	case string(b) != indexStamp:
		return nil, fmt.Errorf("%w: %s is not this version's stamp", errIndexDamaged, indexBuilt)
	}
	if st, err := os.Lstat(x.finishedPath()); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is missing or not a file", errIndexDamaged, indexFinished)
	}
	ents, err := os.ReadDir(x.openDir())
	if err != nil {
		return nil, fmt.Errorf("%w: %s/ cannot be read: %s", errIndexDamaged, indexOpen, errReason(err))
	}
	ids := make([]string, 0, len(ents))
	for _, e := range ents {
		if !e.Type().IsRegular() || task.ValidateTaskID(e.Name()) != nil {
			return nil, fmt.Errorf("%w: %s/ holds an entry that is not a task marker", errIndexDamaged, indexOpen)
		}
		ids = append(ids, e.Name())
	}
	return ids, nil
}

// recentFinished returns up to n distinct ids from the end of the finished
// list, newest first. Only the tail is read (in growing chunks), so its cost
// follows n, not the history's length. Lines that are not task ids (a torn
// last line) are skipped.
func (x index) recentFinished(n int) ([]string, error) {
	f, err := os.Open(x.finishedPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	for chunk := int64(64 << 10); ; chunk *= 4 {
		from := max(size-chunk, 0)
		buf := make([]byte, size-from)
		if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if from > 0 {
			// the first line may be cut by the chunk's start
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				buf = buf[i+1:]
			}
		}
		lines := strings.Split(string(buf), "\n")
		seen := map[string]bool{}
		var out []string
		for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
			id := lines[i]
			if seen[id] || task.ValidateTaskID(id) != nil {
				continue
			}
			seen[id] = true
			out = append(out, id)
		}
		if len(out) >= n || from == 0 {
			return out, nil
		}
	}
}

// needsMarker reports whether a record is one the queue must find again:
// not final, or final with its last transition possibly unfinished.
func needsMarker(r Record) bool { return !r.State.Final() || r.LogFrom != nil }

// when is the moment a task reached where it is, for the decided list.
func when(r Record) time.Time {
	switch {
	case r.FinishedAt != nil:
		return *r.FinishedAt
	case r.DecidedAt != nil:
		return *r.DecidedAt
	}
	return r.SubmittedAt
}

// rebuildIndex makes the index again from every record. It only adds
// markers (a submission running meanwhile has written its own), rewrites the
// finished list in finishing order, and stamps the index built last. Records
// that cannot be read get a marker: a listing shows them as damaged.
func (q *Queue) rebuildIndex() (open int, err error) {
	x := q.idx
	if err := os.MkdirAll(x.openDir(), 0o700); err != nil {
		return 0, err
	}
	// the folders themselves are durable before any marker relies on them
	for _, d := range []string{q.st.dir, x.dir} {
		if err := atomicfile.SyncDir(d); err != nil {
			return 0, err
		}
	}
	unlock, err := flock.Lock(filepath.Join(x.dir, "lock"))
	if err != nil {
		return 0, err
	}
	defer unlock()
	// anything in open/ that is not a marker goes, so the index reads clean
	ents, err := os.ReadDir(x.openDir())
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || task.ValidateTaskID(e.Name()) != nil {
			if err := os.RemoveAll(filepath.Join(x.openDir(), e.Name())); err != nil {
				return 0, err
			}
		}
	}
	ids, err := q.st.ids()
	if err != nil {
		return 0, err
	}
	var finished []Record
	for _, id := range ids {
		r, err := q.st.load(id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err == nil && !needsMarker(r):
			finished = append(finished, r)
			continue
		}
		if err := x.mark(id); err != nil {
			return open, err
		}
		open++
	}
	sort.SliceStable(finished, func(i, j int) bool {
		if !when(finished[i]).Equal(when(finished[j])) {
			return when(finished[i]).Before(when(finished[j]))
		}
		return finished[i].TaskID < finished[j].TaskID
	})
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for _, r := range finished {
		w.WriteString(r.TaskID + "\n")
	}
	w.Flush()
	if err := atomicfile.Write(x.finishedPath(), b.Bytes(), 0o600); err != nil {
		return open, err
	}
	return open, atomicfile.Write(x.builtPath(), []byte(indexStamp), 0o600)
}

// openTaskIDs is the index's list of open tasks, rebuilt from the records
// first when the index is missing or damaged (the log says which and why).
func (q *Queue) openTaskIDs() ([]string, error) {
	ids, err := q.idx.openIDs()
	if err == nil {
		return ids, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		q.o.Log.Info("task index missing: building it from the task records", "why", err.Error())
	} else {
		q.o.Log.Warn("task index damaged: rebuilding it from the task records", "why", err.Error())
	}
	n, rerr := q.rebuildIndex()
	if rerr != nil {
		return nil, fmt.Errorf("task index: rebuilding after %v: %w", err, rerr)
	}
	q.o.Log.Info("task index rebuilt", "open_tasks", n)
	q.rebuilt = err
	return q.idx.openIDs()
}

// retire takes a final record (log_from cleared) out of the open index:
// first into the finished list, then its marker goes. The caller holds the
// task's lock and has made the record durable.
func (q *Queue) retire(r Record) error {
	if needsMarker(r) {
		return nil
	}
	if !q.idx.marked(r.TaskID) {
		return nil // retired already, or never indexed
	}
	if err := q.idx.appendFinished(r.TaskID); err != nil {
		return err
	}
	return q.idx.unmark(r.TaskID)
}

// retireQuietly retires r after a transition that is already durable: a
// failure only leaves its marker, which the next reconcile retires, so it
// is logged and does not fail the transition.
func (q *Queue) retireQuietly(r Record) {
	if err := q.retire(r); err != nil {
		q.o.Log.Warn("task index: a finished task stays listed as open until the next reconcile", "task_id", r.TaskID, "err", err)
	}
}
