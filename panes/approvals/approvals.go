// Package approvals is the Approvals screen: the queue of pending tasks with
// their real deadlines, the masked preview of the selected task's exact
// request, the approve (confirm, default No) and deny (with reason) dialogs,
// and the list of decided tasks with their signed results.
//
// Every string that came from outside — task ids, agent names, jti, device
// ids, previews, effects, errors, reasons — reaches the screen through
// safetext: controls and invisible characters show as marked escapes,
// never as themselves.
package approvalspane

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/notify"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// Options configure the pane.
type Options struct {
	// Queue is this home's queue, followed with fsnotify (TasksDir,
	// InboxDir, AuditPath); nil when the engine could not start or the
	// pane is over another Source.
	Queue *approval.Queue
	// Source is the queue the pane reads and decides on when it is not
	// this home's (the shared queue's operator side); a Follower is told
	// what changed instead of fsnotify. Nil: Queue.
	Source Source
	// Shared, when set, names the shared queue in the pane's heading
	// (already safe to show: no credentials).
	Shared    string
	QueueErr  error  // why there is no queue, shown in place of it
	TasksDir  string // watched for tasks arriving and leaving
	AuditPath string // watched: every decision made elsewhere appends to it
	InboxDir  string // watched for dropped manifests
	Operator  string // operator:<user>
	Now       func() time.Time
	Bell      bool
	// Notify ([notify] terminal) rings the bell and sends an OSC 9 desktop
	// notification when a task arrives and when one is a minute from its
	// deadline (once each); it takes the place of Bell.
	Notify bool
	// Tick is how often countdowns refresh; 0 means every second.
	Tick time.Duration
	// ResultKey is the operator's public key: a decided task's stored
	// result is shown as signed only when its signature verifies with it.
	// Nil: results are shown unchecked.
	ResultKey ed25519.PublicKey
	// Unchecked, with no ResultKey, is said next to a result's signature
	// instead of showing it as signed: the shared queue's results come
	// from another host and this home holds no key to check them with.
	Unchecked string
}

// Via is the surface this pane's decisions are recorded as.
const Via = "tui"

// decidedLimit is how many decided tasks the history keeps.
const decidedLimit = 100

type (
	listMsg struct {
		gen     int
		list    []approval.Record
		decided []approval.Record
		gone    []approval.Record // were pending at the last reload, are not now
		err     error
		// auditEnd is where the audit log ended before the reload read the
		// queue (-1: not read)
		auditEnd int64
	}
	viewMsg struct {
		gen  int
		id   string
		view approval.View
		err  error
	}
	// outcomeMsg is the answer to this pane's own decision.
	outcomeMsg struct {
		id   string
		rec  approval.Record
		res  *task.Result
		view *approval.View // the re-read preview, when it changed
		err  error
	}
	resultMsg struct {
		id  string
		res *task.Result
		err error
		bad error // the signature does not verify with ResultKey
	}
	// tasksMsg answers a reload of some tasks: the records of ids (those
	// with no record are missing from recs).
	tasksMsg struct {
		ids      []string
		recs     []approval.Record
		auditEnd int64 // where the audit log was read to (-1: not read)
		full     bool  // the audit log was replaced or cut: reload everything
		err      error
	}
	// changedMsg says which watched files changed (all: events were lost).
	changedMsg struct {
		watcher int
		names   []string
		all     bool
	}
	tickMsg struct{}
	// followMsg is a Follower's change: the tasks it names (all: reload
	// everything; closed: the source stopped, nothing more comes).
	followMsg struct {
		ids         []string
		all, closed bool
	}
)

// Which watcher is which.
const (
	watchOpen = iota
	watchInbox
	watchAudit
)

// resyncTicks is how many ticks pass between full reloads: a safety net
// under fsnotify (a change it did not report, a record repaired by another
// process without an audit entry); everything else reloads only the tasks
// that changed. Five minutes: a full reload of 1,000 pending tasks costs
// about 0.17 s of CPU, which once a minute was a third of the idle pane's
// cost; the task on screen is read again every few seconds anyway, and a
// decision is checked against the stored request whatever the list shows.
const resyncTicks = 300

// refreshWait bounds a Refresher's full read on a reload.
const refreshWait = 10 * time.Second

// work is the reloading asked for while one was in flight.
type work struct {
	full, sweep, audit bool
	ids                map[string]bool
}

func (w work) empty() bool { return !w.full && !w.sweep && !w.audit && len(w.ids) == 0 }

