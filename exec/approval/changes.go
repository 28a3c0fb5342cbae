package approval

import (
	"context"
	"slices"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/internal/fswatch"
)

// Changes follows this home's queue until ctx ends: the tasks named by the
// audit log's new entries, the open-task markers that come and go
// (tasks/.index/open), and what arrives in the inbox, which the feed sweeps
// itself (a screen never moves inbox files; several feeds on one home are
// safe, as SweepInbox locks each file). A burst of changes is delivered as
// one Change; a reader that is slow gets them merged, never blocks the feed.
func (q *Queue) Changes(ctx context.Context) (<-chan Change, error) {
	logPath := q.o.Audit.Path()
	from, err := audit.EndOfCompleteLines(logPath)
	if err != nil {
		return nil, err
	}
	f := &feed{q: q, follow: audit.NewFollower(logPath, from)}
	if err := f.watch(logPath); err != nil {
		f.close()
		return nil, err
	}
	out := make(chan Change)
	go f.run(ctx, out)
	return out, nil
}

// feed is one Changes call's state.
type feed struct {
	q                 *Queue
	follow            *audit.Follower
	log, marks, inbox *fswatch.Watcher
	pending           Change
	pendingIDs        map[string]bool
	hasPending        bool
}

func (f *feed) watch(logPath string) (err error) {
	if f.log, err = audit.Watch(logPath); err != nil {
		return err
	}
	if f.marks, err = fswatch.Watch(f.q.OpenTasksDir()); err != nil {
		return err
	}
	f.inbox, err = fswatch.Watch(f.q.InboxNew())
	return err
}

func (f *feed) close() {
	for _, w := range []*fswatch.Watcher{f.log, f.marks, f.inbox} {
		w.Close()
	}
}

func (f *feed) run(ctx context.Context, out chan<- Change) {
	defer close(out)
	defer f.close()
	f.sweep(ctx) // what arrived while no one was watching
	for {
		var send chan<- Change
		if f.hasPending {
			send = out
		}
		select {
		case <-ctx.Done():
			return
		case send <- f.pending:
			f.pending, f.pendingIDs, f.hasPending = Change{}, nil, false
		case <-f.log.C():
			f.log.Take()
			f.readLog()
		case <-f.marks.C():
			names, lost := f.marks.Take()
			f.add(Change{IDs: taskIDs(names), All: lost})
		case <-f.inbox.C():
			f.inbox.Take()
			f.sweep(ctx)
		}
	}
}

// readLog names the tasks of the log's new entries; a cut log means any
// task may have changed.
func (f *feed) readLog() {
	for {
		b, err := f.follow.Read()
		if err != nil {
			f.add(Change{Err: err})
			return
		}
		if b.Cut {
			f.add(Change{All: true})
		}
		var ids []string
		for _, l := range b.Lines() {
			if l.Err == nil && l.Entry.TaskID != "" {
				ids = append(ids, l.Entry.TaskID)
			}
		}
		f.add(Change{IDs: ids})
		if !b.More {
			return
		}
	}
}

func (f *feed) sweep(ctx context.Context) {
	outs, err := f.q.SweepInbox(ctx)
	var ids []string
	for _, o := range outs {
		if o.TaskID != "" {
			ids = append(ids, o.TaskID)
		}
	}
	f.add(Change{IDs: ids, Err: err})
}

// taskIDs keeps the names that are task ids (a marker is named by its
// task; a temporary file on its way to being one is not).
func taskIDs(names []string) []string {
	var ids []string
	for _, n := range names {
		if task.ValidateTaskID(n) == nil {
			ids = append(ids, n)
		}
	}
	return ids
}

// add merges c into the change waiting to be delivered.
func (f *feed) add(c Change) {
	if len(c.IDs) == 0 && !c.All && c.Err == nil {
		return
	}
	if f.pendingIDs == nil {
		f.pendingIDs = map[string]bool{}
	}
	for _, id := range c.IDs {
		if !f.pendingIDs[id] {
			f.pendingIDs[id] = true
			f.pending.IDs = append(f.pending.IDs, id)
		}
	}
	slices.Sort(f.pending.IDs)
	f.pending.All = f.pending.All || c.All
	if c.Err != nil {
		f.pending.Err = c.Err // the latest: an older one was about the same sweep or read
	}
	f.hasPending = true
}
