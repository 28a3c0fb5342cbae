package index

import (
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
)

// Audit fields come from a file anyone may have written: a terminal escape or
// an invisible character in them is shown as a marked escape, never sent raw.
func TestRowsShowHostileTextEscaped(t *testing.T) {
	r := NewRow(audit.Entry{Actor: "agent\x1b]0;owned\x07", Target: "tv\u202egnp.exe", Event: "submitted", Time: `C:\x41`}, false)
	if strings.ContainsAny(r.Actor, "\x1b\x07") || !strings.Contains(r.Actor, `\x1b`) {
		t.Fatalf("actor %q", r.Actor)
	}
	if strings.Contains(r.Target, "\u202e") {
		t.Fatalf("target %q", r.Target)
	}
	if r.Time == `C:\x41` {
		t.Fatalf("a typed escape reads like a marked one: %q", r.Time)
	}
	if plain := "agent:planner"; shown(plain) != plain {
		t.Fatal("plain text changed")
	}
}