// Pane is the Approvals screen.
type Pane struct {
	o      Options
	styles *themes.Styles
	km     keymaps

	list    []approval.Record
	listErr error
	gen     int
	// queue is the pending list's cursor and top; selID is the task under
	// it, the identity the gate follows: after a reload the cursor is put
	// back on it, and a different task under the cursor re-arms the grace.
	queue panes.List
	selID string
	// tall is the selected row's height when it wraps (a long id shown
	// whole), for the queue's scrolling; zero: one line.
	tall tallRow

	view    *approval.View
	viewErr error
	preview panes.Viewport // the selected task's preview

	// the decided tasks ("v"), newest first, and the selected one's result
	history    bool
	decided    []approval.Record
	done       panes.List // the decided list's cursor and top
	hselID     string     // the task under it
	result     *task.Result
	resultID   string
	resultErr  error
	resultBad  error          // why p.result's signature does not verify
	resultView panes.Viewport // the decided task's result

	confirm *confirmDialog
	deny    *denyDialog
	notice  string // already safe to show: a decision's outcome, or why a key did nothing
	// grace swallows decision keys after the selection or the request changed
	// under the person, and the keys that answer a dialog after it appeared.
	grace grace
	busy  bool
	// deciding is the task this pane is deciding now: while it executes it is
	// not pending, and that is not news from elsewhere.
	deciding string
	loading  bool // a reload is in flight
	work     work // what to reload when it is done
	ticks    int  // ticks since the last full reload
	viewAge  int  // ticks since the preview was read
	// auditFrom is where the audit log was read to: a change there is read
	// from this offset on, and only the tasks its new entries name reload.
	auditFrom int64
	// waiting are tasks whose marker appeared before their record (a
	// submission under way): read again at the next audit change.
	waiting map[string]bool
	reloads int // reloads of any kind, for tests that count them
	// lastDecided is the task this pane decided last: its leaving the queue
	// is not news.
	lastDecided string
	// legible is whether the last area the root asked about showed
	// everything a key acts on; becoming legible again re-arms the grace.
	legible bool
	// areaW×areaH is the area the root last asked about; 0×0 before.
	areaW, areaH int

	pvCache previewCache
	// frame is the render Legible made, for the View the root asks for
	// right after it in the same frame (a repaint would otherwise lay the
	// pane out twice); it is used once, and any Update or restyle drops it.
	frame renderedFrame

	watchers []*panes.Watcher
	known    map[string]bool
	warned   map[string]bool // tasks announced as a minute from their deadline
}

// New builds the pane.
func New(o Options, styles *themes.Styles) *Pane {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == 0 {
		o.Tick = time.Second
	}
	if o.Source == nil && o.Queue != nil {
		o.Source = o.Queue
	}
	p := &Pane{o: o, styles: styles, legible: true}
	p.queue = panes.List{Len: func() int { return len(p.list) }, Height: p.queueHeight}
	p.done = panes.List{Len: func() int { return len(p.decided) }}
	p.km = p.buildKeymaps()
	return p
}

func (p *Pane) ID() string    { return "approvals" }
func (p *Pane) Title() string { return "Approvals" }
func (p *Pane) SetStyles(s *themes.Styles) {
	p.styles, p.pvCache, p.frame = s, previewCache{}, renderedFrame{}
}
func (p *Pane) Capturing() bool { return p.confirm != nil || p.deny != nil }

// Badge is the number of pending tasks.
func (p *Pane) Badge() string {
	if len(p.list) == 0 {
		return ""
	}
	return fmt.Sprint(len(p.list))
}

// Init loads the queue and starts watching for changes: the index of open
// tasks (a marker per task: which tasks arrived or left), the inbox, and the
// audit log (every decision, wherever it is made, appends to it; its new
// entries name the tasks to reload).
func (p *Pane) Init(ctx context.Context) tea.Cmd {
	if p.o.Source == nil {
		return nil
	}
	cmds := []tea.Cmd{p.requestReload(), p.tick()}
	if _, ok := p.o.Source.(Follower); ok {
		cmds = append(cmds, p.waitFollow())
	}
	if p.o.Queue == nil {
		return tea.Batch(cmds...)
	}
	type watch struct {
		kind      int
		dir, name string
	}
	watches := []watch{{watchOpen, p.o.Queue.OpenTasksDir(), ""}, {watchInbox, filepath.Join(p.o.InboxDir, "new"), ""}}
	if p.o.AuditPath != "" {
		watches = append(watches, watch{watchAudit, filepath.Dir(p.o.AuditPath), filepath.Base(p.o.AuditPath)})
	}
	p.watchers = make([]*panes.Watcher, 3)
	for _, wt := range watches {
		if wt.dir == "" || wt.dir == "." {
			continue
		}
		if w, err := panes.Watch(wt.dir, wt.name); err == nil {
			p.watchers[wt.kind] = w
			cmds = append(cmds, p.waitOn(wt.kind))
		}
	}
	return tea.Batch(cmds...)
}

