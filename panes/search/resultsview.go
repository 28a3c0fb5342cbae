package searchpane

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// listBlock draws the visible window of the results (content or scoped).
func (p *Pane) listBlock(w, h int) string {
	s := p.styles
	n := p.results.rowCount()
	if n == 0 {
		var msg string
		switch {
		case p.running && p.scanning > 0:
			msg = fmt.Sprintf("searching… %d %s scanned so far", p.scanning, plural(int(p.scanning), "file", "files"))
		case p.running:
			msg = "searching…"
		case p.results.stopped:
			msg = fmt.Sprintf("stopped · %d %s scanned (ctrl+r runs it again)", p.results.scanned, plural(int(p.results.scanned), "file", "files"))
		case strings.TrimSpace(p.composer.pattern()) == "":
			msg = "results appear here as you type"
		case p.composer.errText != "":
			msg = "fix the query above to search"
		case p.results.final != nil || p.results.scoped != nil:
			msg = "no matches"
		}
		p.results.list.Map.Reset(p.results.listTop, 0, 0)
		return panes.Block([]string{s.Muted.Render(msg)}, w, h)
	}
	p.results.list.Map.Reset(p.results.listTop, 0, w)
	top := p.results.list.Scroll(h)
	var lines []string
	if p.composer.isScoped() {
		lines, _ = p.results.list.Draw(h, func(i int, sel bool) []string { return []string{p.scopedRow(i, sel, w)} })
		return panes.Block(lines, w, h)
	}
	// line numbers as wide as the widest on screen
	nw := 1
	for i := top; i < n && i < top+h; i++ {
		if r := p.results.res.rows[i]; r.ev >= 0 {
			nw = max(nw, len(strconv.FormatUint(p.results.res.events[r.ev].LineNumber, 10)))
		}
	}
	lines, _ = p.results.list.Draw(h, func(i int, sel bool) []string { return []string{p.contentRow(i, sel, w, nw)} })
	return panes.Block(lines, w, h)
}

func (p *Pane) contentRow(i int, selected bool, w, nw int) string {
	s := p.styles
	r := p.results.res.rows[i]
	g := p.results.res.groups[r.group]
	if r.ev < 0 {
		count := fmt.Sprintf(" (%d)", g.matches)
		return p.safeField(g.path, max(w-len(count), 1), s.Heading) + s.Muted.Render(count)
	}
	ev := &p.results.res.events[r.ev]
	mark := " "
	if selected {
		mark = s.Cursor.Render("›")
	}
	sepc := ":"
	base := s.Text
	if ev.Type != "match" {
		sepc = "-"
		base = s.Muted
	}
	num := fmt.Sprintf("%*d%s ", nw, ev.LineNumber, sepc)
	avail := w - 1 - len(num)
	text := renderLine(ev.Line, eventSpans(ev), avail, p.lineOpts(ev, base))
	line := mark + s.Muted.Render(num) + text
	if selected {
		return panes.SelectRow(line, w, s.Selected)
	}
	return line
}

// lineOpts is how an event's line is drawn: a file's text (tabs expand),
// marked as cut where the engine cut it.
func (p *Pane) lineOpts(ev *search.Event, base lipgloss.Style) rowOpts {
	o := rowOpts{tabs: tabWidth, base: base, hl: p.styles.Match, warn: p.styles.Warning}
	if ev.Cut() {
		o.cutBefore = ev.TextOffset > 0
		// (Line is lossy UTF-8: invalid bytes made it longer than the
		// window, which then only seems to reach further.)
		o.cutAfter = ev.TextOffset+len(ev.Line) < ev.LineBytes
	}
	return o
}

// eventSpans is where a line's matches are: every submatch, or else the
// first one from its byte column and match_text.
func eventSpans(ev *search.Event) []search.Span {
	if ev.Type != "match" {
		return nil
	}
	if len(ev.Submatches) > 0 {
		return ev.Submatches
	}
	if ev.Column > 0 && ev.MatchText != "" {
		st := int(ev.Column - 1)
		return []search.Span{{Start: st, End: st + len(ev.MatchText)}}
	}
	return nil
}

func (p *Pane) scopedRow(i int, selected bool, w int) string {
	s := p.styles
	h := p.results.scoped.Hits[i]
	mark := " "
	if selected {
		mark = s.Cursor.Render("›")
	}
	var head string
	switch p.composer.scope().Kind {
	case scope.KindEmails:
		// date · sender · subject: how a person finds a message, not by
		// its Maildir file name
		date := "no date   "
		if len(h.Timestamp) >= 10 {
			date = h.Timestamp[:10]
		}
		head = mark + s.Muted.Render(date) + s.Subtle.Render(" · ") + p.safeField(h.Sender, max(w/4, 8), s.Label) +
			s.Subtle.Render(" · ") + p.safeField(h.Subject, max(w*3/10, 10), s.Heading)
		if h.Field == "subject" || h.Field == "from" {
			// the match is in the label already
			line := head
			if selected {
				return panes.SelectRow(line, w, s.Selected)
			}
			return line
		}
		head += s.Subtle.Render(" · ")
	case scope.KindDataset:
		head = mark + p.safeField(h.ID, max(w/6, 6), s.Heading) + " " + p.safeField(h.Summary, max(w/2, 10), s.Muted) + " "
	default:
		head = mark + p.safeField(h.ID, max(w*2/5, 8), s.Heading) + " "
	}
	head += p.safeField(h.Field, max(w/8, 4), s.Label) + s.Label.Render(": ")
	avail := w - lipgloss.Width(head)
	// A snippet's line ends and controls show as escapes (safetext), not
	// as spaces or as themselves.
	line := head + renderLine(h.Snippet, []search.Span{{Start: h.MatchStart, End: h.MatchEnd}}, avail,
		rowOpts{tabs: tabWidth, base: s.Text, hl: s.Match, warn: s.Warning})
	if selected {
		return panes.SelectRow(line, w, s.Selected)
	}
	return line
}

// errorLines is the file errors list, scrolled, under its heading.
func (r *resultList) errorLines(w, h int, s *themes.Styles) []string {
	head := s.Heading.Render(fmt.Sprintf("File errors (%d)", len(r.fileErrs))) + s.Muted.Render(" · e/esc close · ↑/↓ scroll")
	return append([]string{head}, r.errView.Window(r.layoutErrors(w, s), h-1)...)
}

// errLayout is the file errors laid out for one width. A search's errors
// grow by appends (the same backing array), so a frame wraps only those
// added since the last; another list (a new search, the final sorted one)
// is laid out anew.
type errLayout struct {
	width, n int
	of       *search.FileError // the list's first element: which list it is
	lines    []string
}

func (r *resultList) layoutErrors(w int, s *themes.Styles) []string {
	var of *search.FileError
	if len(r.fileErrs) > 0 {
		of = &r.fileErrs[0]
	}
	if r.errBody.width != w || r.errBody.of != of || r.errBody.n > len(r.fileErrs) {
		r.errBody = errLayout{width: w, of: of}
	}
	for _, e := range r.fileErrs[r.errBody.n:] {
		for _, l := range panes.Wrap(safetext.Line(e.Path)+": "+safetext.Line(e.Error), max(w-2, 1)) {
			r.errBody.lines = append(r.errBody.lines, "  "+s.Err.Render(l))
		}
	}
	r.errBody.n = len(r.fileErrs)
	return r.errBody.lines
}
