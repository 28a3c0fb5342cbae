package approvalspane

import (
	"context"
	"errors"
	"fmt"
	"sort"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/safetext"
)

// decidedLimit is how many decided tasks the history keeps.
const decidedLimit = 100

type (
	listMsg struct {
		gen     int
		list    []approval.Record
		decided []approval.Record
		gone    []approval.Record // were pending at the last reload, are not now
		err     error
	}
	// tasksMsg answers a reload of some tasks: the records of ids (those
	// with no record are missing from recs).
	tasksMsg struct {
		ids  []string
		recs []approval.Record
		err  error
	}
	// changeMsg is the queue's change (closed: the feed ended, nothing
	// more comes).
	changeMsg struct {
		c      approval.Change
		closed bool
	}
	tickMsg struct{}
)

// resyncTicks is how many ticks pass between full reloads: a safety net
// under the queue's feed (a change it did not report, a record repaired by
// another process without an audit entry); everything else reloads only
// the tasks that changed. Five minutes: a full reload of 1,000 pending
// tasks costs about 0.17 s of CPU, which once a minute was a third of the
// idle pane's cost; the task on screen is read again every few seconds
// anyway, and a decision is checked against the stored request whatever
// the list shows.
const resyncTicks = 300

// maxWaiting bounds the tasks waiting for their record: names that never
// become tasks are not kept forever.
const maxWaiting = 1024

// work is the reloading asked for while one was in flight.
type work struct {
	full bool
	ids  map[string]bool
	err  error // the feed's, shown with the next reload's
}

func (w work) empty() bool { return !w.full && len(w.ids) == 0 && w.err == nil }

// loader is the pane's reloading: one reload in flight at most, and what
// was asked for meanwhile merged to run next.
type loader struct {
	gen     int  // the full reload the list on screen came from
	loading bool // a reload is in flight
	work    work // what to reload when it is done
	ticks   int  // ticks since the last full reload
	// waiting are tasks named before their record could be read (a
	// submission under way): read again with the next change.
	waiting map[string]bool
	reloads int // reloads of any kind, for tests that count them
	// changes is the queue's feed (nil: not followed, or ended).
	changes <-chan approval.Change
}

// follow starts following the queue's changes. Without a feed the pane
// still lists everything at its start, on ctrl+r and every resyncTicks.
func (p *Pane) follow() tea.Cmd {
	ch, err := p.o.Queue.Changes(p.bg.context())
	if err != nil {
		return nil
	}
	p.load.changes = ch
	return p.waitChange()
}

// waitChange waits for the feed's next change (or the pane's end).
func (p *Pane) waitChange() tea.Cmd {
	ch := p.load.changes
	if ch == nil {
		return nil
	}
	return p.bg.run(func(ctx context.Context) tea.Msg {
		select {
		case c, open := <-ch:
			return changeMsg{c: c, closed: !open}
		case <-ctx.Done():
			return nil
		}
	})
}

// updateLoad handles the loader's messages: reloads answered, and changes
// that ask for one.
func (p *Pane) updateLoad(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case listMsg:
		p.load.loading = false
		p.load.waiting = nil
		return tea.Batch(p.applyList(msg), p.kick())
	case tasksMsg:
		p.load.loading = false
		return tea.Batch(p.applyTasks(msg), p.kick())
	case changeMsg:
		if msg.closed {
			return nil
		}
		// one waiter on the feed: the next change is waited for once this
		// one is handled
		next := p.waitChange()
		if msg.c.Err != nil {
			p.load.work.err = msg.c.Err
		}
		if msg.c.All {
			return tea.Batch(next, p.requestReload())
		}
		return tea.Batch(next, p.requestTasks(msg.c.IDs...))
	}
	return nil
}

// requestReload asks for a full reload (every open task and the decided
// list read). Reloads never run two at a time and never
// pile up behind a slow disk or device: what is asked for meanwhile is
// merged and runs next.
func (p *Pane) requestReload() tea.Cmd {
	p.load.work.full = true
	return p.kick()
}