func (p *Pane) waitOn(kind int) tea.Cmd {
	if kind < 0 || kind >= len(p.watchers) || p.watchers[kind] == nil {
		return nil
	}
	return p.watchers[kind].WaitNames(func(names []string, all bool) tea.Msg {
		return changedMsg{watcher: kind, names: names, all: all}
	})
}

// waitFollow waits for the Follower's next change.
func (p *Pane) waitFollow() tea.Cmd {
	f, ok := p.o.Source.(Follower)
	if !ok {
		return nil
	}
	ch := f.Changes()
	return func() tea.Msg {
		ids, open := <-ch
		return followMsg{ids: ids, all: ids == nil, closed: !open}
	}
}

// Close stops the watchers.
func (p *Pane) Close() {
	for _, w := range p.watchers {
		if w != nil {
			w.Close()
		}
	}
}

func (p *Pane) tick() tea.Cmd {
	return tea.Tick(p.o.Tick, func(time.Time) tea.Msg { return tickMsg{} })
}

// requestReload asks for a full reload (the inbox swept, every open task
// and the decided list read). Reloads never run two at a time and never
// pile up behind a slow disk or device: what is asked for meanwhile is
// merged and runs next.
func (p *Pane) requestReload() tea.Cmd {
	p.work.full = true
	return p.kick()
}

// requestTasks asks for a reload of these tasks only.
func (p *Pane) requestTasks(ids ...string) tea.Cmd {
	if p.work.ids == nil {
		p.work.ids = map[string]bool{}
	}
	for _, id := range ids {
		p.work.ids[id] = true
	}
	return p.kick()
}

// kick starts the reload asked for, unless one is in flight.
func (p *Pane) kick() tea.Cmd {
	if p.loading || p.work.empty() {
		return nil
	}
	w := p.work
	p.work = work{}
	p.loading = true
	p.reloads++
	if w.full {
		p.ticks = 0
		return p.reload()
	}
	ids := make([]string, 0, len(w.ids)+len(p.waiting))
	for id := range w.ids {
		ids = append(ids, id)
	}
	if w.audit {
		// a submission whose marker came before its record has logged its
		// entry by now; the log's new entries name the rest
		for id := range p.waiting {
			if !w.ids[id] {
				ids = append(ids, id)
			}
		}
	}
	return p.reloadSome(ids, w.sweep, w.audit)
}

// reload sweeps the inbox and lists pending and decided tasks off the UI
// goroutine (the engine reads only open tasks and the tail of the decided
// list). It notes where the audit log ended before reading, so changes
// after that are read from there.
func (p *Pane) reload() tea.Cmd {
	p.gen++
	gen, q, logPath := p.gen, p.o.Source, p.o.AuditPath
	before := make([]string, len(p.list))
	for i, r := range p.list {
		before[i] = r.TaskID
	}
	return func() tea.Msg {
		end := int64(-1)
		if logPath != "" {
			if e, err := audit.EndOfCompleteLines(logPath); err == nil {
				end = e
			}
		}
		var err error
		if rf, ok := q.(Refresher); ok {
			ctx, cancel := context.WithTimeout(context.Background(), refreshWait)
			err = rf.Refresh(ctx)
			cancel()
		}
		_, serr := q.SweepInbox(context.Background())
		err = errors.Join(err, serr)
		list, lerr := q.Pending()
		decided, derr := q.Decided(decidedLimit)
		msg := listMsg{gen: gen, list: list, decided: decided, err: errors.Join(err, lerr, derr), auditEnd: end}
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
	}
}

