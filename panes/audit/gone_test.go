package auditpane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-dev/vigil/audit"
)

// TestLiveBadgeLogGone: the log this screen verified deleted together with
// its head, or replaced (log and head) by another valid chain, turns the
// badge: it does not say "✓ chain verified · 0 entries" a moment after
// showing 20.
func TestLiveBadgeLogGone(t *testing.T) {
	t.Run("deleted", func(t *testing.T) {
		path, _ := liveLog(t, 20)
		m, _ := startHost(t, path)
		os.Remove(audit.HeadPath(path))
		os.Remove(path)
		m.waitScreen(t, "BROKEN", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #0") })
	})
	t.Run("replaced", func(t *testing.T) {
		path, _ := liveLog(t, 20)
		m, _ := startHost(t, path)
		other := filepath.Join(t.TempDir(), "audit.log") // another chain, valid on its own
		l, err := audit.Open(other, func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) })
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 25; i++ {
			l.Append(audit.Entry{Actor: "other", Event: audit.EventSearched, Success: true})
		}
		os.Rename(audit.HeadPath(other), audit.HeadPath(path))
		os.Rename(other, path)
		m.waitScreen(t, "BROKEN", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #0") })
	})
	t.Run("cut with its head", func(t *testing.T) {
		path, _ := liveLog(t, 20)
		m, _ := startHost(t, path)
		short, _ := liveLog(t, 12) // the same entries as path's first 12: a consistent cut
		os.Rename(audit.HeadPath(short), audit.HeadPath(path))
		os.Rename(short, path)
		m.waitScreen(t, "BROKEN", func(s string) bool { return strings.Contains(s, "✗ BROKEN at #12") })
	})
}
