package approvalspane

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// The Rules view (R): every rule in force — config.toml's, then those
// added at run time — with what it matches, when it expires, where it
// comes from, who made it and how many decisions it made. x on a runtime
// rule asks why and revokes it (the store audits rule_revoked); a config
// rule is changed by editing the config. What loading the config's rules
// warned about (failing examples, globs matching nothing) heads the view,
// and the pending list's heading points to it until the view is opened.

// ruleState is the Rules view's part of the pane.
type ruleState struct {
	shown   bool
	list    []RuleRow
	err     error
	loading bool
	cur     int // the selected row
	// seen is set once the view was opened: the heading's note about
	// rule warnings has been followed.
	seen bool
}

// RevokeRule asks the pane to revoke runtime rule ID with a reason.
type RevokeRule struct{ ID, Reason string }

// ruleListMsg carries the rules read for the view.
type ruleListMsg struct {
	list []RuleRow
	err  error
}

// revokedMsg is the outcome of revoking a rule.
type revokedMsg struct {
	id  string
	err error
}

func (ruleListMsg) ruleMsg() {}
func (revokedMsg) ruleMsg()  {}

// takeList shows the rules just read, keeping the cursor on its rule.
func (r *ruleState) takeList(m ruleListMsg) {
	r.loading, r.err = false, m.err
	if m.err != nil {
		return
	}
	was := ""
	if r.cur < len(r.list) {
		was = r.list[r.cur].ID
	}
	r.list, r.cur = m.list, min(r.cur, max(len(m.list)-1, 0))
	for i, row := range r.list {
		if row.ID == was {
			r.cur = i
		}
	}
}

// selected is the rule under the cursor.
func (r *ruleState) selected() (RuleRow, bool) {
	if r.cur < 0 || r.cur >= len(r.list) {
		return RuleRow{}, false
	}
	return r.list[r.cur], true
}

// toggleRules opens the Rules view (reading the rules) or closes it.
func (p *Pane) toggleRules() tea.Cmd {
	p.notice = "" // it spoke of the view the person left
	p.rules.shown = !p.rules.shown
	if !p.rules.shown {
		return nil
	}
	p.rules.seen, p.decided.shown = true, false
	return p.readRules()
}

// readRules reads the rules in force, off the UI goroutine.
func (p *Pane) readRules() tea.Cmd {
	src := p.o.Rules
	if src == nil {
		return nil
	}
	p.rules.loading = true
	return p.bg.run(func(ctx context.Context) tea.Msg {
		list, err := src.List(ctx)
		return ruleListMsg{list: list, err: err}
	})
}

// revokeOff is why x does nothing now, or "".
func (p *Pane) revokeOff() string {
	r, ok := p.rules.selected()
	switch {
	case p.busy:
		return "an action is running"
	case !ok:
		return "no rule is selected"
	case !r.Revocable():
		return safetext.Line(r.ID) + " is a rule in config.toml: edit the config to change or remove it"
	}
	return ""
}

// openRevoke asks for the reason the selected runtime rule ends.
func (p *Pane) openRevoke() {
	r, ok := p.rules.selected()
	if !ok || !r.Revocable() || p.refused != "" {
		return
	}
	p.notice = ""
	p.dialogs.grace.arm(p.o.Now())
	p.dialogs.revoke = &revokeDialog{denyDialog: *newDenyDialog(r.ID)}
}

// revokeDialog takes the reason a rule ends: enter revokes, esc cancels.
type revokeDialog struct{ denyDialog }

// Update returns RevokeRule on enter with a reason, nil while typing.
func (d *revokeDialog) Update(msg tea.KeyPressMsg) any {
	if in, ok := d.denyDialog.Update(msg).(Deny); ok {
		return RevokeRule{ID: in.TaskID, Reason: in.Reason}
	} else if msg.String() == "esc" {
		return Close{}
	}
	return nil
}

// revokeRule revokes a rule off the UI goroutine.
func (p *Pane) revokeRule(in RevokeRule) tea.Cmd {
	p.busy, p.deciding = true, "revoking "+in.ID
	p.notice = "revoking " + safetext.Line(in.ID) + "…"
	src, by := p.o.Rules, p.actor()
	return p.bg.run(func(ctx context.Context) tea.Msg {
		return revokedMsg{id: in.ID, err: src.Revoke(context.WithoutCancel(ctx), in.ID, in.Reason, by)}
	})
}

