package memorypane

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/memory"
)

func TestFieldNavigation(t *testing.T) {
	p := newPane(demoStore(t))
	if !p.Capturing() || p.focus != fQuery {
		t.Fatalf("the pane should open in the query field, capturing keys")
	}
	// every field in tab order, then back to the query
	for i := 1; i <= nFields; i++ {
		press(t, p, "<tab>")
		if p.focus != i%nFields {
			t.Fatalf("after %d tabs focus is %s", i, fieldNames[p.focus])
		}
	}
	press(t, p, "<s-tab>")
	if p.focus != fLimit {
		t.Fatalf("shift+tab from query went to %s, want limit", fieldNames[p.focus])
	}
	// typed text lands in the focused field only; q and 1 are text here
	press(t, p, "7<s-tab><s-tab>q1")
	if got := p.inputs[fLimit].Value(); got != "7" {
		t.Fatalf("limit = %q", got)
	}
	if got := p.inputs[fFrom].Value(); got != "q1" {
		t.Fatalf("from = %q", got)
	}
	if p.inputs[fQuery].Value() != "" {
		t.Fatalf("query got keys meant for other fields: %q", p.inputs[fQuery].Value())
	}
	press(t, p, "<esc>")
	if p.Capturing() || p.mode != modeList {
		t.Fatal("esc did not leave the fields")
	}
	press(t, p, "e")
	if !p.Capturing() || p.mode != modeFields {
		t.Fatal("e did not return to the fields")
	}
}

// Must-match / must-not-match: each row names what the form holds, which
// field must show a complaint (in the engine's words) or none when valid.
func TestInlineValidation(t *testing.T) {
	cases := []struct {
		name                      string
		query, tags, source, from string
		to, limit                 string
		field                     int // -1: valid
		want                      string
	}{
		{"valid plain", "python", "", "", "", "", "", -1, ""},
		{"valid all filters", "python", "python, programming", "notes", "2024-01-01", "2025-06-01", "5", -1, ""},
		{"valid same day", "python", "", "", "2025-05-11", "2025-05-11", "100", -1, ""},
		{"no query, a limit: the newest", "", "", "", "", "", "5", -1, ""},
		{"no query, filters", "", "python", "notes", "2024-01-01", "2025-06-01", "", -1, ""},
		{"no query, a bad date", "", "", "", "2025-02-30", "", "", fFrom, "filters.date_from: invalid date format, expected YYYY-MM-DD"},
		{"blank query", "   ", "", "", "", "", "", fQuery, "query: cannot be whitespace-only"},
		{"long query", strings.Repeat("a", 1001), "", "", "", "", "", fQuery, "query: ensure this value has at most 1000 characters"},
		{"limit letters", "python", "", "", "", "", "abc", fLimit, "limit: value is not a valid integer"},
		{"limit fraction", "python", "", "", "", "", "10.5", fLimit, "limit: value is not a valid integer"},
		{"limit zero", "python", "", "", "", "", "0", fLimit, "limit: ensure this value is greater than or equal to 1"},
		{"limit too big", "python", "", "", "", "", "101", fLimit, "limit: ensure this value is less than or equal to 100"},
		{"bad month", "python", "", "", "2025-13-01", "", "", fFrom, "filters.date_from: invalid date format, expected YYYY-MM-DD"},
		{"bad to", "python", "", "", "", "1/2/2025", "", fTo, "filters.date_to: invalid date format, expected YYYY-MM-DD"},
		{"from after to", "python", "", "", "2025-06-02", "2025-06-01", "", fTo, "filters: date_from must be <= date_to"},
		{"long tag", "python", strings.Repeat("t", 101), "", "", "", "", fTags, "filters.tags: ensure each tag has at most 100 characters"},
		{"long source", "python", "", strings.Repeat("s", 101), "", "", "", fSource, "filters.source: ensure this value has at most 100 characters"},
	}
	st := demoStore(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPane(st)
			for f, v := range map[int]string{fQuery: c.query, fTags: c.tags, fSource: c.source, fFrom: c.from, fTo: c.to, fLimit: c.limit} {
				p.inputs[f].SetValue(v)
			}
			cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
			if c.field < 0 {
				if cmd == nil || p.mode != modeList || hasInvalid(p) {
					t.Fatalf("valid form was not searched: %v", p.invalid)
				}
				return
			}
			if cmd != nil {
				t.Fatal("an invalid form started a search")
			}
			if len(p.invalid[c.field]) != 1 || p.invalid[c.field][0].String() != c.want {
				t.Fatalf("field %s complaints %v, want %q", fieldNames[c.field], p.invalid[c.field], c.want)
			}
			if p.focus != c.field || !p.Capturing() {
				t.Fatalf("focus %s, want the broken field %s", fieldNames[p.focus], fieldNames[c.field])
			}
			view := ansi.Strip(p.View(200, 20))
			if !strings.Contains(view, "✗ "+c.want) {
				t.Fatalf("complaint not shown:\n%s", view)
			}
			// editing the field takes its complaint away
			press(t, p, "x")
			if len(p.invalid[c.field]) != 0 {
				t.Fatalf("complaint stayed after an edit: %v", p.invalid[c.field])
			}
		})
	}
}