// reloadSome reads the records of ids off the UI goroutine: after sweeping
// the inbox when it changed, and with the tasks named by the audit log's
// entries since auditFrom when it changed.
func (p *Pane) reloadSome(ids []string, sweep, readAudit bool) tea.Cmd {
	q, logPath, from := p.o.Source, p.o.AuditPath, p.auditFrom
	return func() tea.Msg {
		msg := tasksMsg{auditEnd: -1}
		if sweep {
			outs, err := q.SweepInbox(context.Background())
			msg.err = err
			for _, o := range outs {
				if o.TaskID != "" {
					ids = append(ids, o.TaskID)
				}
			}
		}
		if readAudit && logPath != "" {
			named, end, cut, err := changedTasks(logPath, from)
			switch {
			case cut:
				msg.full = true
				return msg
			case err != nil:
				msg.err = errors.Join(msg.err, err)
			default:
				ids = append(ids, named...)
				msg.auditEnd = end
			}
		}
		msg.ids = ids
		msg.recs = q.Tasks(ids)
		return msg
	}
}

// changedTasks reads the audit log from offset from on and returns the task
// ids its entries name, and where it ends. cut: the log is shorter than
// from (replaced or cut), so offsets no longer mean anything.
func changedTasks(path string, from int64) (ids []string, end int64, cut bool, err error) {
	size, err := audit.EndOfCompleteLines(path)
	if err != nil {
		return nil, from, false, err
	}
	if size < from {
		return nil, from, true, nil
	}
	seen := map[string]bool{}
	end, err = audit.Scan(path, from, func(l audit.Line) bool {
		if id := l.Entry.TaskID; l.Err == nil && id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
		return true
	})
	return ids, end, false, err
}

func (p *Pane) loadView(id string) tea.Cmd {
	gen, q := p.gen, p.o.Source
	return func() tea.Msg {
		v, err := q.Preview(context.Background(), id)
		return viewMsg{gen: gen, id: id, view: v, err: err}
	}
}

func (p *Pane) loadResult(id string) tea.Cmd {
	q, pub := p.o.Source, p.o.ResultKey
	return func() tea.Msg {
		res, err := q.Result(id)
		msg := resultMsg{id: id, res: res, err: err}
		if err == nil && res != nil && pub != nil {
			msg.bad = task.Verify(res, pub)
		}
		return msg
	}
}

// Update handles the pane's messages and, when focused, its keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	p.frame = renderedFrame{}
	switch msg := msg.(type) {
	case listMsg:
		p.loading = false
		if msg.auditEnd >= 0 {
			p.auditFrom = msg.auditEnd
		}
		p.waiting = nil
		return tea.Batch(p.applyList(msg), p.kick())
	case tasksMsg:
		p.loading = false
		if msg.full {
			return p.requestReload()
		}
		if msg.auditEnd >= 0 {
			p.auditFrom = msg.auditEnd
		}
		return tea.Batch(p.applyTasks(msg), p.kick())
	case viewMsg:
		if msg.id != p.selID {
			return nil
		}
		p.applyView(msg.view, msg.err)
	case resultMsg:
		if msg.id == p.hselID {
			p.result, p.resultID, p.resultErr, p.resultBad = msg.res, msg.id, msg.err, msg.bad
		}
	case outcomeMsg:
		p.busy, p.deciding, p.lastDecided = false, "", msg.id
		p.notice = p.describeOutcome(msg)
		if msg.view != nil && msg.id == p.selID {
			p.applyView(*msg.view, nil)
		}
		return p.requestTasks(msg.id)
	case followMsg:
		switch {
		case msg.closed:
			return nil
		case msg.all:
			return tea.Batch(p.waitFollow(), p.requestReload())
		}
		return tea.Batch(p.waitFollow(), p.requestTasks(msg.ids...))
	case changedMsg:
		// re-arm only the watcher that fired: one waiter per watcher
		next := p.waitOn(msg.watcher)
		switch {
		case msg.all:
			return tea.Batch(next, p.requestReload())
		case msg.watcher == watchOpen:
			// markers appeared or went: those tasks arrived or left
			return tea.Batch(next, p.requestTasks(msg.names...))
		case msg.watcher == watchInbox:
			p.work.sweep = true
		case msg.watcher == watchAudit:
			p.work.audit = true
		}
		return tea.Batch(next, p.kick())
	case tickMsg:
		return tea.Batch(p.tick(), p.onTick())
	case tea.MouseWheelMsg:
		if p.confirm != nil || p.deny != nil {
			// an open prompt sits under the top of the preview: the wheel
			// neither scrolls the request out from above it nor moves the
			// task it names
			return nil
		}
		return p.wheel(msg)
	case tea.MouseClickMsg:
		if p.confirm != nil || p.deny != nil {
			return nil // the prompt is answered with keys, not by clicking away from it
		}
		if p.history {
			return p.movedDecided(func() { p.done.Click(msg) })
		}
		return p.movedQueue(func() { p.queue.Click(msg) })
	case tea.PasteMsg:
		if p.deny != nil {
			// pasted into the reason as it would show: controls and invisible
			// characters as their escapes, never sent to the terminal or dropped
			p.deny.paste(safetext.Line(msg.Content))
		}
	case tea.KeyPressMsg:
		return p.handleKey(msg)
	}
	return nil
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
	for _, r := range p.list {
		if r.State == approval.Pending && !now.Before(deadlineAt(r)) {
			due = append(due, r.TaskID)
		}
	}
	if len(due) > 0 {
		cmds = append(cmds, p.requestTasks(due...))
	}
	p.ticks++
	if p.ticks >= resyncTicks {
		cmds = append(cmds, p.requestReload())
	}
	p.viewAge++
	if p.selID != "" && !p.history && p.viewAge >= 5 {
		p.viewAge = 0
		cmds = append(cmds, p.loadView(p.selID))
	}
	if p.history && p.hselID != "" {
		cmds = append(cmds, p.loadResult(p.hselID))
	}
	cmds = append(cmds, p.announce(nil))
	return tea.Batch(cmds...)
}

