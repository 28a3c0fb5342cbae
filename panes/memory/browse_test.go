package memorypane

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/panes/panetest"
)

// Before any query the pane lists the newest memories (no scores: nothing
// was asked) and says older ones exist; enter on an untouched form lists
// them again.
func TestBrowsesNewestWithoutAQuery(t *testing.T) {
	st := demoStore(t)
	p := New(Options{Tool: nil, Store: st, Now: clock}, styles())
	// the program already ended: the change feed ends at once, so drain
	// runs Init's commands to the end
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	drain(p, p.Init(ctx))
	t.Cleanup(p.Close)
	if !p.browsing || len(p.out.Hits) != browseLimit || !p.more {
		t.Fatalf("browsing %v, %d listed, more %v", p.browsing, len(p.out.Hits), p.more)
	}
	for i := 1; i < len(p.out.Hits); i++ {
		if p.out.Hits[i].CreatedAt.After(p.out.Hits[i-1].CreatedAt) {
			t.Fatal("not newest first")
		}
	}
	view := ansi.Strip(p.View(120, 40))
	if !strings.Contains(view, "50 newest memories") || !strings.Contains(view, "older ones exist") || strings.Contains(view, "░") {
		t.Fatalf("browse view:\n%s", view)
	}
	p.Update(panetest.Key("j"))
	if p.list.Cursor() != 1 {
		t.Fatal("the browsed list does not move")
	}
	p.Update(panetest.Key("e"))
	if cmd := p.Update(panetest.Key("enter")); cmd == nil {
		t.Fatal("enter on an untouched form did not list the newest again")
	}
}

// A form the engine refuses clears the old hits: nothing on screen answers
// another form.
func TestValidationErrorClearsOldHits(t *testing.T) {
	p := searched(t, demoStore(t), "python")
	if len(p.shown) == 0 {
		t.Fatal("no hits to clear")
	}
	p.Update(panetest.Key("e"))
	p.inputs[fLimit].SetValue("abc")
	if cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil {
		t.Fatal("an invalid form searched")
	}
	if len(p.shown) != 0 || len(p.out.Hits) != 0 {
		t.Fatalf("%d old hits stayed", len(p.shown))
	}
	if view := ansi.Strip(p.View(120, 40)); !strings.Contains(view, "fix the form above to search") || strings.Contains(view, "Found") {
		t.Fatalf("view:\n%s", view)
	}
}

// The query's words are marked in the hits' text.
func TestQueryTermsHighlighted(t *testing.T) {
	p := searched(t, demoStore(t), "threads")
	i := p.shown[0]
	marks := p.marks[i]
	var got strings.Builder
	for _, m := range marks {
		got.WriteByte(p.previews[i][m])
	}
	if !strings.Contains(strings.ToLower(got.String()), "threads") {
		t.Fatalf("marked %q in %q", got.String(), p.previews[i])
	}
	if !strings.Contains(p.View(120, 40), p.styles.MatchChar.Render("t")) {
		t.Fatal("marks not drawn")
	}
}

// A focused date field shows the whole date, never scrolled to 026-01-01.
func TestDateFieldShowsTheWholeDate(t *testing.T) {
	p := typing(New(Options{Now: clock}, styles()))
	for p.focus != fFrom {
		p.Update(panetest.Key("tab"))
	}
	for _, k := range panetest.Typed("2026-01-01") {
		p.Update(k)
	}
	if view := ansi.Strip(p.View(120, 30)); !strings.Contains(view, "from 2026-01-01") {
		t.Fatalf("date scrolled:\n%s", view)
	}
}
