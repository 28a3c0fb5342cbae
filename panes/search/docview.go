package searchpane

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// showing reports whether the viewer fills the pane (a document, the
// error opening it, or "opening…").
func (d *docViewer) showing() bool { return d.doc != nil || d.err != nil || d.loading }

// open opens scope hit id off the UI goroutine.
func (d *docViewer) open(sc config.ScopeConfig, id string, open scopeOpener) tea.Cmd {
	d.loading = true
	d.gen++
	gen := d.gen
	return func() tea.Msg {
		doc, err := open(sc, id)
		return docMsg{gen: gen, doc: doc, err: err}
	}
}

// close goes back to the list, also while the document is still opening
// (its answer is then dropped).
func (d *docViewer) close() {
	d.doc, d.err, d.loading = nil, nil, false
	d.gen++
}

// got shows an opened document, unless the person went back before it
// opened.
func (d *docViewer) got(msg docMsg) {
	if msg.gen != d.gen || !d.loading {
		return
	}
	d.loading = false
	if msg.err != nil {
		d.err = msg.err
	} else {
		doc := msg.doc
		d.doc = &doc
	}
	d.view.Top()
}

// lines is the viewer of one scoped item: headers or fields, then the
// body, with query highlighted; scrollable.
func (d *docViewer) lines(w, h int, query string, s *themes.Styles) []string {
	if d.loading {
		return []string{s.Muted.Render("opening…")}
	}
	if d.err != nil {
		return []string{safeField(s, "cannot open: "+d.err.Error(), w, s.Err), s.Muted.Render("esc: back")}
	}
	head := safeField(s, d.doc.Title, max(w-20, 10), s.Title) + s.Muted.Render("  "+d.doc.Scope+" · esc back")
	body := d.body.layout(d.doc, w, query, s)
	return append([]string{head}, d.view.Window(body, h-1)...)
}

// docCache is a document laid out for one width: escaping and wrapping
// up to 4 MiB of text is done once, not on every frame.
type docCache struct {
	doc   *scope.Document
	width int
	query string
	lines []string
}

// layout is a document's fields and body, made safe (safetext:
// escapes marked, tabs expanded in the body), wrapped to w and
// highlighted.
func (c *docCache) layout(d *scope.Document, w int, query string, s *themes.Styles) []string {
	if c.doc == d && c.width == w && c.query == query {
		return c.lines
	}
	q := safetext.Line(query)
	mark := func(line string, base lipgloss.Style) string { return highlightAll(line, q, base, s.Match, s.Warning) }
	var body []string
	for _, f := range d.Fields {
		name := safetext.Line(f.Name)
		wrapped := panes.Wrap(safetext.Line(f.Value), max(w-2-len(name), 1))
		if len(wrapped) == 0 {
			wrapped = []string{""}
		}
		body = append(body, s.Label.Render(name+": ")+mark(wrapped[0], s.Text))
		for _, more := range wrapped[1:] {
			body = append(body, strings.Repeat(" ", len(name)+2)+mark(more, s.Text))
		}
	}
	if d.Text != "" {
		if len(body) > 0 {
			body = append(body, "")
		}
		for _, raw := range strings.Split(d.Text, "\n") {
			line := safetext.InspectWith(strings.TrimSuffix(raw, "\r"), safetext.Options{TabWidth: tabWidth}).String()
			for _, l := range panes.Wrap(line, max(w, 1)) {
				body = append(body, mark(l, s.Text))
			}
		}
	}
	if d.Truncated {
		body = append(body, s.Warning.Render("… cut at 4 MiB"))
	}
	*c = docCache{doc: d, width: w, query: query, lines: body}
	return body
}

// highlightAll styles every occurrence of q (case-sensitive, like the
// scoped search itself) in line, which safetext has already escaped; the
// escapes in it (a backslash and what follows: \x1b, \u202e, \U000e0001,
// \n, \t) are marked with warn.
func highlightAll(line, q string, base, hl, warn lipgloss.Style) string {
	var b strings.Builder
	for line != "" {
		i := -1
		if q != "" {
			i = strings.Index(line, q)
		}
		if i < 0 {
			b.WriteString(markEscapes(line, base, warn))
			break
		}
		b.WriteString(markEscapes(line[:i], base, warn))
		b.WriteString(hl.Render(q))
		line = line[i+len(q):]
	}
	return b.String()
}

// markEscapes styles text that safetext escaped: its escapes with warn,
// the rest with base. A backslash from the data itself is shown as it is
// and may be marked with what follows it; the marking is a help, the
// escaping is what keeps the terminal safe.
func markEscapes(text string, base, warn lipgloss.Style) string {
	if !strings.Contains(text, `\`) {
		return base.Render(text)
	}
	var b strings.Builder
	for text != "" {
		i := strings.IndexByte(text, '\\')
		if i < 0 || i+1 >= len(text) {
			b.WriteString(base.Render(text))
			break
		}
		n := escapeLen(text[i:])
		if n == 0 {
			b.WriteString(base.Render(text[:i+1]))
			text = text[i+1:]
			continue
		}
		if i > 0 {
			b.WriteString(base.Render(text[:i]))
		}
		b.WriteString(warn.Render(text[i : i+n]))
		text = text[i+n:]
	}
	return b.String()
}

// escapeLen is the length of the safetext escape text starts with, or 0.
func escapeLen(text string) int {
	hex := func(s string, n int) bool {
		if len(s) < n {
			return false
		}
		for i := range n {
			if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
				return false
			}
		}
		return true
	}
	switch {
	case len(text) >= 2 && strings.IndexByte("nrt", text[1]) >= 0:
		return 2
	case strings.HasPrefix(text, `\x`) && hex(text[2:], 2):
		return 4
	case strings.HasPrefix(text, `\u`) && hex(text[2:], 4):
		return 6
	case strings.HasPrefix(text, `\U`) && hex(text[2:], 8):
		return 10
	}
	return 0
}

// docViewer is a scope hit opened over the whole pane.
type docViewer struct {
	doc     *scope.Document
	err     error
	loading bool
	gen     uint64 // the open a docMsg must answer: back (esc) while opening drops the late document
	view    panes.Viewport
	body    docCache // the document's lines laid out, for the width they were laid out at
}