// maxWaiting bounds the markers waiting for their record: names in the
// index folder that never become tasks are not kept forever.
const maxWaiting = 1024

// applyTasks folds a reload of some tasks into the list: a pending (or
// damaged) task is added or updated, any other leaves the queue (and, when
// final, heads the decided list), and a task with no record yet waits for
// the next audit change. The rest goes through applyList, like a full reload.
func (p *Pane) applyTasks(msg tasksMsg) tea.Cmd {
	got := make(map[string]approval.Record, len(msg.recs))
	for _, r := range msg.recs {
		got[r.TaskID] = r
	}
	listed := make(map[string]int, len(p.list))
	for i, r := range p.list {
		listed[r.TaskID] = i
	}
	drop := map[string]bool{}
	var added, gone, finished []approval.Record
	list := append([]approval.Record(nil), p.list...)
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
			} else if len(p.waiting) < maxWaiting && task.ValidateTaskID(id) == nil {
				if p.waiting == nil {
					p.waiting = map[string]bool{}
				}
				p.waiting[id] = true
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
		delete(p.waiting, id)
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
	return p.applyList(listMsg{gen: p.gen, list: out, decided: p.withDecided(finished), gone: gone, err: msg.err, auditEnd: -1})
}

// withDecided is the decided list with these newly final tasks at its head
// (newest first, each once, at most decidedLimit).
func (p *Pane) withDecided(finished []approval.Record) []approval.Record {
	if len(finished) == 0 {
		return p.decided
	}
	sort.SliceStable(finished, func(i, j int) bool { return finished[i].LastChange().After(finished[j].LastChange()) })
	fresh := map[string]bool{}
	for _, r := range finished {
		fresh[r.TaskID] = true
	}
	out := append([]approval.Record(nil), finished...)
	for _, r := range p.decided {
		if !fresh[r.TaskID] {
			out = append(out, r)
		}
	}
	if len(out) > decidedLimit {
		out = out[:decidedLimit]
	}
	return out
}

// applyView shows a freshly read preview. A preview whose hash differs from
// the one on screen is a different request: an open approval closes (it
// named the old hash) and decision keys pause.
func (p *Pane) applyView(v approval.View, err error) {
	if err != nil {
		p.view, p.viewErr = nil, err
		return
	}
	if p.view != nil && p.view.BindingHash != v.BindingHash {
		p.grace.arm(p.o.Now())
		if p.confirm != nil && p.confirm.taskID == v.Record.TaskID {
			p.confirm = nil
			p.notice = safetext.Line(v.Record.TaskID) + ": the request changed while you were looking — review the new preview (nothing was approved)"
		}
	}
	p.view, p.viewErr = &v, nil
}