// The form sends the engine the same arguments object a client would.
func TestArgumentsObject(t *testing.T) {
	p := newPane(nil)
	for f, v := range map[int]string{fQuery: " python ", fTags: "a, ,b ,", fSource: "notes", fFrom: "2025-01-01", fTo: "2025-02-01", fLimit: "7"} {
		p.inputs[f].SetValue(v)
	}
	var got map[string]any
	if err := json.Unmarshal(p.arguments(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"query": " python ", "limit": 7.0, "filters": map[string]any{
		"tags": []any{"a", "b"}, "source": "notes", "date_from": "2025-01-01", "date_to": "2025-02-01"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	// an empty form sends nothing, so the engine's defaults apply; without
	// a query the filters alone choose
	q := newPane(nil)
	if got := string(q.arguments()); got != `{}` {
		t.Fatalf("empty form: %s", got)
	}
}

func searched(t *testing.T, st *memory.Store, query string) *Pane {
	t.Helper()
	p := newPane(st)
	press(t, p, query+"<enter>")
	if len(p.out.Hits) == 0 {
		t.Fatalf("no hits for %q: %s", query, p.out.Result.Text())
	}
	return p
}

func TestResultsAreTheToolsOutcome(t *testing.T) {
	st := demoStore(t)
	p := searched(t, st, "python threads")
	want := memory.NewTool(st, nil).Execute(context.Background(), []byte(`{"query":"python threads"}`))
	if p.out.Result.Text() != want.Text() {
		t.Fatalf("pane holds a different answer than the tool gives:\n%s\n---\n%s", p.out.Result.Text(), want.Text())
	}
	view := ansi.Strip(p.View(120, 40))
	first, _, _ := strings.Cut(want.Text(), "\n")
	if !strings.Contains(view, first) {
		t.Fatalf("the seed's first line %q is not on screen:\n%s", first, view)
	}
	// each visible hit shows its score as the seed rounds it, and its date
	h := p.out.Hits[0]
	for _, s := range []string{"0." + strings.Split(want.Text(), "[Score: 0.")[1][:2], h.CreatedAt.UTC().Format("2006-01-02"), h.Source, "#" + h.Tags[0]} {
		if !strings.Contains(view, s) {
			t.Fatalf("missing %q:\n%s", s, view)
		}
	}
}

func TestFuzzyFilterNarrows(t *testing.T) {
	p := searched(t, demoStore(t), "python")
	all := len(p.shown)
	press(t, p, "/")
	if !p.Capturing() {
		t.Fatal("/ did not open the filter")
	}
	press(t, p, "mypy")
	if len(p.shown) == 0 || len(p.shown) >= all {
		t.Fatalf("filter kept %d of %d", len(p.shown), all)
	}
	// the filter reads the text, the tags and the source: a kept hit has
	// the letters in order there, and the ones in its text are marked
	for _, i := range p.shown {
		hay := haystacks(p, i)
		if !inOneField("mypy", hay) {
			t.Fatalf("hit %d kept without the letters: %q", i, hay)
		}
		for _, m := range p.marks[i] {
			if !strings.ContainsRune("mypyMYPY", rune(p.previews[i][m])) {
				t.Fatalf("hit %d marks %q", i, p.previews[i][m])
			}
		}
	}
	if len(p.marks[p.shown[0]]) != 4 {
		t.Fatalf("the best-ranked hit has %d marks in its text, want 4 (text matches rank first)", len(p.marks[p.shown[0]]))
	}
	// a dropped hit really lacks the letters in order
	kept := map[int]bool{}
	for _, i := range p.shown {
		kept[i] = true
	}
	for i := range p.previews {
		if hay := haystacks(p, i); !kept[i] && inOneField("mypy", hay) {
			t.Fatalf("hit %d matches but was dropped: %q", i, hay)
		}
	}
	// matched characters are drawn with MatchChar
	i := p.shown[0]
	m := p.marks[i][0]
	if view := p.View(120, 40); !strings.Contains(view, p.styles.MatchChar.Render(p.previews[i][m:m+1])) {
		t.Fatal("matched characters are not highlighted")
	}
	// enter keeps the filter, esc in the list clears it
	press(t, p, "<enter>")
	if p.Capturing() || p.filter.Value() != "mypy" {
		t.Fatal("enter did not keep the filter")
	}
	press(t, p, "<esc>")
	if len(p.shown) != all {
		t.Fatalf("esc left %d of %d", len(p.shown), all)
	}
	// a pattern nothing matches says so
	press(t, p, "/qqqqqq")
	if len(p.shown) != 0 || !strings.Contains(ansi.Strip(p.View(100, 30)), "no hit matches the filter") {
		t.Fatal("an unmatched filter was not reported")
	}
}

// haystacks is a hit's text, tags and source: a pattern must match within
// one of them.
func haystacks(p *Pane, i int) []string {
	return []string{fieldSource{p, fieldText}.String(i), fieldSource{p, fieldTags}.String(i), fieldSource{p, fieldSrc}.String(i)}
}

func inOneField(pat string, fields []string) bool {
	for _, f := range fields {
		if subsequence(pat, strings.ToLower(f)) {
			return true
		}
	}
	return false
}

func subsequence(pat, s string) bool {
	for _, r := range pat {
		i := strings.IndexRune(s, r)
		if i < 0 {
			return false
		}
		s = s[i+len(string(r)):]
	}
	return true
}

// A slow search that was superseded must not overwrite the newer answer.
func TestStaleGenerationDropped(t *testing.T) {
	p := newPane(demoStore(t))
	press(t, p, "python")
	first := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	press(t, p, "e<bs><bs><bs><bs><bs><bs>garden")
	second := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if first == nil || second == nil {
		t.Fatal("a valid search returned no command")
	}
	newer, older := second(), first()
	p.Update(older)
	if !p.running || p.searched {
		t.Fatal("the superseded search's answer was applied")
	}
	p.Update(newer)
	if p.out.Request.Query != "garden" || p.running {
		t.Fatalf("shown query %q", p.out.Request.Query)
	}
	p.Update(older)
	if p.out.Request.Query != "garden" {
		t.Fatal("a late old answer replaced the newer one")
	}
}

func TestDetailReloadsFromStore(t *testing.T) {
	st := demoStore(t)
	p := searched(t, st, "garden")
	press(t, p, "j")
	h, _ := p.Selected()
	cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if p.mode != modeDetail || cmd == nil {
		t.Fatal("enter did not open the detail with a reload")
	}
	msg := cmd()
	dm, ok := msg.(detailMsg)
	if !ok || dm.err != nil || dm.mem.ID != h.ID {
		t.Fatalf("reload returned %#v", msg)
	}
	want, _ := st.Get(context.Background(), h.ID)
	p.Update(msg)
	if !reflect.DeepEqual(p.detail.mem, want) {
		t.Fatalf("detail %+v, store %+v", p.detail.mem, want)
	}
	view := ansi.Strip(p.View(100, 30))
	if !strings.Contains(view, want.Text[:40]) || !strings.Contains(view, "hit 2 of") {
		t.Fatalf("detail view:\n%s", view)
	}
	// a reload that lands after the detail closed changes nothing
	press(t, p, "<esc>")
	if p.mode != modeList || p.detail != nil {
		t.Fatal("esc did not close the detail")
	}
	p.Update(msg)
	if p.detail != nil {
		t.Fatal("a late reload reopened the detail")
	}
	// a failing reload keeps the search's copy and says why
	press(t, p, "<enter>")
	p.Update(detailMsg{gen: p.detailGen, err: memory.ErrNotFound})
	view = ansi.Strip(p.View(100, 30))
	if !strings.Contains(view, "could not reload this memory: memory not found") || !strings.Contains(view, h.Text[:40]) {
		t.Fatalf("failed reload view:\n%s", view)
	}
}

func TestDetailScrollsLongText(t *testing.T) {
	p := searched(t, demoStore(t), "deliberately long memory")
	press(t, p, "<enter>")
	if len([]rune(p.detail.mem.Text)) <= 200 {
		t.Fatal("the demo's long memory is not longer than a preview")
	}
	// read the text a line at a time by scrolling: the first body line at
	// each scroll position, then the rest of the last screen
	body := func() []string {
		lines := strings.Split(ansi.Strip(p.View(30, 12)), "\n")
		return lines[len(lines)-p.detail.view.Height():]
	}
	var read []string
	last := -1
	for {
		lines := body() // drawing clamps the scroll at the bottom
		if p.detail.view.Offset() == last {
			read = append(read, lines[1:]...)
			break
		}
		last = p.detail.view.Offset()
		read = append(read, lines[0])
		press(t, p, "j")
	}
	got := strings.Join(strings.Fields(strings.Join(read, " ")), " ")
	want := strings.Join(strings.Fields(p.detail.mem.Text), " ")
	if got != want {
		t.Fatalf("scrolling through the detail read\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(strings.Join(body(), "\n"), "more lines") {
		t.Fatal("the bottom still says there is more")
	}
}

// Every size renders exactly width×height without panicking, in each mode.
func TestSizeSweep(t *testing.T) {
	st := demoStore(t)
	states := map[string]*Pane{}
	states["form"] = newPane(st)
	p := newPane(st)
	press(t, p, "python<tab>a<tab><tab>x<tab><tab>abc<enter>")
	states["invalid"] = p
	states["results"] = searched(t, st, "deliberately long memory")
	f := searched(t, st, "python")
	press(t, f, "/mypy")
	states["filter"] = f
	d := searched(t, st, "deliberately long memory")
	press(t, d, "<enter>jj")
	states["detail"] = d
	for name, p := range states {
		for w := 1; w <= 110; w += 3 {
			for h := 1; h <= 32; h += 2 {
				view := p.View(w, h)
				lines := strings.Split(view, "\n")
				if len(lines) != h {
					t.Fatalf("%s %dx%d: %d lines", name, w, h, len(lines))
				}
				for i, l := range lines {
					if lw := lipgloss.Width(l); lw != w {
						t.Fatalf("%s %dx%d: line %d is %d wide: %q", name, w, h, i, lw, ansi.Strip(l))
					}
				}
			}
		}
	}
}

// Moving the selection past the bottom keeps it on screen.
func TestSelectionStaysVisible(t *testing.T) {
	p := searched(t, demoStore(t), "python")
	for i := 0; i < len(p.shown); i++ {
		view := ansi.Strip(p.View(80, 12))
		if !strings.Contains(view, "▸") {
			t.Fatalf("selection %d off screen:\n%s", p.list.Cursor(), view)
		}
		press(t, p, "j")
	}
	press(t, p, "g")
	if p.list.Cursor() != 0 {
		t.Fatal("g did not go to the first hit")
	}
	press(t, p, "G")
	if p.list.Cursor() != len(p.shown)-1 {
		t.Fatal("G did not go to the last hit")
	}
}
