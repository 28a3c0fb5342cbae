package approvals

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
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

// denyDialog takes a reason: enter denies (a reason is required), esc cancels.
type denyDialog struct {
	taskID string
	input  textinput.Model
	err    string
}

func newDenyDialog(taskID string) *denyDialog {
	ti := textinput.New()
	ti.Placeholder = "why? (sent back to the agent)"
	ti.Prompt = "reason: "
	ti.CharLimit = 500
	ti.Focus()
	return &denyDialog{taskID: taskID, input: ti}
}

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
	d.input, _ = d.input.Update(msg)
	return nil
}
