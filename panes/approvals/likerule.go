package approvalspane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/exec/rules"
	"github.com/vigil-dev/vigil/safetext"
)

// "Allow like this": from the approve prompt, l reads the rule that would
// allow tasks like this one (this agent, capability and device, and media
// host for a play) for each lifetime rules.LikeLifetimes offers, and opens
// a chooser showing each in words (rules.Describe) before anything is
// made. A number picks one; the chooser then asks once more, behind the
// grace period again, and y adds the rule and approves this task once,
// bound to the preview hash the prompt named. It is not offered for a task
// whose preview warns (no rule allows such a task), where this pane may
// not decide, or without a RuleSource.

// Intents of the approve prompt's second choice.
type (
	// LikeThis asks the pane to read the rules like TaskID's for the chooser.
	LikeThis struct{ TaskID, PreviewHash string }
	// ApproveLike asks the pane to add Rule, then approve TaskID once with
	// the preview hash shown.
	ApproveLike struct {
		TaskID, PreviewHash string
		Rule                rules.AddRequest
	}
)

// likeChoice is one lifetime the chooser offers: the rule it would make,
// in words, or why none can be.
type likeChoice struct {
	lifetime time.Duration
	req      rules.AddRequest
	describe string // safe to show
	err      error
}

// lifetimeWord names a lifetime for a person.
func lifetimeWord(d time.Duration) string {
	switch {
	case d == rules.UntilRestart:
		return "until Vigil restarts"
	case d%time.Hour == 0:
		return fmt.Sprintf("for %d h", d/time.Hour)
	}
	return fmt.Sprintf("for %d min", d/time.Minute)
}

// likeMsg carries the rules read for the chooser.
type likeMsg struct {
	taskID, hash string
	choices      []likeChoice
}

// likeDoneMsg is the outcome of "allow like this": the rule added (or
// why not), then the approval's outcome.
type likeDoneMsg struct {
	ruleID, describe string
	addErr           error
	out              outcomeMsg
}

func (likeMsg) ruleMsg()     {}
func (likeDoneMsg) ruleMsg() {}

// likeOffered reports whether the approve prompt offers "allow like this"
// for the preview on screen.
func (p *Pane) likeOffered() bool {
	v := p.queue.view
	return p.o.Rules != nil && p.refused == "" && v != nil && len(BatchWarnings(*v)) == 0
}

// readLike reads the rule like the task for each lifetime, off the UI
// goroutine; the chooser opens when they are in (openLike).
func (p *Pane) readLike(in LikeThis) tea.Cmd {
	v := p.queue.view
	if p.o.Rules == nil || v == nil || v.Record.TaskID != in.TaskID || v.BindingHash != in.PreviewHash {
		p.notice = "not yet: the task under the cursor just changed"
		return nil
	}
	src, view, by, now := p.o.Rules, *v, p.actor(), p.o.Now()
	warn := BatchWarnings(view)
	return p.bg.run(func(ctx context.Context) tea.Msg {
		m := likeMsg{taskID: in.TaskID, hash: in.PreviewHash}
		for _, d := range rules.LikeLifetimes {
			c := likeChoice{lifetime: d}
			c.req, c.err = src.Like(ctx, view, warn, d, by)
			if c.err == nil {
				c.describe = safetext.Line(rules.Describe(c.req, now))
			}
			m.choices = append(m.choices, c)
		}
		return m
	})
}

// openLike opens the chooser, behind the grace period, if the task and
// its preview are still the ones the prompt named and all of it fits.
func (p *Pane) openLike(m likeMsg) {
	v := p.queue.view
	switch {
	case p.busy || p.dialogs.open() || p.decided.shown || p.rules.shown:
		return // another prompt or view took the screen meanwhile
	case p.queue.selID != m.taskID || v == nil || v.Record.TaskID != m.taskID || v.BindingHash != m.hash:
		p.notice = safetext.Line(m.taskID) + ": the request changed while the rule was read — review it (nothing was approved)"
		return
	}
	p.notice = ""
	p.dialogs.grace.arm(p.o.Now())
	p.dialogs.like = &likeDialog{taskID: m.taskID, previewHash: m.hash, choices: m.choices, pick: -1}
	if p.areaW > 0 && p.areaH > 0 {
		if _, ok := p.render(p.areaW, p.areaH); !ok {
			p.dialogs.close()
			p.notice = "the window is too small to show the task with the rule: enlarge it"
		}
	}
}

// likeDialog is the chooser: a number picks a lifetime (its rule shown),
// then y makes it and approves the task; any other key cancels.
type likeDialog struct {
	taskID, previewHash string
	choices             []likeChoice
	pick                int    // the chosen lifetime, -1 before one is
	err                 string // why the number pressed offers no rule, safe to show
	// rearm asks the dialogs to restart the grace: the question changed.
	rearm bool
}

