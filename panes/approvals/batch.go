package approvalspane

import (
	"context"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/safetext"
)

// Deciding many at once: space marks the selected pending task, A reads
// the marked tasks' previews and opens a summary (one row each, the hash
// read for it, its warnings), and y in the summary — behind the same
// grace period as the single approve prompt — approves each task that has
// no warning, bound to the hash its row showed. A task that changed or was
// decided meanwhile is reported and the others proceed; the pane then
// shows a line per task.

// batch is the marks and the last batch's report.
type batch struct {
	// marked are the pending tasks marked with space; a task that leaves
	// the pending list loses its mark (applyList).
	marked map[string]bool
	// reading is set while the marked tasks' previews are read for the
	// summary.
	reading bool
	// mine are the tasks the batch under way (or the last one) decides:
	// their leaving the queue is not news from elsewhere.
	mine map[string]bool
	// report is one line per task of the last batch, safe to show.
	report []batchLine
}

// batchLine is a task's line in a batch's report.
type batchLine struct {
	text string
	ok   bool // approved (and executed)
}

// ApproveMarked asks the pane to approve each of Tasks, each with the
// preview hash its summary row showed; Excluded are the report's lines of
// the marked tasks left out (already safe to show).
type ApproveMarked struct {
	Tasks    []Approve
	Excluded []string
}

// summaryRow is one marked task in the summary.
type summaryRow struct {
	rec  approval.Record
	id   string
	hash string // the preview hash read for the summary, what its approval binds to
	host string // the media host, safe to show; "" for none
	// warnings are BatchWarnings; err is why its preview could not be read.
	warnings []string
	err      error
}

// excluded is why the row is not approved with the others, "" when it is.
func (r summaryRow) excluded() string {
	switch {
	case r.err != nil:
		return "cannot be previewed: " + safetext.Line(r.err.Error())
	case r.rec.State != approval.Pending:
		return "not pending (" + safetext.Line(string(r.rec.State)) + ")"
	case len(r.warnings) > 0:
		return "its preview has a warning: approve it alone, after reading it"
	}
	return ""
}

// summaryMsg carries the marked tasks' previews, read for the summary.
type summaryMsg struct{ rows []summaryRow }

// batchDoneMsg is the outcome of a batch: the excluded tasks' lines, then
// each approval's outcome in order.
type batchDoneMsg struct {
	excluded []string
	outcomes []outcomeMsg
}

// isMarked reports whether task id is marked.
func (b *batch) isMarked(id string) bool { return b.marked[id] }

// keep drops the marks of tasks no longer in list.
func (b *batch) keep(list []approval.Record) {
	if len(b.marked) == 0 {
		return
	}
	in := make(map[string]bool, len(list))
	for _, r := range list {
		in[r.TaskID] = true
	}
	for id := range b.marked {
		if !in[id] {
			delete(b.marked, id)
		}
	}
}

// toggleMark marks or unmarks the selected task. A damaged task cannot be
// decided, so it is not marked.
func (p *Pane) toggleMark() {
	r, ok := p.queue.selected()
	switch {
	case !ok:
		p.notice = "not yet: the task under the cursor just changed"
		return
	case r.State == approval.Damaged:
		p.notice = safetext.Line(r.TaskID) + " is damaged and cannot be decided: " + safetext.Line(r.Damage)
		return
	}
	b := &p.batch
	b.report = nil
	if b.marked[r.TaskID] {
		delete(b.marked, r.TaskID)
	} else {
		if b.marked == nil {
			b.marked = map[string]bool{}
		}
		b.marked[r.TaskID] = true
	}
	p.notice = ""
}

// markOff says why space does nothing now, or "": marks are not changed
// under a batch being read or carried out.
func (p *Pane) markOff() string {
	switch {
	case p.busy:
		return "an action is running (" + safetext.Line(p.deciding) + ")"
	case p.batch.reading:
		return "reading the marked tasks' previews"
	case p.queue.selID == "":
		return "nothing is pending"
	}
	return ""
}

// batchOff says why A does nothing now, or "".
func (p *Pane) batchOff() string {
	switch {
	case p.busy:
		return "an action is running (" + safetext.Line(p.deciding) + ")"
	case p.batch.reading:
		return "reading the marked tasks' previews"
	case len(p.batch.marked) == 0:
		return "no task is marked: mark tasks with space first"
	}
	return ""
}

// markedIDs are the marked tasks in the pending list's order.
func (p *Pane) markedIDs() []string {
	var ids []string
	for _, r := range p.queue.list {
		if p.batch.marked[r.TaskID] {
			ids = append(ids, r.TaskID)
		}
	}
	return ids
}