func (p *Pane) applyList(msg listMsg) tea.Cmd {
	p.listErr = msg.err
	old := p.selID
	var arrived []approval.Record
	if p.known == nil {
		p.known = map[string]bool{}
		for _, r := range msg.list {
			p.known[r.TaskID] = true
		}
	} else {
		for _, r := range msg.list {
			if !p.known[r.TaskID] {
				arrived = append(arrived, r)
				p.known[r.TaskID] = true
			}
		}
	}
	p.list = msg.list
	// the cursor follows its task wherever tasks arrived or left around it;
	// when its task left it stays where it was, on a neighbour
	if i := indexOf(p.list, old); i >= 0 {
		p.queue.Follow(i)
	}
	p.selID = ""
	if len(p.list) > 0 {
		p.selID = p.list[p.queue.Cursor()].TaskID
	}
	var cmds []tea.Cmd
	if p.selID != old {
		p.preview.Top()
		p.view, p.viewErr = nil, nil
		p.grace.arm(p.o.Now())
	}
	// say what became of tasks that left the queue without this pane deciding
	for _, r := range msg.gone {
		if r.TaskID == p.lastDecided || r.TaskID == p.deciding {
			continue
		}
		id := safetext.Line(r.TaskID)
		switch r.State {
		case approval.Expired:
			code := "APPROVAL_TIMEOUT"
			if r.Error != nil && r.Error.Code != "" {
				code = safetext.Line(string(r.Error.Code)) // LEASE_EXPIRED when the lease ran out first
			}
			p.notice = fmt.Sprintf("%s expired without a decision (%s)", id, code)
		default:
			by := r.DecidedBy
			if by == "" {
				by = "another window"
			}
			p.notice = fmt.Sprintf("%s was decided elsewhere: %s by %s", id, outcomeWord(r.State), safetext.Line(by))
			if r.DecidedVia != "" {
				p.notice += " via " + safetext.Line(r.DecidedVia)
			}
		}
	}
	// a dialog whose task was decided elsewhere closes itself
	if id := p.dialogTask(); id != "" && !p.pending(id) {
		p.confirm, p.deny = nil, nil
		if p.notice == "" {
			p.notice = fmt.Sprintf("%s was decided elsewhere", safetext.Line(id))
		}
	}
	// the preview (and the device state in its effect) is re-read when the
	// selection changes, and every few ticks (onTick)
	if p.selID != "" && (p.selID != old || p.view == nil) {
		p.viewAge = 0
		cmds = append(cmds, p.loadView(p.selID))
	}
	cmds = append(cmds, p.applyDecided(msg.decided))
	cmds = append(cmds, p.announce(arrived))
	return tea.Batch(cmds...)
}

// announce tells the person through the terminal that tasks arrived and
// that tasks are a minute from their deadline (each once): the bell and an
// OSC 9 desktop notification with [notify] terminal, else the bell alone
// with [approvals] bell. The text is masked and display-safe (notify.Event).
func (p *Pane) announce(arrived []approval.Record) tea.Cmd {
	now := p.o.Now()
	var out strings.Builder
	if p.o.Notify {
		for _, r := range arrived {
			out.WriteString(notify.Terminal(terminalEvent(notify.Arrived, r, now)))
		}
		for _, r := range p.list {
			at, _ := r.Deadline()
			left := at.Sub(now)
			if r.State != approval.Pending || p.warned[r.TaskID] || left <= 0 || left > notify.ExpiringBefore {
				continue
			}
			if p.warned == nil {
				p.warned = map[string]bool{}
			}
			p.warned[r.TaskID] = true
			out.WriteString(notify.Terminal(terminalEvent(notify.Expiring, r, now)))
		}
	} else if len(arrived) > 0 && p.o.Bell {
		out.WriteString(notify.Bell)
	}
	if out.Len() == 0 {
		return nil
	}
	return tea.Raw(out.String())
}

func terminalEvent(kind string, r approval.Record, now time.Time) notify.Event {
	at, _ := r.Deadline()
	return notify.Event{Kind: kind, TaskID: r.TaskID, Agent: r.Agent, Action: r.CapabilityID, Device: r.Device, ExpiresIn: at.Sub(now)}
}

func (p *Pane) pending(id string) bool {
	for _, r := range p.list {
		if r.TaskID == id {
			return true
		}
	}
	return false
}

func (p *Pane) dialogTask() string {
	switch {
	case p.confirm != nil:
		return p.confirm.taskID
	case p.deny != nil:
		return p.deny.taskID
	}
	return ""
}

