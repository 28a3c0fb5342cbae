package approvalspane

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// Intents a dialog returns; the pane performs them. Dialogs never act, and
// never see a key the pane's grace period swallowed.
type (
	// Approve asks the pane to approve TaskID with the preview hash shown.
	Approve struct{ TaskID, PreviewHash string }
	// Deny asks the pane to deny TaskID with a reason.
	Deny struct{ TaskID, Reason string }
	// Close closes the dialog without deciding.
	Close struct{}
)

// dialogs is the pane's prompts — at most one open — and the grace period
// that holds decision keys back after the selection or the request changed
// under the person, and the keys that answer a prompt after it appeared.
type dialogs struct {
	confirm *confirmDialog
	deny    *denyDialog
	summary *summaryDialog // the marked tasks' summary (batch.go)
	like    *likeDialog    // "allow like this": the rule's lifetime (likerule.go)
	revoke  *revokeDialog  // a rule's revocation reason (rulesview.go)
	grace   grace
}

// open reports whether a prompt has the keyboard.
func (d *dialogs) open() bool {
	return d.confirm != nil || d.deny != nil || d.summary != nil || d.like != nil || d.revoke != nil
}

// task is the task the open prompt names, or "".
func (d *dialogs) task() string {
	switch {
	case d.confirm != nil:
		return d.confirm.taskID
	case d.deny != nil:
		return d.deny.taskID
	}
	return ""
}

// confirmsTask reports whether the approve prompt is open on task id.
func (d *dialogs) confirmsTask(id string) bool { return d.confirm != nil && d.confirm.taskID == id }

func (d *dialogs) close() { d.confirm, d.deny, d.summary, d.like, d.revoke = nil, nil, nil, nil, nil }

// openConfirm opens the approve prompt on a task and the preview hash
// shown, or the deny dialog; either restarts the grace at now.
func (d *dialogs) openConfirm(id, hash string, now time.Time) {
	d.grace.arm(now)
	d.confirm = &confirmDialog{taskID: id, previewHash: hash}
}

func (d *dialogs) openDeny(id string, now time.Time) {
	d.grace.arm(now)
	d.deny = newDenyDialog(id)
}

// answer passes a key at now to the open prompt and returns its intent:
// nil while the grace swallows the key, or while a reason is typed; Close
// when the prompt closed without deciding. In the reason field only enter
// acts: letters typed at once are kept (they are on screen and act on
// nothing; dropping them sent the agent the tail of a reason), and they
// still hold enter back.
func (d *dialogs) answer(msg tea.KeyPressMsg, now time.Time) any {
	typing := d.deny != nil || d.revoke != nil
	if d.grace.swallow(now) && (!typing || msg.String() == "enter") {
		return nil
	}
	var in any
	switch {
	case d.confirm != nil:
		in = d.confirm.Update(msg)
	case d.deny != nil:
		in = d.deny.Update(msg)
	case d.summary != nil:
		in = d.summary.Update(msg)
	case d.like != nil:
		if in = d.like.Update(msg); d.like.rearm {
			d.like.rearm = false
			d.grace.arm(now) // the chooser now asks about the rule shown
		}
	case d.revoke != nil:
		in = d.revoke.Update(msg)
	}
	if in != nil {
		d.close()
	}
	return in
}

// paste inserts pasted text into the reason as it would show: controls
// and invisible characters as their escapes, never sent to the terminal
// or dropped.
func (d *dialogs) paste(text string) {
	if d.deny != nil {
		d.deny.paste(safetext.Line(text))
	}
	if d.revoke != nil {
		d.revoke.paste(safetext.Line(text))
	}
}

// confirmDialog asks "Approve …? [y/N]": y confirms, any other key cancels.
type confirmDialog struct {
	taskID, previewHash string
	like                bool // l offers "allow like this" (likerule.go)
}

// Update returns the intent a key means.
func (d confirmDialog) Update(msg tea.KeyPressMsg) any {
	if msg.Text == "y" || msg.Text == "Y" {
		return Approve{TaskID: d.taskID, PreviewHash: d.previewHash}
	}
	if d.like && msg.Text == "l" {
		return LikeThis{TaskID: d.taskID, PreviewHash: d.previewHash}
	}
	return Close{}
}

