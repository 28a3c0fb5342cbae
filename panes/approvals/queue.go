package approvalspane

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/panes"
)

// queueList is the pending tasks, the cursor over them and the selected
// task's preview: what a decision acts on.
type queueList struct {
	list []approval.Record
	// cur is the list's cursor and top; selID is the task under it, the
	// identity the gate follows: after a reload the cursor is put back on
	// it, and a different task under the cursor re-arms the grace.
	cur   panes.List
	selID string
	// tall is the selected row's height when it wraps (a long id shown
	// whole), for the list's scrolling; zero: one line.
	tall tallRow

	view    *approval.View
	viewErr error
	preview panes.Viewport // the selected task's preview
	viewAge int            // ticks since the preview was read
	cache   previewCache
	// read is the task and preview hash whose preview has been on screen
	// down to its last line at least once: only that one may be approved.
	// below is how many lines of the preview were under the fold at the
	// last render without a prompt (what the refusal says is left).
	read  readMark
	below int
}

// readMark names a preview by its task and its hash.
type readMark struct{ id, hash string }

// readToEnd reports whether the selected task's preview, as it is now, has
// been shown to its end.
func (q *queueList) readToEnd() bool {
	return q.view != nil && q.read == readMark{q.selID, q.view.BindingHash}
}

type viewMsg struct {
	gen  int
	id   string
	view approval.View
	err  error
}

func (q *queueList) init() {
	q.cur = panes.List{Len: func() int { return len(q.list) }, Height: q.height}
}

// setList takes a reload's pending tasks: the cursor follows its task
// wherever tasks arrived or left around it, and when its task left it stays
// where it was, on a neighbour. changed: another task is under it now (its
// preview is dropped, to be read again).
func (q *queueList) setList(list []approval.Record) (changed bool) {
	old := q.selID
	q.list = list
	if i := indexOf(q.list, old); i >= 0 {
		q.cur.Follow(i)
	}
	q.selID = ""
	if len(q.list) > 0 {
		q.selID = q.list[q.cur.Cursor()].TaskID
	}
	if q.selID == old {
		return false
	}
	q.preview.Top()
	q.view, q.viewErr = nil, nil
	return true
}

// setView shows a freshly read preview of the selected task; changed: it
// is of another request than the one on screen (its hash differs).
func (q *queueList) setView(v approval.View, err error) (changed bool) {
	if err != nil {
		q.view, q.viewErr = nil, err
		return false
	}
	changed = q.view != nil && q.view.BindingHash != v.BindingHash
	q.view, q.viewErr = &v, nil
	return changed
}

// selected is the task under the cursor; ok only when it is the task the
// pane follows (selID).
func (q *queueList) selected() (approval.Record, bool) {
	if len(q.list) == 0 {
		return approval.Record{}, false
	}
	r := q.list[q.cur.Cursor()]
	return r, r.TaskID == q.selID && r.TaskID != ""
}

// moved runs a move of the cursor; id is the task now under it when that
// is another one (its preview back at the top, to be read), else "".
func (q *queueList) moved(move func()) (id string) {
	move()
	if len(q.list) == 0 {
		return ""
	}
	id = q.list[q.cur.Cursor()].TaskID
	if id == q.selID {
		return ""
	}
	q.selID = id
	q.preview.Top()
	q.view, q.viewErr = nil, nil
	return id
}

// movedQueue runs a move of the pending cursor and, when another task is
// now under it, does what selecting a task does: the preview goes back to
// its top and is read for the new task (a and d wait for it). The person
// moved it, so the grace does not re-arm; a reload moving a task under the
// cursor does (applyList).
func (p *Pane) movedQueue(move func()) tea.Cmd {
	if id := p.queue.moved(move); id != "" {
		p.notice = "" // it spoke of the task the person left
		return p.loadView(id)
	}
	return nil
}

func (p *Pane) loadView(id string) tea.Cmd {
	gen, q := p.load.gen, p.o.Queue
	return p.bg.run(func(ctx context.Context) tea.Msg {
		v, err := q.Preview(ctx, id)
		return viewMsg{gen: gen, id: id, view: v, err: err}
	})
}

