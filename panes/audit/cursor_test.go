package auditpane

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/audit"
)

// testToday is "now" for every pane the tests make: the TIME column reads
// the same whatever the machine's clock.
var testToday = time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)

func init() { defaultClock = func() time.Time { return testToday } }

// timeOf is the TIME cell of line i of liveLog's log (one second apart), as
// the table shows it (shortTime: this year, not today).
func timeOf(i int) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i+1) * time.Second).Format("01-02 15:04:05")
}

// onScreen reports whether the table shows line i's row.
func onScreen(p *Pane, i int) bool {
	return strings.Contains(ansi.Strip(p.View(100, 20)), timeOf(i))
}

// The table's cursor: it opens following the last line, g and G go to the
// ends (G follows again), pgdn and pgup move a screen less one row, and the
// selected row is always on screen.
func TestCursorPagesAndFollows(t *testing.T) {
	path, l := liveLog(t, 300)
	p := loadedPane(t, path)
	p.View(100, 20)
	if c := p.table.list.Cursor(); c != 299 || !p.table.follow || !onScreen(p, 299) {
		t.Fatalf("opened on %d, follow %v", c, p.table.follow)
	}
	press(p, "g")
	if c := p.table.list.Cursor(); c != 0 || p.table.follow || !onScreen(p, 0) {
		t.Fatalf("g: cursor %d, follow %v", c, p.table.follow)
	}
	rows := p.table.height
	press(p, "pgdown")
	if c := p.table.list.Cursor(); c != rows-1 || !onScreen(p, c) || !onScreen(p, 0) {
		t.Fatalf("pgdn from the top: cursor %d, want %d (table of %d rows)", c, rows-1, rows)
	}
	press(p, "pgdown")
	if c := p.table.list.Cursor(); c != 2*(rows-1) || !onScreen(p, c) || onScreen(p, 0) {
		t.Fatalf("second pgdn: cursor %d, want %d", c, 2*(rows-1))
	}
	press(p, "pgup")
	if c := p.table.list.Cursor(); c != rows-1 || !onScreen(p, c) {
		t.Fatalf("pgup: cursor %d, want %d", c, rows-1)
	}
	// lines appended while the cursor is elsewhere leave it on its line
	for range 5 {
		if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventSearched, Target: "tv", Success: true}); err != nil {
			t.Fatal(err)
		}
	}
	runSync(p, p.changed())
	if c := p.table.list.Cursor(); c != rows-1 || p.viewLen() != 305 {
		t.Fatalf("after an append: cursor %d of %d", c, p.viewLen())
	}
	press(p, "G")
	if c := p.table.list.Cursor(); c != 304 || !p.table.follow || !onScreen(p, 304) {
		t.Fatalf("G: cursor %d, follow %v", c, p.table.follow)
	}
	if _, err := l.Append(audit.Entry{Actor: "agent", Event: audit.EventSearched, Target: "tv", Success: true}); err != nil {
		t.Fatal(err)
	}
	runSync(p, p.changed())
	if c := p.table.list.Cursor(); c != 305 || !onScreen(p, 305) {
		t.Fatalf("following: cursor %d, want the new last line 305\n%s", c, fmt.Sprint(ansi.Strip(p.View(100, 20))))
	}
}