// describeOutcome is the notice for this pane's own decision, safe to show.
func (p *Pane) describeOutcome(m outcomeMsg) string {
	id := safetext.Line(m.id)
	var de *approval.DecidedError
	var lost *approval.LostError
	switch {
	case errors.Is(m.err, approval.ErrPreviewChanged):
		return id + ": the request changed since it was shown — review the new preview; nothing was approved"
	case errors.As(m.err, &de):
		return safetext.Line(de.Error())
	case errors.As(m.err, &lost):
		// another operator's decision won the compare-and-set
		return safetext.Line(lost.Error())
	case m.err != nil:
		return id + ": " + safetext.Line(m.err.Error())
	case m.res != nil && m.res.Status == task.StatusSuccess:
		return fmt.Sprintf("%s approved and executed", id)
	case m.res != nil && m.res.Error != nil:
		return fmt.Sprintf("%s %s: %s: %s", id, outcomeWord(m.rec.State), safetext.Line(string(m.res.Error.Code)),
			safetext.Line(m.res.Error.Message))
	}
	return fmt.Sprintf("%s %s", id, outcomeWord(m.rec.State))
}

// approve re-reads the task's preview and sends the approval only if it is
// still the one on screen (the engine checks the hash again under the
// task's lock).
func (p *Pane) approve(id, hash string) tea.Cmd {
	p.busy, p.deciding = true, id
	p.notice = safetext.Line(id) + " executing…"
	q, by := p.o.Source, p.o.Operator
	return func() tea.Msg {
		ctx := context.Background()
		v, err := q.Preview(ctx, id)
		if err != nil {
			return outcomeMsg{id: id, err: err}
		}
		if v.BindingHash != hash {
			return outcomeMsg{id: id, view: &v, err: approval.ErrPreviewChanged}
		}
		rec, res, err := q.Decide(ctx, id, approval.Decision{Approve: true, By: by, PreviewHash: hash, Via: Via})
		if errors.Is(err, approval.ErrPreviewChanged) {
			if nv, verr := q.Preview(ctx, id); verr == nil {
				return outcomeMsg{id: id, view: &nv, err: err}
			}
		}
		return outcomeMsg{id: id, rec: rec, res: res, err: err}
	}
}

func (p *Pane) denyTask(id, reason string) tea.Cmd {
	p.busy, p.deciding = true, id
	q, by := p.o.Source, p.o.Operator
	return func() tea.Msg {
		rec, res, err := q.Decide(context.Background(), id, approval.Decision{Approve: false, By: by, Reason: reason, Via: Via})
		return outcomeMsg{id: id, rec: rec, res: res, err: err}
	}
}

// Legible reports whether an area of w×h shows everything a key in this
// pane acts on: the whole selected row with its deadline, the top of its
// preview and any open prompt. The root drops keys (but quit) otherwise.
// Becoming legible again counts as the prompt appearing: the grace re-arms.
func (p *Pane) Legible(w, h int) bool {
	p.areaW, p.areaH = w, h
	lines, ok := p.render(w, h)
	p.frame = renderedFrame{lines: lines, w: w, h: h, valid: true}
	if ok && !p.legible {
		p.grace.arm(p.o.Now())
	}
	p.legible = ok
	return ok
}

func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	now := p.o.Now()
	if p.confirm != nil || p.deny != nil {
		// in the reason field only enter acts: letters typed at once are kept
		// (they are on screen and act on nothing; dropping them sent the
		// agent the tail of a reason), and they still hold enter back
		if p.grace.swallow(now) && (p.deny == nil || msg.String() == "enter") {
			return nil
		}
	}
	if p.confirm != nil {
		switch in := p.confirm.Update(msg).(type) {
		case Approve:
			p.confirm = nil
			return p.approve(in.TaskID, in.PreviewHash)
		case Close:
			p.confirm = nil
			p.notice = "not approved"
		}
		return nil
	}
	if p.deny != nil {
		switch in := p.deny.Update(msg).(type) {
		case Deny:
			p.deny = nil
			return p.denyTask(in.TaskID, in.Reason)
		case Close:
			p.deny = nil
		}
		return nil
	}
	cmd, _ := p.keymap().Dispatch(msg)
	return cmd
}

