package searchpane

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/panes/panetest"
)

// scopedPane is the pane on a demo scope (no backend involved: scoped
// search runs in-process) after pattern ran.
func scopedPane(t *testing.T, scopeName, pattern string) *Pane {
	t.Helper()
	scopes, err := scope.WriteDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := fakeOptions(t)
	o.Scopes, o.InitialScope = scopes, scopeName
	p := New(o, styles())
	t.Cleanup(p.Close)
	runTyped(t, p, pattern)
	if p.results.scoped == nil {
		t.Fatalf("no scoped hits for %q", pattern)
	}
	return p
}

// Mail hits read date · sender · subject, decoded, not the Maildir file
// name; p shows the message itself beside the list.
func TestMailHitsShowDateSenderSubjectAndPreview(t *testing.T) {
	p := scopedPane(t, "mail", "budget")
	view := ansi.Strip(p.View(120, 36))
	for _, want := range []string{"2024-06-01 · Ada Lovelace <ada@example.org> · Quarterly report draft",
		"2024-06-02 · José Núñez <jose@example.org> · Café order for Friday"} {
		if !strings.Contains(view, want) {
			t.Fatalf("missing %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "1717236000.M1P100") {
		t.Fatalf("a Maildir file name is listed:\n%s", view)
	}
	drain(t, p, p.Update(panetest.Key("p")))
	view = ansi.Strip(p.View(120, 36))
	if !strings.Contains(view, "The quarterly report draft is in the shared folder") || !strings.Contains(view, "Subject: Quarterly report draft") {
		t.Fatalf("the preview does not show the message:\n%s", view)
	}
	drain(t, p, p.Update(panetest.Key("j"))) // the preview follows the selection
	if view = ansi.Strip(p.View(120, 36)); !strings.Contains(view, "crème brûlée") {
		t.Fatalf("the preview did not follow to the second message:\n%s", view)
	}
}

// Dataset hits show their record's first columns; p shows the record.
func TestDatasetHitsShowTheRecord(t *testing.T) {
	p := scopedPane(t, "contacts", "London")
	view := ansi.Strip(p.View(120, 36))
	if !strings.Contains(view, "name: Ada Lovelace · email: ada@example.org · city: London") {
		t.Fatalf("the row lacks the record's summary:\n%s", view)
	}
	drain(t, p, p.Update(panetest.Key("p")))
	view = ansi.Strip(p.View(120, 36))
	if !strings.Contains(view, "note: First program") {
		t.Fatalf("the preview lacks the record:\n%s", view)
	}
}
