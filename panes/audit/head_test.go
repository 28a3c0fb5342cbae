package auditpane

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/vigil-dev/vigil/audit"
)

// TestLiveBadgeHeadEdited: the head file edited alone (the log untouched)
// turns the badge, as `vigil audit verify` says BROKEN
// (only the log's own events were watched: the badge stayed green).
func TestLiveBadgeHeadEdited(t *testing.T) {
	for _, large := range []bool{false, true} {
		name := "small"
		if large {
			name = "large"
		}
		t.Run(name, func(t *testing.T) {
			if large {
				largePath(t)
			}
			path, _ := liveLog(t, 20)
			m, _ := startHost(t, path)
			hp := audit.HeadPath(path)
			raw, err := os.ReadFile(hp)
			if err != nil {
				t.Fatal(err)
			}
			var h map[string]any
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			h["hash"] = strings.Repeat("0", 64)
			b, _ := json.Marshal(h)
			f, err := os.OpenFile(hp, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(b)
			f.Close()
			m.waitScreen(t, "BROKEN at #19", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #19") })
		})
	}
}
