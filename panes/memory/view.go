package memorypane

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// Display widths of the filter fields' values; fixed so the form does not
// jump while typing.
// The date fields are 11 wide: a full YYYY-MM-DD and the cursor cell after
// it, so a focused date never scrolls to "026-01-01".
var fieldWidth = [nFields]int{fTags: 18, fSource: 12, fFrom: 11, fTo: 11, fLimit: 5}

var placeholder = [nFields]string{fQuery: "what to recall", fTags: "any (a, b)", fSource: "any",
	fFrom: "YYYY-MM-DD", fTo: "YYYY-MM-DD", fLimit: strconv.Itoa(memory.DefaultLimit)}

const (
	barCells = 10
	indent   = 6 // preview lines start under the score bar
)

// View renders the form, the status line and the visible hits, or the detail.
func (p *Pane) View(w, h int) string {
	p.list.Map.Reset(0, 0, 0) // a frame without the list (the detail) maps no rows for clicks
	if w <= 0 || h <= 0 {
		return panes.Block(nil, w, h)
	}
	if p.mode == modeDetail && p.detail != nil {
		return panes.Block(p.detailLines(w, h), w, h)
	}
	s := p.styles
	lines := p.formLines(w)
	if p.o.OpenErr != nil {
		lines = append(lines, panes.Wrap(s.Err.Render("memory store unavailable: ")+p.safe(p.o.OpenErr.Error(), s.Err), w)...)
	}
	lines = append(lines, s.Subtle.Render(strings.Repeat("─", w)))
	lines = append(lines, p.statusLines(w)...)
	p.list.Map.Reset(len(lines), 0, w)
	lines = append(lines, p.listLines(w, max(h-len(lines), 0))...)
	return panes.Block(lines, w, h)
}

// renderField draws one field: its label, then its value, placeholder or
// (when focused) its text with the cursor, padded to width cells.
func (p *Pane) renderField(i, width int) string {
	s := p.styles
	f := &p.inputs[i]
	focused := p.mode == modeFields && p.focus == i
	mark := " "
	label := s.Label.Render(fieldNames[i] + " ")
	if focused {
		mark = s.Cursor.Render("›")
		label = s.Cursor.Render(fieldNames[i] + " ")
	}
	var val string
	switch {
	case focused:
		before, at, after := f.Window(width)
		val = s.InputFocused.Render(before) + s.Cursor.Reverse(true).Render(at) + s.InputFocused.Render(after)
	case f.Value() == "":
		val = s.Subtle.Render(panes.Truncate(placeholder[i], width))
	default:
		// a pasted value may hold what the person cannot see: marked, cut after escaping
		val = p.render(safetext.Inspect(f.Value()).Truncate(width), s.Input)
	}
	if len(p.invalid[i]) > 0 && !focused {
		label = s.Err.Render(fieldNames[i] + " ")
	}
	return mark + label + panes.Fit(val, width)
}

// formLines lays out the query on its own line and packs the filter fields
// into as few lines as the width allows, each line followed by the inline
// complaints of the fields on it, aligned under their field when they fit.
func (p *Pane) formLines(w int) []string {
	s := p.styles
	var out []string
	qw := max(w-len(fieldNames[fQuery])-2, 1)
	out = append(out, p.renderField(fQuery, qw))
	out = append(out, p.errorLines(fQuery, 0, w)...)

	type placed struct{ field, col int }
	var line string
	var row []placed
	col := 0
	flush := func() {
		if len(row) == 0 {
			return
		}
		out = append(out, line)
		for _, pl := range row {
			out = append(out, p.errorLines(pl.field, pl.col, w)...)
		}
		line, row, col = "", nil, 0
	}
	for i := fTags; i < nFields; i++ {
		cellW := 1 + len(fieldNames[i]) + 1 + fieldWidth[i]
		gap := 0
		if col > 0 {
			gap = 2
		}
		if col > 0 && col+gap+cellW > w {
			flush()
			gap = 0
		}
		line += strings.Repeat(" ", gap) + p.renderField(i, fieldWidth[i])
		row = append(row, placed{i, col + gap})
		col += gap + cellW
	}
	flush()
	for _, e := range p.general {
		out = append(out, panes.Wrap(s.Err.Render("✗ ")+p.safe(e.String(), s.Err), w)...)
	}
	return out
}