// finishRevoke says how the revocation went and reads the rules again.
func (p *Pane) finishRevoke(m revokedMsg) tea.Cmd {
	p.busy, p.deciding = false, ""
	if m.err != nil {
		p.notice = "rule " + safetext.Line(m.id) + " was not revoked: " + safetext.Line(m.err.Error())
	} else {
		p.notice = "rule " + safetext.Line(m.id) + " revoked: it decides no task from now on"
	}
	return p.readRules()
}

// rulesNote is the pending list's heading's pointer to the rules'
// warnings, until the Rules view has been opened once.
func (p *Pane) rulesNote() string {
	if p.o.Rules == nil || p.rules.seen {
		return ""
	}
	n := len(p.o.Rules.Warnings())
	switch n {
	case 0:
		return ""
	case 1:
		return p.styles.Warning.Render("  · 1 rule warning: see R")
	}
	return p.styles.Warning.Render(fmt.Sprintf("  · %d rule warnings: see R", n))
}

// ruleColumns are the Rules view's column widths (the match takes the rest).
const (
	ruleIDWidth  = 22
	ruleByWidth  = 16
	ruleExpWidth = 22
)

// renderRules lays the Rules view out: its heading, the rules' warnings,
// the notice, then one row per rule and the selected one's details.
func (p *Pane) renderRules(w, h int) ([]string, bool) {
	s := p.styles
	head := s.Heading.Render(fmt.Sprintf("Rules (%d)", len(p.rules.list))) + s.Muted.Render("  R: back to pending")
	lines := []string{head}
	for _, wmsg := range p.o.Rules.Warnings() {
		lines = append(lines, panes.Wrap(s.Warning.Render("⚠ "+safetext.Line(wmsg)), w)...)
	}
	lines = append(lines, p.noticeLines(w)...)
	switch {
	case p.rules.err != nil:
		return append(lines, panes.Wrap(s.Err.Render("rules cannot be read: ")+p.safe(p.rules.err.Error()), w)...), true
	case len(p.rules.list) == 0 && p.rules.loading:
		return append(lines, s.Muted.Render("reading the rules…")), true
	case len(p.rules.list) == 0:
		return append(lines, s.Muted.Render("no rules: every media task asks you (add [[rules]] to config.toml, or l in the approve prompt)")), true
	}
	lines = append(lines, s.Label.Render(panes.Truncate(fmt.Sprintf("  %-*s %-8s %-8s %-*s %-*s %5s  %s",
		ruleIDWidth, "ID", "DECISION", "SOURCE", ruleExpWidth, "EXPIRES", ruleByWidth, "BY", "HITS", "MATCHES"), w)))
	dialog := p.dialogLines(w)
	detail := p.ruleDetail(w)
	room := h - len(lines) - len(dialog) - len(detail)
	if room < 1 {
		return lines, false
	}
	from := max(0, min(p.rules.cur-room/2, len(p.rules.list)-room))
	for i := from; i < len(p.rules.list) && i < from+room; i++ {
		lines = append(lines, p.ruleRow(p.rules.list[i], i == p.rules.cur, w))
	}
	lines = append(lines, detail...)
	return append(lines, dialog...), true
}

// ruleRow is one rule's row, its untrusted parts through safetext.
func (p *Pane) ruleRow(r RuleRow, sel bool, w int) string {
	mark := "  "
	if sel {
		mark = "▸ "
	}
	by := r.CreatedBy
	if by == "" {
		by = "—"
	}
	row := fmt.Sprintf("%s%s %-8s %-8s %-*s %s %5d  %s", mark, safetext.Cell(r.ID, ruleIDWidth), safetext.Cell(r.Decision, 8),
		safetext.Cell(r.Source, 8), ruleExpWidth, p.expiresIn(r), safetext.Cell(by, ruleByWidth), r.Hits, safetext.Line(r.Match))
	row = panes.Truncate(row, w)
	if sel {
		return p.styles.Selected.Render(row)
	}
	return row
}

