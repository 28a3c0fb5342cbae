package auditpane

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// TestSecretShapedIDsAreMasked (issue 36, item 6): an actor, task id or
// jti that is a pasted key is masked in the table, in the filter's
// matches and in the detail view; the file keeps it (the chain's bytes).
func TestSecretShapedIDsAreMasked(t *testing.T) {
	const secret = "ghp_Ab3dEf6hIj9lMn2pQr5tUv8xYz1bCd4fGh7J"
	path, l := liveLog(t, 3)
	if _, err := l.Append(audit.Entry{Actor: "agent:" + secret, Event: audit.EventSubmitted, TaskID: secret,
		TokenJTI: secret, Target: "tv", Success: true}); err != nil {
		t.Fatal(err)
	}
	p := loadedPane(t, path)
	if v := ansi.Strip(p.View(200, 20)); strings.Contains(v, secret[8:20]) || !strings.Contains(v, "agent:ghp_...") {
		t.Fatalf("the table shows a secret-shaped id:\n%s", v)
	}
	p.table.list.Select(3)
	runSync(p, p.Update(panetest.Key("enter")))
	if !p.detail.open() {
		t.Fatal("enter did not open the detail")
	}
	if v := ansi.Strip(strings.Join(p.detailLines(200), "\n")); strings.Contains(v, secret[8:20]) || !strings.Contains(v, "ghp_...") {
		t.Fatalf("the detail shows a secret-shaped id:\n%s", v)
	}
}