// requestTasks asks for a reload of these tasks only.
func (p *Pane) requestTasks(ids ...string) tea.Cmd {
	if p.load.work.ids == nil {
		p.load.work.ids = map[string]bool{}
	}
	for _, id := range ids {
		p.load.work.ids[id] = true
	}
	return p.kick()
}

// kick starts the reload asked for, unless one is in flight.
func (p *Pane) kick() tea.Cmd {
	l := &p.load
	if l.loading || l.work.empty() {
		return nil
	}
	w := l.work
	l.work = work{}
	l.loading = true
	l.reloads++
	if w.full {
		l.ticks = 0
		return p.reload(w.err)
	}
	// a task named before its record existed has one by now, or the
	// change that names it again is on its way
	ids := make([]string, 0, len(w.ids)+len(l.waiting))
	for id := range w.ids {
		ids = append(ids, id)
	}
	for id := range l.waiting {
		if !w.ids[id] {
			ids = append(ids, id)
		}
	}
	return p.reloadSome(ids, w.err)
}

// reload lists pending and decided tasks off the UI goroutine (the engine
// reads only open tasks and the tail of the decided list), and what became
// of the tasks that left the queue. feedErr is the feed's, shown with it.
func (p *Pane) reload(feedErr error) tea.Cmd {
	p.load.gen++
	gen, q := p.load.gen, p.o.Queue
	before := make([]string, len(p.queue.list))
	for i, r := range p.queue.list {
		before[i] = r.TaskID
	}
	return p.bg.run(func(context.Context) tea.Msg {
		list, lerr := q.Pending()
		decided, derr := q.Decided(decidedLimit)
		msg := listMsg{gen: gen, list: list, decided: decided, err: errors.Join(feedErr, lerr, derr)}
		still := map[string]bool{}
		for _, r := range list {
			still[r.TaskID] = true
		}
		for _, id := range before {
			if !still[id] {
				if r, err := q.Get(id); err == nil {
					msg.gone = append(msg.gone, r)
				}
			}
		}
		return msg
	})
}

// reloadSome reads the records of ids off the UI goroutine.
func (p *Pane) reloadSome(ids []string, feedErr error) tea.Cmd {
	q := p.o.Queue
	return p.bg.run(func(context.Context) tea.Msg {
		return tasksMsg{ids: ids, recs: q.Tasks(ids), err: feedErr}
	})
}

// onTick repaints the countdowns (the root redraws after every message)
// and does only what time itself makes due: tasks past their deadline are
// reloaded (the engine expires them), the selected preview is re-read every
// few ticks (the device's state in its effect), the decided task's result
// is re-read while it is shown (a result edited after it was read does not
// stay "signed"), and now and then everything is reloaded.
func (p *Pane) onTick() tea.Cmd {
	now := p.o.Now()
	var cmds []tea.Cmd
	var due []string
	for _, r := range p.queue.list {
		if r.State == approval.Pending && !now.Before(deadlineAt(r)) {
			due = append(due, r.TaskID)
		}
	}
	if len(due) > 0 {
		cmds = append(cmds, p.requestTasks(due...))
	}
	p.load.ticks++
	if p.load.ticks >= resyncTicks {
		cmds = append(cmds, p.requestReload())
	}
	p.queue.viewAge++
	if p.queue.selID != "" && !p.decided.shown && p.queue.viewAge >= 5 {
		p.queue.viewAge = 0
		cmds = append(cmds, p.loadView(p.queue.selID))
	}
	if p.decided.shown && p.decided.selID != "" {
		cmds = append(cmds, p.loadResult(p.decided.selID))
	}
	cmds = append(cmds, p.announce(nil))
	return tea.Batch(cmds...)
}