// readSummary reads the marked tasks' previews for the summary, off the UI
// goroutine; the summary opens when they are in (openSummary).
func (p *Pane) readSummary() tea.Cmd {
	if p.refused != "" {
		p.notice = p.refused
		return nil
	}
	ids := p.markedIDs()
	p.batch.reading, p.batch.report = true, nil
	p.notice = fmt.Sprintf("reading the previews of %d marked tasks…", len(ids))
	q := p.o.Queue
	return p.bg.run(func(ctx context.Context) tea.Msg {
		rows := make([]summaryRow, 0, len(ids))
		for _, id := range ids {
			v, err := q.Preview(ctx, id)
			row := summaryRow{rec: v.Record, id: id, hash: v.BindingHash, err: err}
			if err == nil {
				row.host, row.warnings = MediaHost(v), BatchWarnings(v)
			}
			rows = append(rows, row)
		}
		return summaryMsg{rows: rows}
	})
}

// openSummary opens the summary on the previews just read, behind the
// grace period; only where all of it fits (nothing approved is off screen).
func (p *Pane) openSummary(m summaryMsg) {
	p.batch.reading = false
	if p.busy || p.dialogs.open() || p.decided.shown {
		p.notice = "" // another prompt or view took the screen meanwhile: A again
		return
	}
	p.notice = ""
	p.dialogs.openSummary(m.rows, p.o.Now())
	if p.areaW > 0 && p.areaH > 0 {
		if _, ok := p.render(p.areaW, p.areaH); !ok {
			p.dialogs.close()
			p.notice = fmt.Sprintf("the window is too small to show the summary of %d tasks: enlarge it, or mark fewer", len(m.rows))
		}
	}
}

// approveMarked approves each task of in, one after the other, each bound
// to the hash its summary row showed; a task refused (changed, decided
// meanwhile, expired…) is reported and the others proceed.
func (p *Pane) approveMarked(in ApproveMarked) tea.Cmd {
	if len(in.Tasks) == 0 {
		p.batch.report = nil
		for _, l := range in.Excluded {
			p.batch.report = append(p.batch.report, batchLine{text: l})
		}
		p.notice = "nothing approved: every marked task is excluded"
		return nil
	}
	p.batch.mine = map[string]bool{}
	for _, a := range in.Tasks {
		p.batch.mine[a.TaskID] = true
	}
	p.busy, p.deciding = true, fmt.Sprintf("approving %d marked tasks", len(in.Tasks))
	p.notice = p.deciding + "…"
	q, d := p.o.Queue, p.decision(true)
	return p.bg.run(func(ctx context.Context) tea.Msg {
		ctx = context.WithoutCancel(ctx) // a batch under way finishes: each outcome is recorded
		out := batchDoneMsg{excluded: in.Excluded}
		for _, a := range in.Tasks {
			d.PreviewHash = a.PreviewHash
			rec, res, err := q.Decide(ctx, a.TaskID, d)
			out.outcomes = append(out.outcomes, outcomeMsg{id: a.TaskID, rec: rec, res: res, err: err})
		}
		return out
	})
}

// batchOutcome is a task's report line: the single approval's words, and
// "changed" for a request found tampered with since the summary.
func (p *Pane) batchOutcome(m outcomeMsg) batchLine {
	if errors.Is(m.err, approval.ErrTampered) {
		return batchLine{text: safetext.Line(m.id) + ": the stored request changed since the summary (tampered); nothing was approved"}
	}
	ok := m.err == nil && m.res != nil && m.res.Status == task.StatusSuccess
	return batchLine{text: p.describeOutcome(m), ok: ok}
}

// finishBatch shows a batch's report and ends the marking: the excluded
// tasks are approved alone, after reading their previews.
func (p *Pane) finishBatch(m batchDoneMsg) tea.Cmd {
	p.busy, p.deciding = false, ""
	p.batch.report = nil
	for _, l := range m.excluded {
		p.batch.report = append(p.batch.report, batchLine{text: l})
	}
	approved := 0
	ids := make([]string, 0, len(m.outcomes))
	for _, o := range m.outcomes {
		l := p.batchOutcome(o)
		if l.ok {
			approved++
		}
		p.batch.report = append(p.batch.report, l)
		ids = append(ids, o.id)
		if errors.Is(o.err, approval.ErrOperatorKeyRequired) && p.refused == "" {
			p.refused = safetext.Line(o.err.Error())
		}
	}
	p.notice = fmt.Sprintf("approved %d of %d marked tasks", approved, len(m.outcomes)+len(m.excluded))
	p.batch.marked = nil
	if len(ids) > 0 {
		p.lastDecided = ids[len(ids)-1]
	}
	return p.requestTasks(ids...)
}