// expiresIn says when a rule stops deciding, from the pane's clock.
func (p *Pane) expiresIn(r RuleRow) string {
	switch {
	case r.UntilRestart:
		return "when Vigil restarts"
	case r.ExpiresAt.IsZero():
		return "never"
	}
	d := r.ExpiresAt.Sub(p.o.Now())
	if d <= 0 {
		return "expired"
	}
	return "in " + left(d)
}

// left is a time left in a person's words: 45s, 14m, 1h05m, 3d02h.
func left(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// ruleDetail is the selected rule's whole match and reason, and what x
// does with it.
func (p *Pane) ruleDetail(w int) []string {
	s := p.styles
	r, ok := p.rules.selected()
	if !ok {
		return nil
	}
	out := panes.Wrap(s.Muted.Render("matches ")+p.safe(r.Match), w)
	if r.Reason != "" {
		out = append(out, panes.Wrap(s.Muted.Render("reason  ")+p.safe(r.Reason), w)...)
	}
	switch {
	case !r.Revocable():
		out = append(out, s.Muted.Render(panes.Truncate("from config.toml: edit the config to change or remove it", w)))
	case p.refused == "":
		out = append(out, s.Muted.Render(panes.Truncate("x: revoke it (asks why)", w)))
	}
	return out
}

// revokeLines are the revoke prompt's body, before it is boxed.
func (p *Pane) revokeLines(d *revokeDialog, w int) string {
	s := p.styles
	f := &d.input
	room := max(w-len(reasonPrompt), 1)
	field := s.Muted.Render(reasonPrompt) + s.Cursor.Reverse(true).Render(" ") + s.Muted.Render(panes.Truncate("why does it end? (audited)", room-1))
	if f.Value() != "" {
		before, at, after := f.Window(room)
		field = s.Muted.Render(reasonPrompt) + s.InputFocused.Render(before) + s.Cursor.Reverse(true).Render(at) + s.InputFocused.Render(after)
	}
	body := s.Warning.Render("Revoke rule "+p.safe(d.taskID)) + "\n" + field
	if d.err != "" {
		body += "\n" + s.Err.Render(d.err)
	}
	return body + "\n" + s.Muted.Render("enter: revoke · esc: cancel")
}

// ruleKeys are the Rules view's rows.
func (p *Pane) ruleKeys() panes.Keymap {
	b := panes.Bind
	move := func(by int) func(tea.KeyPressMsg) tea.Cmd {
		return func(tea.KeyPressMsg) tea.Cmd {
			p.rules.cur = max(0, min(p.rules.cur+by, len(p.rules.list)-1))
			return nil
		}
	}
	return panes.Keymap{
		{Binding: b("x", "revoke…", "x"), Footer: true, Disabled: p.revokeOff, When: p.mayDecide,
			Do: func(tea.KeyPressMsg) tea.Cmd { p.openRevoke(); return nil }},
		{Binding: b("↑/k", "previous rule", "up", "k"), Group: panes.GroupNav, Do: move(-1)},
		{Binding: b("↓/j", "next rule", "down", "j"), Group: panes.GroupNav, Footer: true, Do: move(1)},
		{Binding: b("R/esc", "back to pending", "R", "esc"), Footer: true, Do: func(tea.KeyPressMsg) tea.Cmd { return p.toggleRules() }},
		{Binding: b("ctrl+r", "refresh", "ctrl+r"), Do: func(tea.KeyPressMsg) tea.Cmd { return p.readRules() }},
	}
}

// noRules is why R does nothing, or "".
func (p *Pane) noRules() string {
	if p.o.Rules == nil {
		return "rules are not shown for the shared queue: see vigil rules list on the executor"
	}
	return ""
}

// likeKeys document the chooser's keys and the revoke prompt's.
func (p *Pane) likeKeys() (like, revoke panes.Keymap) {
	b := panes.Bind
	return panes.Keymap{
			{Binding: b("1/2/3", "show the rule for 15 min / 1 h / until Vigil restarts", "1", "2", "3"), Footer: true, When: p.likeChoosing},
			{Binding: b("y", "add the rule shown and approve once", "y", "Y"), Footer: true, When: p.likePicked},
			{Binding: b("any other key", "cancel", "n", "esc"), Footer: true},
		}, panes.Keymap{
			{Binding: b("enter", "revoke", "enter"), Footer: true},
			{Binding: b("esc", "cancel", "esc"), Footer: true},
		}
}