// openDecision opens the approve prompt (or the deny dialog) on the
// selected task, or says in the pane why it does not: a task that just
// moved under the cursor is not decided on by a stray key. decisionOff has
// already refused an empty queue and a decision under way.
func (p *Pane) openDecision(msg tea.KeyPressMsg, approve bool) {
	now := p.o.Now()
	verb := "deny"
	if approve {
		verb = "approve"
	}
	r, ok := p.selected()
	switch {
	case !ok:
		// the cursor and its task disagree: never decide on either
		p.notice = "not yet: the task under the cursor just changed"
		return
	case r.State == approval.Damaged:
		p.notice = safetext.Line(r.TaskID) + " is damaged and cannot be decided: " + safetext.Line(r.Damage)
		return
	case r.State == approval.Pending && !now.Before(deadlineAt(r)):
		// its row says "expired"; the next reload takes it off the queue
		p.notice = safetext.Line(p.selID) + " expired: it can no longer be decided"
		return
	case p.grace.swallow(now):
		p.notice = "not yet: the task under the cursor just changed — read it, then press " + msg.String() + " again"
		return
	case p.viewErr != nil:
		p.notice = "cannot " + verb + " what cannot be previewed: " + safetext.Line(p.viewErr.Error())
		return
	case p.view == nil || p.view.Record.TaskID != p.selID:
		p.notice = "not yet: the preview is still loading"
		return
	}
	p.notice = ""
	p.preview.Top() // the prompt sits under the top of the preview
	p.grace.arm(now)
	if approve {
		p.confirm = &confirmDialog{taskID: p.selID, previewHash: p.view.BindingHash}
	} else {
		p.deny = newDenyDialog(p.selID)
	}
	// a prompt appears only where the task, its deadline, the top of
	// its preview and the prompt itself all fit
	if p.areaW > 0 && p.areaH > 0 {
		if _, ok := p.render(p.areaW, p.areaH); !ok {
			p.confirm, p.deny = nil, nil
			p.notice = "the window is too small to show the task with its prompt: enlarge it to " + verb
		}
	}
}

// selected is the task under the pending cursor; ok only when it is the
// task the pane follows (selID).
func (p *Pane) selected() (approval.Record, bool) {
	if len(p.list) == 0 {
		return approval.Record{}, false
	}
	r := p.list[p.queue.Cursor()]
	return r, r.TaskID == p.selID && r.TaskID != ""
}

// movedQueue runs a move of the pending cursor and, when another task is
// now under it, does what selecting a task does: the preview goes back to
// its top and is read for the new task (a and d wait for it). The person
// moved it, so the grace does not re-arm; a reload moving a task under the
// cursor does (applyList).
func (p *Pane) movedQueue(move func()) tea.Cmd {
	move()
	if len(p.list) == 0 {
		return nil
	}
	id := p.list[p.queue.Cursor()].TaskID
	if id == p.selID {
		return nil
	}
	p.selID = id
	p.preview.Top()
	p.view, p.viewErr = nil, nil
	return p.loadView(id)
}

// wheel moves the list under the pointer by a notch, or scrolls the
// preview (the result in the decided list) anywhere else.
func (p *Pane) wheel(msg tea.MouseWheelMsg) tea.Cmd {
	list, view := &p.queue, &p.preview
	if p.history {
		list, view = &p.done, &p.resultView
	}
	if _, over := list.Map.At(msg.X, msg.Y); !over {
		view.Wheel(msg)
		return nil
	}
	if p.history {
		return p.movedDecided(func() { p.done.Wheel(msg) })
	}
	return p.movedQueue(func() { p.queue.Wheel(msg) })
}

// indexOf is where task id is in list, or -1.
func indexOf(list []approval.Record, id string) int {
	if id == "" {
		return -1
	}
	for i, r := range list {
		if r.TaskID == id {
			return i
		}
	}
	return -1
}

// Busy reports a decision being carried out (quitting would interrupt it).
func (p *Pane) Busy() bool { return p.busy }

// ShortHelp is the status bar's keys: the current mode's rows that act now
// (a and d are not offered with nothing pending).
func (p *Pane) ShortHelp() []key.Binding { return p.keymap().Footer() }

// FullHelp is the ? overlay's keys for the current mode, from its rows (the
// pending list's after a prompt's, for what answering it returns to).
func (p *Pane) FullHelp() [][]key.Binding {
	list := p.km.pending
	if p.history {
		list = p.km.decided
	}
	groups := list.HelpGroups()
	if p.confirm != nil || p.deny != nil {
		return append([][]key.Binding{p.keymap().Help()}, groups...)
	}
	return groups
}

// View renders the queue above the selected task's preview, or the decided
// tasks above the selected one's result.
func (p *Pane) View(w, h int) string {
	lines := p.frame.lines
	if !p.frame.valid || p.frame.w != w || p.frame.h != h {
		lines, _ = p.render(w, h)
	}
	p.frame = renderedFrame{}
	return panes.Block(lines, w, h)
}

// renderedFrame is one render of the pane at w×h.
type renderedFrame struct {
	lines []string
	w, h  int
	valid bool
}