// errorLines are a field's validation failures in the engine's own words.
func (p *Pane) errorLines(i, col, w int) []string {
	var out []string
	for _, e := range p.invalid[i] {
		msg := safetext.Inspect(e.String()) // the engine's words may quote the input
		c := col + 1                        // under the label, past the focus mark
		if c+2+msg.Width() > w {
			c = 0
		}
		for _, l := range panes.Wrap(p.styles.Err.Render("✗ ")+p.render(msg, p.styles.Err), w-c) {
			out = append(out, strings.Repeat(" ", c)+l)
		}
	}
	return out
}

// statusLines say what the list below holds: the seed's own first line for
// hits, its exact text for no results and errors, or what to do next.
func (p *Pane) statusLines(w int) []string {
	s := p.styles
	var out []string
	text := p.out.Result.Text()
	switch {
	case p.running:
		out = append(out, s.Muted.Render("searching…"))
	case p.browseErr != nil:
		out = append(out, panes.Wrap(p.safe("cannot list memories: "+p.browseErr.Error(), s.Err), w)...)
	case p.browsing && p.filtered:
		out = append(out, p.filteredLine())
	case p.browsing && len(p.out.Hits) == 0:
		out = append(out, s.Muted.Render("no memories yet · e to search"))
	case p.browsing:
		what := fmt.Sprintf("%d newest memories", len(p.out.Hits))
		if len(p.out.Hits) == 1 {
			what = "the newest memory"
		}
		line := s.Heading.Render(what) + s.Muted.Render(" · e to search")
		if p.more {
			line += s.Warning.Render(" · older ones exist: search or filter by date to reach them")
		}
		out = append(out, line)
	case p.gen > 0 && p.o.Tool == nil:
		out = append(out, s.Err.Render("memory search is unavailable"))
	case hasInvalid(p):
		out = append(out, s.Muted.Render("fix the form above to search"))
	case !p.searched:
		out = append(out, s.Muted.Render("type a query and press enter to search memory"))
	case p.out.Result.IsError:
		out = append(out, panes.Wrap(p.safeLines(text, s.Err), w)...)
	case len(p.out.Hits) == 0:
		out = append(out, panes.Wrap(p.safeLines(text, s.Text), w)...)
	default:
		first, _, _ := strings.Cut(text, "\n")
		line := p.safe(first, s.Heading) + s.Muted.Render("  “") + p.safe(p.out.Request.Query, s.Muted) + s.Muted.Render("”")
		if l := p.out.Request.Limit; l > 0 && len(p.out.Hits) >= l {
			// the engine stopped at the limit: more memories may match
			line += s.Warning.Render(fmt.Sprintf(" · more may match: raise limit (%d)", l))
		}
		out = append(out, line)
	}
	if p.mode == modeFilter || (p.filter.Value() != "" && len(p.out.Hits) > 0) {
		count := s.Muted.Render(fmt.Sprintf("  %d of %d match", len(p.shown), len(p.out.Hits)))
		var val string
		if p.mode == modeFilter {
			before, at, after := p.filter.Window(max(w-24, 1))
			val = s.InputFocused.Render(before) + s.Cursor.Reverse(true).Render(at) + s.InputFocused.Render(after)
		} else {
			val = p.safe(p.filter.Value(), s.Input)
		}
		out = append(out, s.Cursor.Render("/ ")+val+count)
	}
	return out
}

// filteredLine says what a listing by filters holds: how many, newest
// first, and whether older ones passing the filters were left out.
func (p *Pane) filteredLine() string {
	s := p.styles
	n := len(p.out.Hits)
	if n == 0 {
		return s.Muted.Render("no memories match the filters · e to change them")
	}
	what := fmt.Sprintf("%d memories match the filters", n)
	if n == 1 {
		what = "1 memory matches the filters"
	}
	line := s.Heading.Render(what) + s.Muted.Render(", newest first")
	if p.more {
		line += s.Warning.Render(fmt.Sprintf(" · older ones exist: raise limit (%d) or narrow the dates", p.out.Request.Limit))
	}
	return line
}