// Update returns the intent a key means, nil while the chooser stays.
func (d *likeDialog) Update(msg tea.KeyPressMsg) any {
	if d.pick >= 0 {
		if msg.Text == "y" || msg.Text == "Y" {
			return ApproveLike{TaskID: d.taskID, PreviewHash: d.previewHash, Rule: d.choices[d.pick].req}
		}
		return Close{}
	}
	for i, c := range d.choices {
		if msg.Text != fmt.Sprint(i+1) {
			continue
		}
		if c.err != nil {
			d.err = "no rule " + lifetimeWord(c.lifetime) + ": " + safetext.Line(c.err.Error())
			return nil
		}
		d.pick, d.err, d.rearm = i, "", true
		return nil
	}
	return Close{}
}

// likeLines are the chooser's body, before it is boxed.
func (p *Pane) likeLines(d *likeDialog) string {
	s := p.styles
	id := p.safe(d.taskID)
	if d.pick >= 0 {
		return s.Warning.Render("Add this rule and approve "+id+" once?") + "\n" +
			"  " + d.choices[d.pick].describe + "\n" +
			s.KeyName.Render("y") + " add the rule and approve · " + s.KeyName.Render("any other key") + " cancel (default: No)"
	}
	var b strings.Builder
	b.WriteString(s.Warning.Render("Allow tasks like "+id+" without asking — for how long?") + "\n")
	for i, c := range d.choices {
		line := c.describe
		if c.err != nil {
			line = s.Muted.Render("not offered: " + safetext.Line(c.err.Error()))
		}
		fmt.Fprintf(&b, "%s %s:\n    %s\n", s.KeyName.Render(fmt.Sprint(i+1)), lifetimeWord(c.lifetime), line)
	}
	if d.err != "" {
		b.WriteString(s.Err.Render(d.err) + "\n")
	}
	b.WriteString(s.Muted.Render("a number: show that rule before it is made · any other key: cancel (nothing is approved)"))
	return b.String()
}

// approveLike adds the rule, then approves the task once, bound to the
// hash the prompt showed: the preview is read first, and a request that
// changed gets neither the rule nor the approval.
func (p *Pane) approveLike(in ApproveLike) tea.Cmd {
	p.busy, p.deciding = true, in.TaskID
	p.notice = safetext.Line(in.TaskID) + ": adding the rule…"
	q, src, d, now := p.o.Queue, p.o.Rules, p.decision(true), p.o.Now()
	d.PreviewHash = in.PreviewHash
	return p.bg.run(func(ctx context.Context) tea.Msg {
		ctx = context.WithoutCancel(ctx) // a rule once added is followed by its approval
		id := in.TaskID
		v, err := q.Preview(ctx, id)
		switch {
		case err != nil:
			return likeDoneMsg{addErr: err, out: outcomeMsg{id: id, err: err}}
		case v.BindingHash != in.PreviewHash:
			return likeDoneMsg{addErr: approval.ErrPreviewChanged, out: outcomeMsg{id: id, view: &v, err: approval.ErrPreviewChanged}}
		}
		done := likeDoneMsg{describe: safetext.Line(rules.Describe(in.Rule, now))}
		if done.ruleID, done.addErr = src.Add(ctx, in.Rule); done.addErr != nil {
			done.out = outcomeMsg{id: id, err: done.addErr}
			return done
		}
		rec, res, err := q.Decide(ctx, id, d)
		done.out = outcomeMsg{id: id, rec: rec, res: res, err: err}
		if errors.Is(err, approval.ErrPreviewChanged) {
			if nv, verr := q.Preview(ctx, id); verr == nil {
				done.out.view = &nv
			}
		}
		return done
	})
}

// finishLike reports both halves: the rule (or why none was made, and
// then nothing was approved) and the approval's outcome.
func (p *Pane) finishLike(m likeDoneMsg) tea.Cmd {
	cmd := p.update(m.out)
	if m.addErr != nil {
		p.notice = "no rule was made and nothing was approved: " + p.notice
		return cmd
	}
	p.notice = "rule " + safetext.Line(m.ruleID) + " added (" + m.describe + "); " + p.notice
	if p.rules.shown {
		return tea.Batch(cmd, p.readRules())
	}
	return cmd
}

// likeChoosing is whether the chooser waits for a lifetime; likePicked
// whether it asks about the rule picked.
func (p *Pane) likeChoosing() bool { return p.dialogs.like != nil && p.dialogs.like.pick < 0 }
func (p *Pane) likePicked() bool   { return p.dialogs.like != nil && p.dialogs.like.pick >= 0 }

// likeOnOffer is whether the open approve prompt offers l.
func (p *Pane) likeOnOffer() bool { return p.dialogs.confirm != nil && p.dialogs.confirm.like }
