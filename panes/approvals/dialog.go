package approvalspane

import (
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/panes"
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

// confirmDialog asks "Approve …? [y/N]": y confirms, any other key cancels.
type confirmDialog struct {
	taskID, previewHash string
}

// Update returns the intent a key means.
func (d confirmDialog) Update(msg tea.KeyPressMsg) any {
	if msg.Text == "y" || msg.Text == "Y" {
		return Approve{TaskID: d.taskID, PreviewHash: d.previewHash}
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