// itemLines is one hit: a header (rank, score bar and value, date, source,
// tag chips) and its preview wrapped under it, matched characters marked.
func (p *Pane) itemLines(idx int, selected bool, w int) []string {
	s := p.styles
	h := p.out.Hits[idx]
	cursor := "  "
	if selected {
		cursor = s.Cursor.Render("▸ ")
	}
	head := cursor + s.Muted.Render(fmt.Sprintf("%3d", idx+1)) + " "
	if !p.browsing { // browsing asks nothing: there is no score
		head += p.bar(h.Score) + " " + s.Text.Render(strconv.FormatFloat(h.Score, 'f', 2, 64)) + "  "
		if h.Match != "" { // a hybrid search says how it found the memory
			head += s.Muted.Render(matchLabel(h.Match)) + "  "
		}
	}
	head += s.Muted.Render(h.CreatedAt.UTC().Format("2006-01-02")) + "  " + p.safe(h.Source, s.Label)
	if chips := p.chips(h.Tags); chips != "" {
		head += "  " + chips
	}
	if selected {
		head = panes.SelectRow(head, w, s.Selected)
	}
	out := []string{head}
	pad := strings.Repeat(" ", min(indent, max(w-1, 0)))
	shown := p.previews[idx]
	pos := 0 // where the line starts in the shown preview, for the filter's marks
	for _, l := range p.texts[idx].Wrap(max(w-len(pad), 1)) {
		ls := l.String()
		for pos < len(shown) && !strings.HasPrefix(shown[pos:], ls) && shown[pos] == ' ' {
			pos++ // the spaces a line was broken at
		}
		out = append(out, pad+p.highlight(l, pos, p.marks[idx]))
		pos += len(ls)
	}
	return out
}

func (p *Pane) bar(score float64) string {
	n := min(max(int(math.Round(score*barCells)), 0), barCells)
	return p.styles.Success.Render(strings.Repeat("█", n)) + p.styles.Subtle.Render(strings.Repeat("░", barCells-n))
}

func (p *Pane) chips(tags []string) string {
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = p.styles.Badge.Render("#") + p.safe(t, p.styles.Badge)
	}
	return strings.Join(parts, " ")
}

// render draws text made safe by safetext: its own parts in base, each
// escape (a control or invisible character of the data) in the warning style,
// so it cannot pass for text the data really shows.
func (p *Pane) render(t safetext.Text, base lipgloss.Style) string {
	var b strings.Builder
	for _, sp := range t.Spans {
		if sp.Escaped {
			b.WriteString(p.styles.Warning.Render(sp.Text))
		} else {
			b.WriteString(base.Render(sp.Text))
		}
	}
	return b.String()
}

// safe draws untrusted text (memory sources, tags, queries, messages that
// quote them) on one line: line ends, controls and invisible characters are
// marked escapes, never passed to the terminal.
func (p *Pane) safe(s string, base lipgloss.Style) string {
	return p.render(safetext.Inspect(s), base)
}

// safeLines lays out a multi-line text line by line, each line made safe on
// its own: the data's line ends become Vigil's, nothing else does.
func (p *Pane) safeLines(s string, base lipgloss.Style) string {
	lines := safetext.InspectLines(s, safetext.Options{TabWidth: tabWidth})
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p.render(l, base)
	}
	return strings.Join(out, "\n")
}

// tabWidth lays out tabs in memory texts, where they are indentation.
const tabWidth = 4

// highlight draws a line of a preview (made safe) with the matched bytes of
// its shown text (fuzzy's byte offsets in the whole preview, each the start
// of a rune; the line starts at byte start) in MatchChar, its escapes in the
// warning style and the rest as plain text.
func (p *Pane) highlight(t safetext.Text, start int, marks []int) string {
	s := p.styles
	if len(marks) == 0 {
		return p.render(t, s.Text)
	}
	var b strings.Builder
	off, mi := start, 0 // byte offset of the span in the shown preview; next mark
	for mi < len(marks) && marks[mi] < start {
		mi++
	}
	for _, sp := range t.Spans {
		end := off + len(sp.Text)
		if sp.Escaped {
			b.WriteString(s.Warning.Render(sp.Text)) // an escape stays a warning even when matched
			for mi < len(marks) && marks[mi] < end {
				mi++
			}
			off = end
			continue
		}
		run := off // start of the pending unmatched run
		for ; mi < len(marks) && marks[mi] < end; mi++ {
			m := marks[mi]
			if m < run {
				continue
			}
			_, size := utf8.DecodeRuneInString(sp.Text[m-off:])
			if m > run {
				b.WriteString(s.Text.Render(sp.Text[run-off : m-off]))
			}
			b.WriteString(s.MatchChar.Render(sp.Text[m-off : m-off+size]))
			run = m + size
		}
		if run < end {
			b.WriteString(s.Text.Render(sp.Text[run-off:]))
		}
		off = end
	}
	return b.String()
}

