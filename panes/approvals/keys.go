package approvalspane

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// Each list's rows are its two decisions (first: the footer leads with
// them), then those moving the selection or the preview (in GroupNav: the
// ? overlay shows them apart from the actions), then the rest.

// previewStep is how many lines pgup/pgdn move the preview: a few, not a
// page, so the request's top is not skipped past by one key.
const previewStep = 5

// keymaps are the pane's rows by mode; each row is the single source of
// truth for its key (dispatch, footer, ? overlay, README table).
type keymaps struct {
	pending, decided panes.Keymap
	// confirm and deny document the prompts' keys for the footer and the ?
	// overlay; the dialogs themselves read the keys (confirm: any key but
	// y cancels; deny: every other key is typing), behind the grace period.
	confirm, deny panes.Keymap
	// summary documents the marked tasks' summary's keys (batch.go).
	summary panes.Keymap
	// rules are the Rules view's rows; like and revoke document the
	// chooser's and the revoke prompt's keys (rulesview.go).
	rules, like, revoke panes.Keymap
}

func (p *Pane) buildKeymaps() keymaps {
	b := panes.Bind
	do := func(f func()) func(tea.KeyPressMsg) tea.Cmd {
		return func(tea.KeyPressMsg) tea.Cmd { f(); return nil }
	}
	// every move of a cursor goes through movedQueue / movedDecided: a
	// different task under it reloads its preview or result
	final := func() string { return "decided tasks are final: press v for the pending ones" }
	history := panes.KeyRow{Binding: b("v", "decided ⇄ pending", "v"), Footer: true, Everyday: true,
		Do: func(tea.KeyPressMsg) tea.Cmd { return p.toggleDecided() }}
	decidedHistory := history
	decidedHistory.Everyday = false // listed once in the README, under the pending list
	q := tasksNav(panes.ListMoves(&p.queue.cur, func() tea.Cmd { return p.movedQueue(func() {}) }))
	q.Down.Disabled = p.emptyQueue
	h := tasksNav(panes.ListMoves(&p.decided.cur, func() tea.Cmd { return p.movedDecided(func() {}) }))
	h.Down.Disabled = p.noDecided
	h.First, h.Last = h.First.Titled("newest"), h.Last.Titled("oldest")
	refresh := panes.KeyRow{Binding: b("ctrl+r", "refresh", "ctrl+r"), Do: func(tea.KeyPressMsg) tea.Cmd { return p.requestReload() }}
	like, revoke := p.likeKeys()
	return keymaps{
		rules: p.ruleKeys(), like: like, revoke: revoke,
		pending: panes.Keymap{
			{Binding: b("a", "approve…", "a"), Footer: true, Everyday: true, Disabled: p.decisionOff, When: p.mayDecide,
				Do: func(msg tea.KeyPressMsg) tea.Cmd { p.openDecision(msg, true); return nil }},
			{Binding: b("d", "deny…", "d"), Footer: true, Everyday: true, Disabled: p.decisionOff, When: p.mayDecide,
				Do: func(msg tea.KeyPressMsg) tea.Cmd { p.openDecision(msg, false); return nil }},
			// before the preview's scroll row, which also takes space: where
			// this pane may not decide, space scrolls as it always did
			{Binding: b("space", "mark/unmark for approval", "space"), Disabled: p.markOff, When: p.mayDecide, Do: do(p.toggleMark)},
			{Binding: b("A", "approve marked…", "A"), Footer: true, Disabled: p.batchOff, When: p.mayDecide,
				Do: func(tea.KeyPressMsg) tea.Cmd { return p.readSummary() }},
			q.Up, q.Down, q.First, q.Last, q.PageUp, q.PageDown,
			{Binding: b("pgup/K", "scroll preview up", "pgup", "K"), Group: panes.GroupNav, Do: do(func() { p.queue.preview.Scroll(-previewStep) })},
			{Binding: b("pgdn/J", "scroll preview down", "pgdown", "J", "space"), Group: panes.GroupNav, Do: do(func() { p.queue.preview.Scroll(previewStep) })},
			history,
			{Binding: b("R", "rules…", "R"), Disabled: p.noRules, Do: func(tea.KeyPressMsg) tea.Cmd { return p.toggleRules() }},
			refresh,
		},
		decided: panes.Keymap{
			{Binding: b("a", "approve…", "a"), Disabled: final, When: p.mayDecide, Do: do(func() {})},
			{Binding: b("d", "deny…", "d"), Disabled: final, When: p.mayDecide, Do: do(func() {})},
			h.Up, h.Down, h.First, h.Last, h.PageUp, h.PageDown,
			{Binding: b("pgup/K", "scroll result up", "pgup", "K"), Group: panes.GroupNav, Do: do(func() { p.decided.view.Scroll(-previewStep) })},
			{Binding: b("pgdn/J", "scroll result down", "pgdown", "J", "space"), Group: panes.GroupNav, Footer: true,
				Do: do(func() { p.decided.view.Scroll(previewStep) })},
			decidedHistory,
			refresh,
		},
		confirm: panes.Keymap{
			{Binding: b("y", "approve", "y", "Y"), Footer: true, Everyday: true},
			{Binding: b("l", "allow tasks like this for a while…", "l"), Footer: true, When: p.likeOnOffer},
			{Binding: b("any other key", "cancel", "n", "esc"), Footer: true},
		},
		summary: panes.Keymap{
			{Binding: b("y", "approve the marked tasks shown", "y", "Y"), Footer: true},
			{Binding: b("any other key", "cancel", "n", "esc"), Footer: true},
		},
		deny: panes.Keymap{
			{Binding: b("enter", "deny", "enter"), Footer: true, Everyday: true},
			{Binding: b("esc", "cancel", "esc"), Footer: true},
		},
	}
}