// maxReasonRunes bounds what the reason field takes (the engine's own
// bound is in bytes, approval.MaxReasonBytes, and says so if passed).
const maxReasonRunes = 500

// denyDialog takes a reason: enter denies (a reason is required), esc cancels.
type denyDialog struct {
	taskID string
	input  panes.TextField
	err    string
}

func newDenyDialog(taskID string) *denyDialog { return &denyDialog{taskID: taskID} }

// Update returns an intent, or nil while the reason is being typed.
func (d *denyDialog) Update(msg tea.KeyPressMsg) any {
	switch msg.String() {
	case "esc":
		return Close{}
	case "enter":
		if r := d.input.Value(); len([]rune(r)) > 0 {
			return Deny{TaskID: d.taskID, Reason: r}
		}
		d.err = "a reason is required"
		return nil
	}
	d.err = ""
	full := len([]rune(d.input.Value())) >= maxReasonRunes
	if full && msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
		return nil // typing past the bound: the text stays as it is
	}
	d.input.Handle(msg)
	return nil
}

// paste inserts pasted text, cut to what the bound leaves room for.
func (d *denyDialog) paste(text string) {
	d.err = ""
	room := maxReasonRunes - len([]rune(d.input.Value()))
	if r := []rune(text); len(r) > room {
		text = string(r[:max(room, 0)])
	}
	d.input.Insert(text)
}

// dialogLines are the open prompt, boxed to w cells; nil with none open.
func (p *Pane) dialogLines(w int) []string {
	s := p.styles
	d := &p.dialogs
	var body string
	switch {
	case d.confirm != nil:
		body = s.Warning.Render("Approve "+p.safe(d.confirm.taskID)+"?") + " " + s.Muted.Render("(preview "+short(d.confirm.previewHash)+")") + "  " +
			s.KeyName.Render("y") + " approve · " + s.KeyName.Render("any other key") + " cancel (default: No)"
		if v := p.queue.view; v != nil && v.Record.TaskID == d.confirm.taskID && deviceSilent(v.Preview.EstimatedEffect) {
			body += "\n" + s.Warning.Render("⚠ "+silentWarning)
		}
		if d.confirm.like {
			body += "\n" + s.KeyName.Render("l") + " allow tasks like this for a while…"
		}
	case d.deny != nil:
		body = s.Warning.Render("Deny "+p.safe(d.deny.taskID)) + "\n" + p.reasonLine(max(w, 4)-s.Dialog.GetHorizontalFrameSize())
		if d.deny.err != "" {
			body += "\n" + s.Err.Render(d.deny.err)
		}
		body += "\n" + s.Muted.Render("enter: deny · esc: cancel")
	case d.like != nil:
		body = p.likeLines(d.like)
	case d.revoke != nil:
		body = p.revokeLines(d.revoke, max(w, 4)-s.Dialog.GetHorizontalFrameSize())
	default:
		return nil
	}
	box := s.Dialog.Width(max(w, 4)).Render(body)
	return strings.Split(box, "\n")
}

// reasonPrompt and reasonHint frame the deny dialog's reason field.
const (
	reasonPrompt = "reason: "
	reasonHint   = "why? (sent back to the agent)"
)

// reasonLine is the deny dialog's reason field in w cells: the prompt, then
// the text scrolled to keep the cursor in view, or — while empty — the
// cursor cell followed by the hint, so an empty field reads as one.
func (p *Pane) reasonLine(w int) string {
	s := p.styles
	f := &p.dialogs.deny.input
	room := max(w-len(reasonPrompt), 1)
	if f.Value() == "" {
		return s.Muted.Render(reasonPrompt) + s.Cursor.Reverse(true).Render(" ") + s.Muted.Render(panes.Truncate(reasonHint, room-1))
	}
	before, at, after := f.Window(room)
	return s.Muted.Render(reasonPrompt) + s.InputFocused.Render(before) + s.Cursor.Reverse(true).Render(at) + s.InputFocused.Render(after)
}