// listLines renders only the hits that are visible: from the first shown
// item down until the list height is full, scrolled so the selected hit fits
// (with a line left for the "more" hint when hits follow it).
func (p *Pane) listLines(w, h int) []string {
	if h <= 0 || len(p.shown) == 0 {
		if h > 0 && p.searched && len(p.out.Hits) > 0 {
			return []string{p.styles.Muted.Render("no hit matches the filter; esc clears it")}
		}
		return nil
	}
	p.listW = w
	// a line for the "more" hint below, when one is left beside the
	// selected hit: in a one-line list the hit itself takes the line (enter
	// opens what the person sees)
	room, hint := h, h > 1
	if p.list.Cursor() < len(p.shown)-1 && hint {
		room = h - 1
	}
	top := p.list.Scroll(room)
	out, whole := p.list.Draw(h, func(i int, selected bool) []string { return p.itemLines(p.shown[i], selected, w) })
	if below := len(p.shown) - top - whole; below > 0 && len(out) == h && hint {
		out[h-1] = p.styles.Muted.Render(fmt.Sprintf("↓ %d more", below))
	}
	return out
}

func (p *Pane) itemHeight(idx, w int) int {
	return 1 + len(p.texts[idx].Wrap(max(w-min(indent, max(w-1, 0)), 1)))
}

// detailLines show one memory in full: its metadata, then its text wrapped
// and scrolled. Nothing is cut off without a way to scroll to it.
func (p *Pane) detailLines(w, h int) []string {
	s, d := p.styles, p.detail
	m := d.mem
	head := []string{s.Heading.Render(fmt.Sprintf("Memory #%d", m.ID)) + s.Muted.Render(fmt.Sprintf("  · hit %d of %d", d.rank, len(p.out.Hits)))}
	meta := fmt.Sprintf("source %s · created %s", p.safe(m.Source, s.Text), m.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	if !p.browsing { // a listing ranked nothing: no score to show
		meta = fmt.Sprintf("score %s %s · ", p.bar(d.hit.Score), strconv.FormatFloat(d.hit.Score, 'f', 2, 64)) + meta
	}
	if ago := age(p.o.Now().Sub(m.CreatedAt)); ago != "" {
		meta += " (" + ago + ")"
	}
	head = append(head, panes.Wrap(meta, w)...)
	if chips := p.chips(m.Tags); chips != "" {
		head = append(head, panes.Wrap("tags "+chips, w)...)
	}
	if note := safetext.HiddenNote(hiddenIn(m)); note != "" {
		head = append(head, panes.Wrap(s.Warning.Render("⚠ "+note), w)...)
	}
	// While the reload runs the search's copy is shown: it is the same memory,
	// so the screen does not flicker; a failed reload says so.
	if d.err != nil {
		head = append(head, panes.Wrap(s.Err.Render("could not reload this memory: ")+p.safe(d.err.Error(), s.Err)+
			s.Err.Render(" (showing the search's copy)"), w)...)
	}
	head = append(head, s.Subtle.Render(strings.Repeat("─", w)))
	var body []string
	for _, line := range safetext.InspectLines(m.Text, safetext.Options{TabWidth: tabWidth}) {
		for _, l := range line.Wrap(w) { // never splitting an escape across lines
			body = append(body, p.render(l, s.Text))
		}
	}
	view := d.view.Window(body, max(h-len(head), 0))
	end := d.view.Offset() + len(view)
	if end < len(body) && len(view) > 0 {
		view = append([]string(nil), view...)
		view[len(view)-1] = s.Muted.Render(fmt.Sprintf("↓ %d more lines — j/pgdn to scroll", len(body)-end+1))
	}
	return append(head, view...)
}

// hiddenIn counts the characters of a memory shown as escapes: in its text
// (laid out line by line, so its line ends and tabs are not hidden) and in
// its source and tags.
func hiddenIn(m memory.Memory) int {
	n := safetext.Hidden(m.Source)
	for _, t := range m.Tags {
		n += safetext.Hidden(t)
	}
	for _, l := range safetext.InspectLines(m.Text, safetext.Options{TabWidth: tabWidth}) {
		n += l.Hidden
	}
	return n
}

func age(d time.Duration) string {
	switch {
	case d < 0:
		return ""
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 48*time.Hour:
		return "1 day ago"
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

// hasInvalid reports a form the engine refused: the list was cleared.
func hasInvalid(p *Pane) bool {
	if len(p.general) > 0 {
		return true
	}
	for _, e := range p.invalid {
		if len(e) > 0 {
			return true
		}
	}
	return false
}

// matchLabel names how a hybrid search found a memory, in the width of the
// longest so that rows line up: by keyword, by meaning, or both.
func matchLabel(match string) string {
	switch match {
	case "keyword", "meaning", "both":
		return fmt.Sprintf("%-7s", match)
	}
	return fmt.Sprintf("%-7s", "?")
}
