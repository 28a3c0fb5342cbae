package approvalspane

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// decidedList is the decided tasks ("v"), newest first, the cursor over
// them and the selected one's signed result.
type decidedList struct {
	shown bool // the pane shows this list instead of the queue
	list  []approval.Record
	cur   panes.List // the list's cursor and top
	selID string     // the task under it
	// away is whether the person moved the cursor off the newest task:
	// until they do, the cursor stays on the newest as decisions arrive
	away bool

	result    *task.Result
	resultID  string
	resultErr error
	resultBad error          // why result's signature does not verify
	view      panes.Viewport // the selected task's result
}

type resultMsg struct {
	id  string
	res *task.Result
	err error
	bad error // the signature does not verify with ResultKey
}

func (d *decidedList) init() {
	d.cur = panes.List{Len: func() int { return len(d.list) }}
}

// setList takes a reload's decided tasks and keeps the cursor on the same
// task; changed: another task is under it now (its result is dropped).
func (d *decidedList) setList(list []approval.Record) (changed bool) {
	d.list = list
	old := d.selID
	if i := indexOf(list, old); i >= 0 && d.away {
		d.cur.Follow(i) // newly decided tasks arrive at the head, above it
	} else if !d.away {
		d.cur.Reset() // on the newest, which is what arrives
	}
	d.selID = ""
	if len(list) > 0 {
		d.selID = list[d.cur.Cursor()].TaskID
	}
	if d.selID == old {
		return false
	}
	d.forget()
	return true
}

// open shows the list on its newest task, where it opens whatever the
// cursor was left on last time; id is that task when it was not selected.
func (d *decidedList) open() (id string) {
	d.shown, d.away = true, false
	return d.moved(d.cur.Reset)
}

// forget drops the result on screen: another task is selected.
func (d *decidedList) forget() {
	d.view.Top()
	d.result, d.resultErr, d.resultBad = nil, nil, nil
}

// moved runs a move of the cursor; id is the task now under it when that
// is another one, else "".
func (d *decidedList) moved(move func()) (id string) {
	move()
	if len(d.list) == 0 {
		return ""
	}
	d.away = d.cur.Cursor() != 0
	id = d.list[d.cur.Cursor()].TaskID
	if id == d.selID {
		return ""
	}
	d.selID = id
	d.forget()
	return id
}

// takeResult shows a result read for the task still selected.
func (d *decidedList) takeResult(msg resultMsg) {
	if msg.id == d.selID {
		d.result, d.resultID, d.resultErr, d.resultBad = msg.res, msg.id, msg.err, msg.bad
	}
}

// with is the decided list with these newly final tasks at its head
// (newest first, each once, at most decidedLimit).
func (d *decidedList) with(finished []approval.Record) []approval.Record {
	if len(finished) == 0 {
		return d.list
	}
	sort.SliceStable(finished, func(i, j int) bool { return finished[i].LastChange().After(finished[j].LastChange()) })
	fresh := map[string]bool{}
	for _, r := range finished {
		fresh[r.TaskID] = true
	}
	out := append([]approval.Record(nil), finished...)
	for _, r := range d.list {
		if !fresh[r.TaskID] {
			out = append(out, r)
		}
	}
	if len(out) > decidedLimit {
		out = out[:decidedLimit]
	}
	return out
}

// applyDecided takes the decided tasks from a reload, keeps the selection on
// the same task, and reads the selected one's signed result when it is not
// on screen yet.
func (p *Pane) applyDecided(list []approval.Record) tea.Cmd {
	p.decided.setList(list)
	return p.wantResult()
}

func (p *Pane) wantResult() tea.Cmd {
	d := &p.decided
	// while the decided list is shown the result is read again on every
	// reload: a result file edited after it was read does not stay "signed"
	if d.selID == "" || (d.resultID == d.selID && d.result != nil && !d.shown) {
		return nil
	}
	return p.loadResult(d.selID)
}

// movedDecided runs a move of the decided list's cursor and, when another
// task is now under it, reads that task's result.
func (p *Pane) movedDecided(move func()) tea.Cmd {
	if id := p.decided.moved(move); id != "" {
		p.notice = "" // it spoke of the task the person left
		return p.loadResult(id)
	}
	return nil
}

func (p *Pane) loadResult(id string) tea.Cmd {
	q, pub := p.o.Queue, p.o.ResultKey
	return p.bg.run(func(context.Context) tea.Msg {
		res, err := q.Result(id)
		msg := resultMsg{id: id, res: res, err: err}
		if err == nil && res != nil && pub != nil {
			msg.bad = task.Verify(res, pub)
		}
		return msg
	})
}

// decider is who decided and through which surface, as stored: callers show
// it through safetext.
func decider(r approval.Record) string {
	if r.DecidedBy == "" {
		if r.State == approval.Expired {
			return "nobody (timed out)"
		}
		return "—"
	}
	s := r.Decider()
	if r.DecidedVia != "" && r.DecidedVia != approval.ViaRule {
		s += " via " + r.DecidedVia
	}
	return s
}