// applyTasks folds a reload of some tasks into the list: a pending (or
// damaged) task is added or updated, any other leaves the queue (and, when
// final, heads the decided list), and a task with no record yet waits for
// the next change. The rest goes through applyList, like a full reload.
func (p *Pane) applyTasks(msg tasksMsg) tea.Cmd {
	got := make(map[string]approval.Record, len(msg.recs))
	for _, r := range msg.recs {
		got[r.TaskID] = r
	}
	listed := make(map[string]int, len(p.queue.list))
	for i, r := range p.queue.list {
		listed[r.TaskID] = i
	}
	drop := map[string]bool{}
	var added, gone, finished []approval.Record
	list := append([]approval.Record(nil), p.queue.list...)
	seen := make(map[string]bool, len(msg.ids))
	for _, id := range msg.ids {
		if seen[id] {
			continue // named by a marker and by the log alike
		}
		seen[id] = true
		r, ok := got[id]
		i, was := listed[id]
		switch {
		case !ok:
			if was {
				drop[id] = true // its record went: nothing to decide any more
			} else {
				p.load.wait(id)
			}
			continue
		case r.State == approval.Pending || r.State == approval.Damaged:
			if was {
				list[i] = r
			} else {
				added = append(added, r)
				listed[id] = -1
			}
		default:
			if was && !drop[id] {
				drop[id] = true
				gone = append(gone, r)
			}
			if r.State.Final() {
				finished = append(finished, r)
			}
		}
		delete(p.load.waiting, id)
	}
	out := list[:0]
	for _, r := range list {
		if !drop[r.TaskID] {
			out = append(out, r)
		}
	}
	out = append(out, added...)
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].SubmittedAt.Equal(out[j].SubmittedAt) {
			return out[i].SubmittedAt.Before(out[j].SubmittedAt)
		}
		return out[i].TaskID < out[j].TaskID
	})
	return p.applyList(listMsg{gen: p.load.gen, list: out, decided: p.decided.with(finished), gone: gone, err: msg.err})
}

// wait notes a task named before its record exists, to be read again.
func (l *loader) wait(id string) {
	if len(l.waiting) >= maxWaiting || task.ValidateTaskID(id) != nil {
		return
	}
	if l.waiting == nil {
		l.waiting = map[string]bool{}
	}
	l.waiting[id] = true
}

// applyList shows a reload's lists: the queue keeps its cursor on its task,
// a task that slid under it re-arms the grace, tasks that left without this
// pane deciding are said, a dialog whose task left closes, and arrivals are
// announced.
func (p *Pane) applyList(msg listMsg) tea.Cmd {
	p.listErr = msg.err
	arrived := p.alerts.arrivals(msg.list, p.o.Now())
	old := p.queue.selID
	if p.queue.setList(msg.list) {
		p.dialogs.grace.arm(p.o.Now())
	}
	p.batch.keep(msg.list) // a task that left the queue is no longer marked
	for _, r := range msg.gone {
		if r.TaskID != p.lastDecided && r.TaskID != p.deciding && !p.batch.mine[r.TaskID] {
			p.notice = goneNotice(r)
		}
	}
	// a dialog whose task was decided elsewhere closes itself
	if id := p.dialogs.task(); id != "" && indexOf(p.queue.list, id) < 0 {
		p.dialogs.close()
		if p.notice == "" {
			p.notice = fmt.Sprintf("%s was decided elsewhere", safetext.Line(id))
		}
	}
	var cmds []tea.Cmd
	// the preview (and the device state in its effect) is re-read when the
	// selection changes, and every few ticks (onTick)
	if sel := p.queue.selID; sel != "" && (sel != old || p.queue.view == nil) {
		p.queue.viewAge = 0
		cmds = append(cmds, p.loadView(sel))
	}
	cmds = append(cmds, p.applyDecided(msg.decided))
	cmds = append(cmds, p.announce(arrived))
	return tea.Batch(cmds...)
}

// goneNotice says what became of a task that left the queue without this
// pane deciding it.
func goneNotice(r approval.Record) string {
	id := safetext.Line(r.TaskID)
	if r.State == approval.Expired {
		code := "APPROVAL_TIMEOUT"
		if r.Error != nil && r.Error.Code != "" {
			code = safetext.Line(string(r.Error.Code)) // LEASE_EXPIRED when the lease ran out first
		}
		return fmt.Sprintf("%s expired without a decision (%s)", id, code)
	}
	by := r.DecidedBy
	if by == "" {
		by = "another window"
	}
	n := fmt.Sprintf("%s was decided elsewhere: %s by %s", id, outcomeWord(r.State), safetext.Line(by))
	if r.DecidedVia != "" {
		n += " via " + safetext.Line(r.DecidedVia)
	}
	return n
}