// renderQueue lays out the pending tasks above the selected one's preview
// (and an open prompt) under lines, and reports whether everything a key
// acts on is within h.
func (p *Pane) renderQueue(lines []string, w, h int) ([]string, bool) {
	s := p.styles
	q := &p.queue
	now := p.o.Now()
	listH := max(h/3-1, 1)
	sel := q.cur.Cursor()
	top, cells, layout, selRow := p.layoutQueue(listH, w, now)
	used, selEnd := 0, -1
	q.cur.Map.Reset(len(lines), 0, w)
	// the selected row is drawn whole even where it overruns the list's
	// lines: what a key would decide on is never cut
	for i := top; i < top+len(cells) && (used < listH || i == sel); i++ {
		row := selRow
		if i != sel {
			row = p.queueRow(cells[i-top], layout, false, w)
		}
		q.cur.Map.Add(i, len(row))
		lines = append(lines, row...)
		used += len(row)
		if i == sel {
			selEnd = len(lines)
		}
	}
	lines = append(lines, s.Subtle.Render(strings.Repeat("─", max(w, 0))))
	legible := selEnd > 0 && selEnd <= h
	detailH := max(h-len(lines), 0)
	var detail []string
	if p.dialogs.summary != nil {
		// the summary takes the preview's place, whole: nothing it would
		// approve is off screen
		sum := p.summaryLines(w)
		return append(lines, sum...), legible && len(sum) <= detailH
	}
	pvTop := 0
	switch {
	case q.viewErr != nil:
		detail = panes.Wrap(s.Err.Render("cannot preview: "+p.safe(q.viewErr.Error())), w)
	case q.view == nil:
		detail = []string{s.Muted.Render("loading preview…")}
	default:
		detail, pvTop = p.cachedPreview(w)
	}
	need := min(max(previewTop, pvTop), len(detail))
	if dlg := p.dialogLines(w); len(dlg) > 0 {
		// the dialog sits at the bottom, under the top of the preview
		keep := max(detailH-len(dlg), 0)
		legible = legible && keep >= need && len(dlg) <= detailH
		detail = append(append([]string(nil), q.preview.Window(detail, keep)...), dlg...)
	} else {
		legible = legible && detailH >= need
		full := len(detail)
		// a copy: the last line may become the "more below" hint, and
		// detail may be the cached preview
		detail = append([]string(nil), q.preview.Window(detail, detailH)...)
		q.below = 0
		if from := q.preview.Offset(); detailH > 1 && len(detail) == detailH && from+detailH < full {
			q.below = full - from - detailH + 1
			detail[detailH-1] = s.Muted.Render(fmt.Sprintf("↓ more below (%d lines) — pgdn/J to scroll", q.below))
		} else if legible && q.view != nil && q.viewErr == nil && pvTop > 0 {
			// the preview's last line is on screen: this request has been seen whole
			q.read = readMark{q.selID, q.view.BindingHash}
		}
	}
	return append(lines, detail...), legible
}

// tallRow is the selected queue row's height when it wraps.
type tallRow struct {
	id    string
	lines int
}

// height is how many lines row i takes: one, but the selected row wraps
// where a column would cut it (measured by layoutQueue).
func (q *queueList) height(i int) int {
	if q.tall.lines > 1 && i >= 0 && i < len(q.list) && q.list[i].TaskID == q.tall.id {
		return q.tall.lines
	}
	return 1
}

// layoutQueue fixes the queue's top for a list of listH lines, kept from
// the last frame as far as the selected row stays in view, and lays out
// the rows from there, the selected one apart. The selected row's height
// depends on the widths of the rows shown with it: the height it had last
// frame is assumed, and when the row comes out otherwise the top is fixed
// again with its real height (once more at most: the selected row is drawn
// whole whatever the rest does).
func (p *Pane) layoutQueue(listH, w int, now time.Time) (top int, cells []rowCells, layout rowLayout, selRow []string) {
	q := &p.queue
	sel := q.cur.Cursor()
	for range 2 {
		top = q.cur.Scroll(listH)
		cells, layout = queueWindow(q.list, top, sel, listH, w, now)
		selRow = p.queueRow(cells[sel-top], layout, true, w)
		if len(selRow) == q.height(sel) {
			break
		}
		q.tall = tallRow{}
		if len(selRow) > 1 {
			q.tall = tallRow{id: q.list[sel].TaskID, lines: len(selRow)}
		}
	}
	return top, cells, layout, selRow
}

// queueWindow lays out the rows from top that can be on screen, through
// the selected one: a frame costs what it shows, not the length of the
// queue (1,000 pending tasks, repainted every second).
func queueWindow(list []approval.Record, top, sel, listH, w int, now time.Time) ([]rowCells, rowLayout) {
	end := min(max(top+listH, sel+1), len(list))
	cells := make([]rowCells, end-top)
	for i := top; i < end; i++ {
		cells[i-top] = cellsOf(list[i], now)
	}
	return cells, layoutRows(cells, w)
}

// previewCache keeps the laid-out preview between frames: the root asks
// for a render on every key (Legible) and every frame, and the preview only
// changes with the view, the width, the theme or the deadline's text (the
// only part the clock moves).
type previewCache struct {
	view  *approval.View
	w     int
	dl    string
	lines []string
	top   int // the warnings and the request line: lines[:top]
}

func (p *Pane) cachedPreview(w int) ([]string, int) {
	v := p.queue.view
	dl := deadlineText(v.Record, p.o.Now(), false)
	c := &p.queue.cache
	if c.view != v || c.w != w || c.dl != dl || c.lines == nil {
		lines, top := p.previewLines(*v, w)
		*c = previewCache{view: v, w: w, dl: dl, lines: lines, top: top}
	}
	return c.lines, c.top
}