func (p *Pane) renderDecided(w, h int) ([]string, bool) {
	s := p.styles
	d := &p.decided
	lines := []string{s.Heading.Render(fmt.Sprintf("Decided tasks (%d)", len(d.list))) + s.Muted.Render("  v: pending")}
	lines = append(lines, p.noticeLines(w)...)
	if p.listErr != nil {
		lines = append(lines, panes.Wrap(s.Err.Render("queue error: ")+p.safe(p.listErr.Error()), w)...)
	}
	if len(d.list) == 0 {
		d.cur.Map.Reset(0, 0, 0)
		lines = append(lines, s.Muted.Render("no decided tasks yet"))
		return lines, true
	}
	now := p.o.Now()
	idW, outW := 0, 0
	for _, r := range d.list {
		idW = max(idW, lipgloss.Width(safetext.Line(r.TaskID)))
		outW = max(outW, len(outcomeWord(r.State)))
	}
	idW = min(idW, 40)
	listH := max(h/3-1, 1)
	sel := d.cur.Cursor()
	selAt := -1
	d.cur.Map.Reset(len(lines), 0, w)
	rows := d.cur.Render(listH, func(i int, selected bool) []string {
		r := d.list[i]
		word := outcomeWord(r.State)
		st := s.Success
		switch r.State {
		case approval.Failed, approval.Tampered, approval.Damaged:
			st = s.Err
		case approval.Denied, approval.Expired:
			st = s.Warning
		}
		cursor := "  "
		if selected {
			cursor = s.Cursor.Render("▸ ")
		}
		line := cursor + panes.Fit(p.safe(r.TaskID), idW) + " " + st.Render(panes.Fit(word, outW)) + " " +
			elapsed(now.Sub(r.LastChange())) + " ago  " + p.safe(decider(r))
		if selected {
			return []string{panes.SelectRow(line, w, s.Selected)}
		}
		return []string{line}
	})
	if at := sel - d.cur.Top(); at >= 0 && at < len(rows) {
		selAt = len(lines) + at // one line a row
	}
	lines = append(lines, rows...)
	lines = append(lines, s.Subtle.Render(strings.Repeat("─", max(w, 0))))
	detail := p.decidedLines(d.list[sel], w)
	detailH := max(h-len(lines), 0)
	lines = append(lines, d.view.Window(detail, detailH)...)
	return lines, selAt >= 0 && selAt < h
}

// decidedLines are a decided task's facts and its signed result — the same
// facts `vigil result ID` prints.
func (p *Pane) decidedLines(r approval.Record, w int) []string {
	s := p.styles
	d := &p.decided
	var out []string
	add := func(label string, parts ...part) {
		lines, _ := p.field(w, fmt.Sprintf("%-9s", label), s.Heading, parts...)
		out = append(out, lines...)
	}
	outcome := []part{ours(outcomeWord(r.State))}
	switch {
	case r.State == approval.Damaged:
		outcome = append(outcome, ours(" — "), theirs(r.Damage))
	case r.Error != nil:
		outcome = append(outcome, ours(" — "), theirs(string(r.Error.Code)), ours(": "), theirs(r.Error.Message))
	}
	add("outcome", outcome...)
	add("task", theirs(r.TaskID), ours(" "), theirs(r.CapabilityID), ours(" on "), theirs(r.Device),
		ours(" · agent "), theirs(r.Agent), ours(" · jti "), theirs(r.TokenJTI))
	dec := []part{theirs(decider(r))}
	if r.DecidedAt != nil {
		dec = append(dec, ours(" at "+r.DecidedAt.UTC().Format(time.RFC3339)))
	}
	add("decided", dec...)
	if r.Reason != "" {
		add("reason", theirs(r.Reason))
	}
	if r.FinishedAt != nil {
		add("finished", ours(r.FinishedAt.UTC().Format(time.RFC3339)))
	}
	if r.PreviewHash != "" {
		add("preview", theirs(r.PreviewHash))
	}
	switch {
	case d.resultID != r.TaskID && d.result == nil && d.resultErr == nil:
		add("result", ours("loading…"))
	case errors.Is(d.resultErr, task.ErrNotFound):
		add("result", ours("none stored"))
	case d.resultErr != nil:
		add("result", ours("cannot read: "), theirs(d.resultErr.Error()))
	case d.result != nil:
		res := d.result
		line := []part{theirs(res.Status), ours(" · executed_at "), theirs(res.ExecutedAt)}
		switch sig := res.Signature; {
		case d.resultBad != nil:
			line = append(line, ours(" · NOT VERIFIED: "), theirs(d.resultBad.Error()))
		case sig != nil && p.o.ResultKey == nil && p.o.Unchecked != "":
			line = append(line, ours(" · NOT CHECKED: "+p.o.Unchecked+" (key "), theirs(sig.KeyID), ours(")"))
		case sig != nil:
			line = append(line, ours(" · signed "), theirs(sig.Alg), ours(" key "), theirs(sig.KeyID))
		default:
			line = append(line, ours(" · unsigned"))
		}
		if d.resultBad != nil {
			out = append(out, panes.Wrap(s.Err.Render("✗ the stored result's signature does not verify: it was changed after it was signed, or signed by another key"), w)...)
		}
		add("result", line...)
		if res.Error != nil {
			add("error", theirs(string(res.Error.Code)), ours(": "), theirs(res.Error.Message))
		}
		if len(res.Output) > 0 && string(res.Output) != "{}" {
			out := res.Output
			var c bytes.Buffer
			if json.Compact(&c, res.Output) == nil {
				out = c.Bytes() // one line; the stored bytes are indented
			}
			add("output", theirs(string(out)))
		}
		if res.ContentHashBefore != "" || res.ContentHashAfter != "" {
			add("device", ours("before "), theirs(res.ContentHashBefore), ours(" · after "), theirs(res.ContentHashAfter))
		}
		if res.RequestHash != "" {
			add("request", theirs(res.RequestHash))
		}
	}
	return out
}
