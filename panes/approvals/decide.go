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

// outcomeMsg is the answer to this pane's own decision.
type outcomeMsg struct {
	id   string
	rec  approval.Record
	res  *task.Result
	view *approval.View // the re-read preview, when it changed
	err  error
}

// handleKey gives a key to the open prompt, behind the grace period, and
// performs its intent; with none open, to the current mode's rows.
func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if !p.dialogs.open() {
		cmd, ok := p.keymap().Dispatch(msg)
		if !ok && p.refused != "" && (msg.String() == "a" || msg.String() == "d" || msg.String() == "A") {
			// the rows are not offered here: the key says how decisions are made instead
			p.notice = p.refused
		}
		return cmd
	}
	confirming, summing := p.dialogs.confirm != nil, p.dialogs.summary != nil
	switch in := p.dialogs.answer(msg, p.o.Now()).(type) {
	case Approve:
		return p.approve(in.TaskID, in.PreviewHash)
	case Deny:
		return p.denyTask(in.TaskID, in.Reason)
	case ApproveMarked:
		return p.approveMarked(in)
	case LikeThis:
		return p.readLike(in)
	case ApproveLike:
		return p.approveLike(in)
	case RevokeRule:
		return p.revokeRule(in)
	case Close:
		if confirming || summing {
			p.notice = "not approved"
		}
	}
	return nil
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
	q := &p.queue
	r, ok := q.selected()
	switch {
	case p.refused != "":
		p.notice = p.refused // the rows are not offered then; never a prompt that would fail
		return
	case !ok:
		// the cursor and its task disagree: never decide on either
		p.notice = "not yet: the task under the cursor just changed"
		return
	case r.State == approval.Damaged:
		p.notice = safetext.Line(r.TaskID) + " is damaged and cannot be decided: " + safetext.Line(r.Damage)
		return
	case r.State == approval.Pending && !now.Before(deadlineAt(r)):
		// its row says "expired"; the next reload takes it off the queue
		p.notice = safetext.Line(q.selID) + " expired: it can no longer be decided"
		return
	case p.dialogs.grace.swallow(now):
		p.notice = "not yet: the task under the cursor just changed — read it, then press " + msg.String() + " again"
		return
	case q.viewErr != nil:
		p.notice = "cannot " + verb + " what cannot be previewed: " + safetext.Line(q.viewErr.Error())
		return
	case q.view == nil || q.view.Record.TaskID != q.selID:
		p.notice = "not yet: the preview is still loading"
		return
	case approve && p.areaW > 0 && p.areaH > 0 && !q.readToEnd():
		// the request below the fold is part of what is approved; the
		// count is the one shown with the notice taking its lines
		p.notice = unreadNotice(q.below)
		p.render(p.areaW, p.areaH)
		p.notice = unreadNotice(q.below)
		return
	}
	p.notice = ""
	q.preview.Top() // the prompt sits under the top of the preview
	if approve {
		p.dialogs.openConfirm(q.selID, q.view.BindingHash, now)
		p.dialogs.confirm.like = p.likeOffered()
	} else {
		p.dialogs.openDeny(q.selID, now)
	}
	// a prompt appears only where the task, its deadline, the top of
	// its preview and the prompt itself all fit
	if p.areaW > 0 && p.areaH > 0 {
		if _, ok := p.render(p.areaW, p.areaH); !ok {
			p.dialogs.close()
			p.notice = "the window is too small to show the task with its prompt: enlarge it to " + verb
		}
	}
}

// unreadNotice is why a does not open the prompt on a preview not yet
// shown to its end: below lines of it were under the fold.
func unreadNotice(below int) string {
	if below <= 0 {
		return "not yet: the whole request has not been on screen — scroll to its end (pgdn/J), then press a"
	}
	lines := "lines"
	if below == 1 {
		lines = "line"
	}
	return fmt.Sprintf("%d more %s below: scroll to the end (pgdn/J) before approving", below, lines)
}

// approve re-reads the task's preview and sends the approval only if it is
// still the one on screen (the engine checks the hash again under the
// task's lock). A decision once sent is not cancelled with the pane: the
// engine records how it ended, and Close waits for it.
func (p *Pane) approve(id, hash string) tea.Cmd {
	p.busy, p.deciding = true, id
	p.notice = safetext.Line(id) + " executing…"
	q, d := p.o.Queue, p.decision(true)
	d.PreviewHash = hash
	return p.bg.run(func(ctx context.Context) tea.Msg {
		ctx = context.WithoutCancel(ctx)
		v, err := q.Preview(ctx, id)
		if err != nil {
			return outcomeMsg{id: id, err: err}
		}
		if v.BindingHash != hash {
			return outcomeMsg{id: id, view: &v, err: approval.ErrPreviewChanged}
		}
		rec, res, err := q.Decide(ctx, id, d)
		if errors.Is(err, approval.ErrPreviewChanged) {
			if nv, verr := q.Preview(ctx, id); verr == nil {
				return outcomeMsg{id: id, view: &nv, err: err}
			}
		}
		return outcomeMsg{id: id, rec: rec, res: res, err: err}
	})
}

func (p *Pane) denyTask(id, reason string) tea.Cmd {
	p.busy, p.deciding = true, id
	q, d := p.o.Queue, p.decision(false)
	d.Reason = reason
	return p.bg.run(func(ctx context.Context) tea.Msg {
		rec, res, err := q.Decide(context.WithoutCancel(ctx), id, d)
		return outcomeMsg{id: id, rec: rec, res: res, err: err}
	})
}

// decision is a decision by this pane's operator, recorded as coming
// through its surface with its key.
func (p *Pane) decision(approve bool) approval.Decision {
	return approval.Decision{Approve: approve, By: p.o.Operator, Via: p.o.Via, Key: p.o.Key}
}

// describeOutcome is the notice for this pane's own decision, safe to show.
func (p *Pane) describeOutcome(m outcomeMsg) string {
	id := safetext.Line(m.id)
	var de *approval.DecidedError
	var lost *approval.LostError
	switch {
	case errors.Is(m.err, approval.ErrOperatorKeyRequired):
		return id + " was not decided: " + safetext.Line(m.err.Error())
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
