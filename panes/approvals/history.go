package approvalspane

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/task"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// applyDecided takes the decided tasks from a reload, keeps the selection on
// the same task, and reads the selected one's signed result when it is not
// on screen yet.
func (p *Pane) applyDecided(list []approval.Record) tea.Cmd {
	p.decided = list
	old := p.hselID
	if i := indexOf(list, old); i >= 0 {
		p.done.Follow(i) // newly decided tasks arrive at the head, above it
	}
	p.hselID = ""
	if len(list) > 0 {
		p.hselID = list[p.done.Cursor()].TaskID
	}
	if p.hselID != old {
		p.resultView.Top()
		p.result, p.resultErr, p.resultBad = nil, nil, nil
	}
	return p.wantResult()
}

func (p *Pane) wantResult() tea.Cmd {
	// while the decided list is shown the result is read again on every
	// reload: a result file edited after it was read does not stay "signed"
	if p.hselID == "" || (p.resultID == p.hselID && p.result != nil && !p.history) {
		return nil
	}
	return p.loadResult(p.hselID)
}

// movedDecided runs a move of the decided list's cursor and, when another
// task is now under it, reads that task's result.
func (p *Pane) movedDecided(move func()) tea.Cmd {
	move()
	if len(p.decided) == 0 {
		return nil
	}
	id := p.decided[p.done.Cursor()].TaskID
	if id == p.hselID {
		return nil
	}
	p.hselID = id
	p.resultView.Top()
	p.result, p.resultErr, p.resultBad = nil, nil, nil
	return p.loadResult(p.hselID)
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
	s := r.DecidedBy
	if r.DecidedVia != "" {
		s += " via " + r.DecidedVia
	}
	return s
}

func (p *Pane) renderHistory(w, h int) ([]string, bool) {
	s := p.styles
	lines := []string{s.Heading.Render(fmt.Sprintf("Decided tasks (%d)", len(p.decided))) + s.Muted.Render("  v: pending")}
	lines = append(lines, p.noticeLines(w)...)
	if p.listErr != nil {
		lines = append(lines, panes.Wrap(s.Err.Render("queue error: ")+p.safe(p.listErr.Error()), w)...)
	}
	if len(p.decided) == 0 {
		p.done.Map.Reset(0, 0, 0)
		lines = append(lines, s.Muted.Render("no decided tasks yet"))
		return lines, true
	}
	now := p.o.Now()
	idW, outW := 0, 0
	for _, r := range p.decided {
		idW = max(idW, lipgloss.Width(safetext.Line(r.TaskID)))
		outW = max(outW, len(outcomeWord(r.State)))
	}
	idW = min(idW, 40)
	listH := max(h/3-1, 1)
	sel := p.done.Cursor()
	selAt := -1
	p.done.Map.Reset(len(lines), 0, w)
	rows := p.done.Render(listH, func(i int, selected bool) []string {
		r := p.decided[i]
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
	if at := sel - p.done.Top(); at >= 0 && at < len(rows) {
		selAt = len(lines) + at // one line a row
	}
	lines = append(lines, rows...)
	lines = append(lines, s.Subtle.Render(strings.Repeat("─", max(w, 0))))
	detail := p.decidedLines(p.decided[sel], w)
	detailH := max(h-len(lines), 0)
	lines = append(lines, p.resultView.Window(detail, detailH)...)
	return lines, selAt >= 0 && selAt < h
}

// decidedLines are a decided task's facts and its signed result — the same
// facts `vigil result ID` prints.
func (p *Pane) decidedLines(r approval.Record, w int) []string {
	s := p.styles
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
	case p.resultID != r.TaskID && p.result == nil && p.resultErr == nil:
		add("result", ours("loading…"))
	case errors.Is(p.resultErr, task.ErrNotFound):
		add("result", ours("none stored"))
	case p.resultErr != nil:
		add("result", ours("cannot read: "), theirs(p.resultErr.Error()))
	case p.result != nil:
		res := p.result
		line := []part{theirs(res.Status), ours(" · executed_at "), theirs(res.ExecutedAt)}
		switch sig := res.Signature; {
		case p.resultBad != nil:
			line = append(line, ours(" · NOT VERIFIED: "), theirs(p.resultBad.Error()))
		case sig != nil && p.o.ResultKey == nil && p.o.Unchecked != "":
			line = append(line, ours(" · NOT CHECKED: "+p.o.Unchecked+" (key "), theirs(sig.KeyID), ours(")"))
		case sig != nil:
			line = append(line, ours(" · signed "), theirs(sig.Alg), ours(" key "), theirs(sig.KeyID))
		default:
			line = append(line, ours(" · unsigned"))
		}
		if p.resultBad != nil {
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
