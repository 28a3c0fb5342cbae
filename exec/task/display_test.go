package task

import (
	"strings"
	"testing"
)

func TestCheckDisplay(t *testing.T) {
	ok := []string{"", "living-room", "agent:planner", "Zoë's speaker", "客厅", strings.Repeat("a", 256)}
	bad := map[string]string{
		"tab\tx": "control", "nul\x00": "control", "esc\x1b[2J": "control", "del\x7f": "control", "c1\u0085": "control",
		"zw\u200bj": "format", "bidi\u202e": "format", "bom\ufeff": "format", "tag\U000E0041": "format",
		"ls\u2028": "separator", "ps\u2029": "separator",
		"hangul\u3164filler": "invisible", "vs\ufe0f": "invisible", "cgj\u034f": "invisible",
		"nbsp\u00a0": "space other", "ideo\u3000": "space other", "thin\u2009": "space other",
		strings.Repeat("a", 257): "longer than 256", "bad\xff": "UTF-8",
	}
	for _, s := range ok {
		if err := CheckDisplay(s); err != nil {
			t.Errorf("%q refused: %v", s, err)
		}
	}
	for s, want := range bad {
		err := CheckDisplay(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
	}
}

// A manifest's task_id with a control or invisible character is refused
// naming the field and the rule, without the raw value.
func TestTaskIDRuleDoesNotEchoTheValue(t *testing.T) {
	for _, id := range []string{"a\u202eb", "a\x1b]0;x\x07", "a\u200bb", "a\u00a0b", strings.Repeat("a", 300)} {
		err := ValidateTaskID(id)
		if err == nil || !strings.Contains(err.Error(), "task_id") || strings.Contains(err.Error(), id) {
			t.Errorf("%q: %v", id, err)
		}
	}
}
