package auditpane

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// Every line of the pane is its width (down to 1×1), whatever the log's fields hold
// (wide, zero-width and combining characters, escapes, very long values),
// with the whole-row selection on each row in turn, filtered or not, and
// in the detail view.
func TestEveryLineIsThePaneWidth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := audit.Open(path, func() time.Time { t0 = t0.Add(time.Second); return t0 })
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []audit.Entry{
		{Actor: "agent:日本語のエージェント", Event: audit.EventSearched, TaskID: "t-界界界界界界界界界界", Target: "🇫🇷👩‍👩‍👧‍👦 tv", Success: true},
		{Actor: "agent\x1b]0;owned\x07\u200b", Event: audit.EventSearched, TaskID: "t\u202eevil", Target: strings.Repeat("e\u0301", 300), Success: false, ErrorCode: "E_界"},
		{Actor: strings.Repeat("x", 5000), Event: audit.EventSearched, Target: "\t\ttabs", Success: true},
	} {
		if _, err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	p := loadedPane(t, path)
	t.Cleanup(p.Close)
	check := func(what string, w, h int) {
		t.Helper()
		p.View(w, h)
		runSync(p, p.fetchRows()) // the rows on screen read, not "…"
		lines := strings.Split(p.View(w, h), "\n")
		if len(lines) != h {
			t.Fatalf("%s at %d×%d: %d lines", what, w, h, len(lines))
		}
		for i, line := range lines {
			if got := ansi.StringWidth(line); got != w {
				t.Fatalf("%s at %d×%d: line %d is %d wide: %q", what, w, h, i, got, line)
			}
		}
	}
	p.View(120, 34)
	runSync(p, p.fetchRows())
	if v := ansi.Strip(p.View(120, 34)); !strings.Contains(v, "日本語") || !strings.Contains(v, `\x1b`) {
		t.Fatalf("the hostile rows are not drawn:\n%s", v)
	}
	sizes := [][2]int{{120, 34}, {80, 22}, {60, 10}, {40, 8}, {12, 6}, {5, 3}, {2, 2}, {1, 1}}
	for _, filter := range []string{"", "界"} {
		if filter != "" {
			press(p, "/")
			for _, r := range filter {
				runSync(p, p.Update(panetest.Key(string(r))))
			}
			press(p, "enter")
		}
		press(p, "g")
		for range 4 {
			for _, s := range sizes {
				check("row "+filter, s[0], s[1])
			}
			runSync(p, p.Update(panetest.Key("enter")))
			if !p.detail.open() {
				t.Fatal("enter opened no detail")
			}
			for _, s := range sizes {
				check("detail "+filter, s[0], s[1])
			}
			press(p, "esc")
			press(p, "j")
		}
	}
}
