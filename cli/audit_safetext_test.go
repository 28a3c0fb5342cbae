package cli

import (
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
)

// Entries are data from whoever wrote them: the human output of show and
// verify shows a terminal escape or an invisible character as a marked
// escape; --json keeps the bytes as stored (the JSON encoder escapes them).
func TestAuditHumanOutputEscapesHostileText(t *testing.T) {
	home, l := auditHome(t, 1)
	if _, err := l.Append(audit.Entry{Actor: "agent\x1b]0;owned\x07", Event: audit.EventSearched, Target: "tv\u202egnp.exe", Success: true}); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, home, "audit", "show")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, `agent\x1b]0;owned\x07`) {
		t.Fatalf("show:\n%q", out)
	}
	out, _, _ = run(t, home, "audit", "show", "--json")
	if !strings.Contains(out, `agent\u001b]0;owned\u0007`) {
		t.Fatalf("show --json must keep the stored line:\n%s", out)
	}
}
