package approvalspane

import (
	"testing"
	"time"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// The dialogs child on its own: a prompt's keys wait out the grace on the
// clock passed in, an answer closes the prompt, and in the reason field
// letters typed at once are kept while enter is held back.
func TestDialogsAnswerBehindTheGrace(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var d dialogs
	d.openConfirm("t-1", "hash-1", t0)
	if !d.open() || d.task() != "t-1" || !d.confirmsTask("t-1") {
		t.Fatal("the approve prompt did not open on its task")
	}
	if in := d.answer(panetest.Key("y"), t0.Add(100*time.Millisecond)); in != nil || !d.open() {
		t.Fatalf("y inside the grace answered: %#v", in)
	}
	if in := d.answer(panetest.Key("y"), t0.Add(GraceMax)); in != (Approve{TaskID: "t-1", PreviewHash: "hash-1"}) || d.open() {
		t.Fatalf("y after the grace: %#v, open %v", in, d.open())
	}

	d.openDeny("t-2", t0)
	for i, k := range []string{"n", "o"} {
		if in := d.answer(panetest.Key(k), t0.Add(time.Duration(i+1)*100*time.Millisecond)); in != nil {
			t.Fatalf("typing answered: %#v", in)
		}
	}
	if in := d.answer(panetest.Key("enter"), t0.Add(300*time.Millisecond)); in != nil || !d.open() {
		t.Fatalf("enter inside the grace answered: %#v", in)
	}
	if in := d.answer(panetest.Key("enter"), t0.Add(GraceMax)); in != (Deny{TaskID: "t-2", Reason: "no"}) || d.open() {
		t.Fatalf("enter after the grace: %#v", in)
	}

	d.openConfirm("t-3", "hash-3", t0)
	if in := d.answer(panetest.Key("esc"), t0.Add(GraceMax)); in != (Close{}) || d.open() {
		t.Fatalf("esc: %#v", in)
	}
}