// toggleDecided switches between the pending and the decided list; the
// decided list opens on its newest task.
func (p *Pane) toggleDecided() tea.Cmd {
	p.notice = "" // it spoke of the list the person left
	if p.decided.shown {
		p.decided.shown = false
		return nil
	}
	if id := p.decided.open(); id != "" {
		return p.loadResult(id)
	}
	return nil
}

// tasksNav is a task list's navigation rows: pgup and pgdn scroll the
// preview, so only ctrl+u and ctrl+d page the tasks, and ↓ is in the footer.
func tasksNav(m panes.Moves) panes.Nav {
	n := panes.ListNav(m)
	n.Up, n.Down = n.Up.Titled("previous task"), n.Down.Titled("next task")
	n.Down.Footer = true
	n.First, n.Last = n.First.Titled("first task"), n.Last.Titled("last task")
	n.PageUp.Binding = panes.Bind("ctrl+u", "page up the tasks", "ctrl+u")
	n.PageDown.Binding = panes.Bind("ctrl+d", "page down the tasks", "ctrl+d")
	return n
}

// decisionOff is why a and d do nothing in the pending list, or "". The
// grace period is not here: a key pressed during it must restart the quiet
// period (so a person typing on cannot answer a prompt unread), which a
// side-effect-free check cannot do, and a footer that dropped a and d for
// a moment after every change would flicker; openDecision refuses those
// keys and says why in the pane.
func (p *Pane) decisionOff() string {
	switch {
	case p.busy:
		return "an action is running (" + safetext.Line(p.deciding) + ")"
	case p.queue.selID == "":
		return "nothing is pending"
	}
	return ""
}

// mayDecide is whether this pane decides at all: on a home whose decisions
// need an operator's key, a and d are neither offered nor listed (the
// pane says how decisions are made instead; handleKey answers the keys).
func (p *Pane) mayDecide() bool { return p.refused == "" }

// emptyQueue and noDecided keep ↓ out of the footer over an empty list.
func (p *Pane) emptyQueue() string {
	if len(p.queue.list) == 0 {
		return "nothing is pending"
	}
	return ""
}

func (p *Pane) noDecided() string {
	if len(p.decided.list) == 0 {
		return "no decided tasks yet"
	}
	return ""
}

// keymap is the rows of the current mode.
func (p *Pane) keymap() panes.Keymap {
	switch {
	case p.dialogs.confirm != nil:
		return p.km.confirm
	case p.dialogs.deny != nil:
		return p.km.deny
	case p.dialogs.summary != nil:
		return p.km.summary
	case p.dialogs.like != nil:
		return p.km.like
	case p.dialogs.revoke != nil:
		return p.km.revoke
	case p.rules.shown:
		return p.km.rules
	case p.decided.shown:
		return p.km.decided
	}
	return p.km.pending
}

// KeySections lists the pane's rows for the ? overlay's sections and the
// README's table.
func (p *Pane) KeySections() []panes.KeySection {
	return []panes.KeySection{
		{Title: "Approvals", Rows: p.km.pending},
		{Title: "Approvals decided", Rows: p.km.decided},
		{Title: "Approve prompt", Rows: p.km.confirm},
		{Title: "Approve marked", Rows: p.km.summary},
		{Title: "Deny reason", Rows: p.km.deny},
		{Title: "Rules", Rows: p.km.rules},
		{Title: "Allow like this", Rows: p.km.like},
		{Title: "Revoke reason", Rows: p.km.revoke},
	}
}
