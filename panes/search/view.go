package searchpane

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
)

// View draws the composer, the results (with the preview beside or below
// them) and the status line in exactly w×h.
func (p *Pane) View(w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	if p.doc != nil || p.docErr != nil || p.docLoading {
		return panes.Block(p.docLines(w, h), w, h)
	}
	top := p.composerLines(w, h)
	if len(top) > h-1 {
		top = top[:max(h-1, 0)]
	}
	status := p.statusLine(w)
	areaH := h - len(top) - 1
	lines := top
	if areaH > 0 {
		lines = append(lines, strings.Split(p.area(w, areaH), "\n")...)
	}
	if h > len(lines) {
		lines = append(lines, status)
	}
	return panes.Block(lines, w, h)
}

// area is the results list, or the list and the preview.
func (p *Pane) area(w, h int) string {
	if p.showErrs {
		return panes.Block(p.errorLines(w, h), w, h)
	}
	if !p.preview || p.isScoped() {
		return p.list(w, h)
	}
	if w >= 100 {
		lw := w * 55 / 100
		pw := w - lw - 1
		left := strings.Split(p.list(lw, h), "\n")
		right := strings.Split(p.previewBlock(pw, h), "\n")
		sep := p.styles.Subtle.Render("│")
		out := make([]string, h)
		for i := range out {
			out[i] = left[i] + sep + right[i]
		}
		return strings.Join(out, "\n")
	}
	lh := max(h/2, 1)
	ph := h - lh
	if ph <= 0 {
		return p.list(w, h)
	}
	return p.list(w, lh) + "\n" + p.previewBlock(w, ph)
}

func (p *Pane) composerLines(w, h int) []string {
	s := p.styles
	focused := p.focus == focusComposer
	prompt := s.Muted.Render("❯ ")
	if focused && p.field == fPattern {
		prompt = s.Title.Render("❯ ")
	}
	var pat string
	if p.inputs[fPattern].Value() == "" && !(focused && p.field == fPattern) {
		pat = s.Muted.Render("pattern — / to edit")
	} else if p.inputs[fPattern].Value() == "" {
		pat = p.renderField(fPattern, w-2) + s.Muted.Render("type a pattern · tab options · esc results")
	} else {
		pat = p.renderField(fPattern, w-2)
	}
	lines := []string{prompt + pat}
	if p.errField == fPattern {
		lines = append(lines, p.errLines(w)...)
	}
	// option chips, flowed into lines; at small heights only the line with
	// the focused chip is shown so the results keep their room
	var rows []chipLine
	cur, curW := "", 0
	var curFields []int
	for f := fScope; f < nFields; f++ {
		if !p.applies(f) {
			continue
		}
		c := p.chip(f, w)
		cw := lipgloss.Width(c)
		if curW > 0 && curW+cw > w {
			rows = append(rows, chipLine{cur, curFields})
			cur, curW, curFields = "", 0, nil
		}
		cur += c
		curW += cw
		curFields = append(curFields, f)
	}
	if curW > 0 {
		rows = append(rows, chipLine{cur, curFields})
	}
	limit := len(rows)
	if h < 16 {
		limit = 1
	} else if h < 24 {
		limit = 2
	}
	first := 0
	if focused {
		for i, r := range rows {
			for _, f := range r.fields {
				if f == p.field {
					first = max(0, i-limit+1)
				}
			}
		}
	}
	for i := first; i < len(rows) && i < first+limit; i++ {
		lines = append(lines, rows[i].text)
		for _, f := range rows[i].fields {
			if f == p.errField {
				lines = append(lines, p.errLines(w)...)
			}
		}
	}
	if p.errField > fPattern && !containsChipRow(rows[first:min(first+limit, len(rows))], p.errField) {
		lines = append(lines, p.errLines(w)...)
	}
	if focused {
		switch p.field {
		case fPath:
			dir, names := p.completions()
			if len(names) > 0 {
				for i := range names {
					names[i] = dir + names[i] + "/"
				}
				lines = append(lines, s.Muted.Render(panes.Truncate("  dirs: "+strings.Join(names, "  "), w)))
			}
		case fFuzzy:
			if p.backendKnown && p.backend.Name == "rg" {
				lines = append(lines, s.Muted.Render(panes.Truncate("  fuzzy needs ugrep: ripgrep has no approximate matching", w)))
			} else {
				lines = append(lines, s.Muted.Render(panes.Truncate("  fuzzy N allows N typos per match (ugrep -ZN)", w)))
			}
		case fInclude, fExclude:
			lines = append(lines, s.Muted.Render(panes.Truncate("  comma-separated globs, e.g. *.go,docs/**", w)))
		}
	}
	return lines
}

type chipLine struct {
	text   string
	fields []int
}

func containsChipRow(rows []chipLine, f int) bool {
	for _, r := range rows {
		for _, x := range r.fields {
			if x == f {
				return true
			}
		}
	}
	return false
}

func (p *Pane) errLines(w int) []string {
	var out []string
	for _, l := range panes.Wrap("✗ "+p.errText, max(w-2, 1)) {
		out = append(out, "  "+p.styles.Err.Render(l))
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// chip renders one option as name:value, marked when focused.
func (p *Pane) chip(f, w int) string {
	s := p.styles
	var name, val string
	switch f {
	case fScope:
		name, val = "scope", "content"
		if p.isScoped() {
			sc := p.opts.Scopes[p.scopeIdx-1]
			val = sc.Name + "(" + sc.Kind + ")"
		}
	case fCase:
		name, val = "case", caseModes[p.caseIdx]
	case fMode:
		name, val = "mode", "regex"
		if p.fixed {
			val = "fixed"
		}
	case fWord:
		name, val = "word", onOff(p.word)
	case fHidden:
		name, val = "hidden", onOff(p.hidden)
	case fFollow:
		name, val = "follow", onOff(p.follow)
	case fNoIgnore:
		name, val = "no-ignore", onOff(p.noIgnore)
	case fRecursive:
		name, val = "recursive", onOff(p.recurse)
	case fFuzzy:
		name, val = "fuzzy", "off"
		if p.fuzzy > 0 {
			val = strconv.Itoa(p.fuzzy)
		}
		if p.backendKnown && p.backend.Name == "rg" && p.fuzzy == 0 {
			val = "off(rg)"
		}
	case fPath:
		name = "path"
	case fInclude:
		name = "include"
	case fExclude:
		name = "exclude"
	case fContext:
		name = "context"
	case fMax:
		name = "max"
	case fPerFile:
		name = "per-file"
	case fTimeout:
		name = "timeout-ms"
	}
	focused := p.focus == focusComposer && p.field == f
	if isTextField(f) {
		if focused {
			val = p.renderField(f, max(w/2, 8))
		} else {
			val = p.inputs[f].Value()
			if val == "" {
				switch f {
				case fPath:
					val = "."
				case fPerFile:
					val = "none"
				default:
					val = "-"
				}
			}
			val = panes.Truncate(val, max(w/3, 6))
		}
	}
	label := s.Label.Render(name + ":")
	valStyle := s.Text
	if f == p.errField {
		valStyle = s.Err
	}
	if focused {
		return s.Cursor.Render("▸") + s.Selected.Render(label+valStyle.Render(val)) + " "
	}
	return " " + label + valStyle.Render(val) + " "
}

// renderField draws a text field with its cursor when focused, scrolled
// horizontally so the cursor stays in view.
func (p *Pane) renderField(f, width int) string {
	fd := &p.inputs[f]
	focused := p.focus == focusComposer && p.field == f
	before, at, after := fd.Window(max(width, 1))
	if !focused {
		return p.styles.Input.Render(before + strings.TrimRight(at+after, " "))
	}
	return p.styles.InputFocused.Render(before) + p.styles.Cursor.Reverse(true).Render(at) + p.styles.InputFocused.Render(after)
}

// list draws the visible window of the results (content or scoped).
func (p *Pane) list(w, h int) string {
	s := p.styles
	p.listH = h
	n := p.rowCount()
	if n == 0 {
		var msg string
		switch {
		case p.running:
			msg = "searching…"
		case strings.TrimSpace(p.inputs[fPattern].Value()) == "":
			msg = "results appear here as you type"
		case p.errText != "":
			msg = "fix the query above to search"
		case p.final != nil || p.scoped != nil:
			msg = "no matches"
		}
		return panes.Block([]string{s.Muted.Render(msg)}, w, h)
	}
	p.sel = min(p.sel, n-1)
	p.top = panes.Scroll(p.top, p.sel, h, n)
	// the header of the file the top row belongs to stays visible
	lines := make([]string, 0, h)
	if p.isScoped() {
		for i := p.top; i < n && len(lines) < h; i++ {
			lines = append(lines, p.scopedRow(i, w))
		}
		return panes.Block(lines, w, h)
	}
	nw := 1
	for i := p.top; i < n && i < p.top+h; i++ {
		if r := p.res.rows[i]; r.ev >= 0 {
			nw = max(nw, len(strconv.FormatUint(p.res.events[r.ev].LineNumber, 10)))
		}
	}
	for i := p.top; i < n && len(lines) < h; i++ {
		lines = append(lines, p.contentRow(i, w, nw))
	}
	return panes.Block(lines, w, h)
}

func (p *Pane) contentRow(i, w, nw int) string {
	s := p.styles
	r := p.res.rows[i]
	g := p.res.groups[r.group]
	if r.ev < 0 {
		count := fmt.Sprintf(" (%d)", g.matches)
		return s.Heading.Render(panes.Truncate(g.path, max(w-len(count), 1))) + s.Muted.Render(count)
	}
	ev := &p.res.events[r.ev]
	mark := " "
	if i == p.sel {
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
	text := renderLine(ev.Line, eventSpans(ev), avail, base, s.Match)
	line := mark + s.Muted.Render(num) + text
	if i == p.sel {
		return s.Selected.Render(panes.Fit(line, w))
	}
	return line
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

func (p *Pane) scopedRow(i, w int) string {
	s := p.styles
	h := p.scoped.Hits[i]
	mark := " "
	if i == p.sel {
		mark = s.Cursor.Render("›")
	}
	id := panes.Truncate(h.ID, max(w*2/5, 8))
	head := mark + s.Heading.Render(id) + " " + s.Label.Render(h.Field+": ")
	avail := w - lipgloss.Width(head)
	// newlines in a snippet become spaces: same byte length, so the match
	// offsets still hold
	snip := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, h.Snippet)
	line := head + renderLine(snip, []search.Span{{Start: h.MatchStart, End: h.MatchEnd}}, avail, s.Text, s.Match)
	if i == p.sel {
		return s.Selected.Render(panes.Fit(line, w))
	}
	return line
}

type cell struct {
	s  string
	w  int
	hl bool
}

// renderLine draws line in at most width cells with the spans (byte
// offsets) highlighted. A line too long is cut with an ellipsis, and when
// the first match would fall off the end the window slides so it shows.
func renderLine(line string, spans []search.Span, width int, base, hl lipgloss.Style) string {
	if width <= 0 {
		return ""
	}
	cells := make([]cell, 0, min(len(line), 4*width+16))
	total, firstHL, firstEnd := 0, -1, -1
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		in := false
		for _, sp := range spans {
			if i >= sp.Start && i < sp.End {
				in = true
				break
			}
		}
		var c cell
		switch {
		case r == '\t':
			c = cell{"    ", 4, in}
		case r < 0x20 || r == 0x7f:
			c = cell{"·", 1, in}
		default:
			c = cell{string(r), ansi.StringWidth(string(r)), in}
		}
		if in && firstHL < 0 {
			firstHL = total
		}
		total += c.w
		cells = append(cells, c)
		i += n
		if total > 1<<16 && firstHL >= 0 {
			break // a megabyte-long minified line: enough to find the window
		}
	}
	// the first match's end (stop at the first gap)
	if firstHL >= 0 {
		pos := 0
		firstEnd = firstHL
		started := false
		for _, c := range cells {
			if pos >= firstHL && c.hl {
				started = true
				firstEnd = pos + c.w
			} else if started {
				break
			}
			pos += c.w
		}
	}
	start := 0
	lead := ""
	if total > width && firstHL >= 0 && firstEnd > width-1 {
		// slide: show some context before the match, and the match itself
		start = max(0, firstHL-width/3)
		if firstEnd-start > width-2 {
			start = firstEnd - (width - 2) // a match wider than the window: show its end
		}
		lead = "…"
	}
	var b strings.Builder
	used := lipgloss.Width(lead)
	if lead != "" {
		b.WriteString(base.Render(lead))
	}
	pos := 0
	var run strings.Builder
	runHL := false
	flush := func() {
		if run.Len() == 0 {
			return
		}
		if runHL {
			b.WriteString(hl.Render(run.String()))
		} else {
			b.WriteString(base.Render(run.String()))
		}
		run.Reset()
	}
	cut := false
	for _, c := range cells {
		before := pos
		pos += c.w
		if before < start {
			continue
		}
		// everything left fits: no ellipsis needed; otherwise keep a cell
		// for it
		if total-before > width-used && used+c.w > width-1 {
			cut = true
			break
		}
		if c.hl != runHL {
			flush()
			runHL = c.hl
		}
		run.WriteString(c.s)
		used += c.w
	}
	flush()
	if cut {
		b.WriteString(base.Render("…"))
	}
	return b.String()
}

func (p *Pane) previewBlock(w, h int) string {
	s := p.styles
	ev, ok := p.selected()
	if !ok {
		return panes.Block([]string{s.Muted.Render("preview: select a match")}, w, h)
	}
	head := s.Heading.Render(panes.Truncate(fmt.Sprintf("%s:%d", ev.Path, ev.LineNumber), w))
	lines := []string{head}
	switch {
	case p.prevLoading || p.prevPath != ev.Path:
		lines = append(lines, s.Muted.Render("loading…"))
	case p.prevErr != nil:
		lines = append(lines, s.Err.Render(panes.Truncate(p.prevErr.Error(), w)))
	default:
		bodyH := h - 1
		n := len(p.prevLines)
		sel := int(ev.LineNumber) - 1
		first := sel - bodyH/2 + p.prevScroll
		first = min(max(first, 0), max(n-bodyH, 0))
		p.prevScroll = first - (sel - bodyH/2)
		nw := len(strconv.Itoa(min(first+bodyH, n)))
		for i := first; i < n && i < first+bodyH; i++ {
			mark, sepc := " ", "│"
			var spans []search.Span
			base := s.Text
			if i == sel {
				mark = s.Cursor.Render("›")
				spans = eventSpans(ev)
			} else {
				base = s.Muted
			}
			num := fmt.Sprintf("%*d%s", nw, i+1, sepc)
			lines = append(lines, mark+s.Muted.Render(num)+renderLine(p.prevLines[i], spans, w-1-len([]rune(num)), base, s.Match))
		}
	}
	return panes.Block(lines, w, h)
}

func (p *Pane) errorLines(w, h int) []string {
	s := p.styles
	lines := []string{s.Heading.Render(fmt.Sprintf("File errors (%d)", len(p.fileErrs))) + s.Muted.Render(" · e/esc close · ↑/↓ scroll")}
	for _, e := range p.fileErrs[min(p.errScroll, len(p.fileErrs)):] {
		for _, l := range panes.Wrap(e.Path+": "+e.Error, max(w-2, 1)) {
			lines = append(lines, "  "+s.Err.Render(l))
		}
		if len(lines) >= h {
			break
		}
	}
	return lines
}

func (p *Pane) statusLine(w int) string {
	s := p.styles
	sep := s.Subtle.Render(" · ")
	var parts []string
	if p.notice != "" {
		return panes.Fit(s.Warning.Render(p.notice), w)
	}
	be := "detecting backend…"
	if p.backendKnown {
		be = strings.TrimSpace(p.backend.Name + " " + p.backend.Version)
		if be == "" {
			be = "no backend"
		}
	}
	if p.isScoped() {
		sc := p.opts.Scopes[p.scopeIdx-1]
		if p.scoped != nil {
			parts = append(parts, s.Text.Render(fmt.Sprintf("%d of %d hits", len(p.scoped.Hits), p.scoped.Count)))
			if p.scoped.Truncated {
				parts = append(parts, s.Warning.Render("+ more, raise max results"))
			}
		}
		parts = append(parts, s.Muted.Render("scope "+sc.Name+" ("+sc.Kind+")"))
		if p.running {
			parts = append(parts, s.Muted.Render("searching…"))
		} else if p.scoped != nil {
			parts = append(parts, s.Muted.Render(fmtElapsed(p.elapsed)))
		}
		return panes.Fit(strings.Join(parts, sep), w)
	}
	if p.shownGen != 0 && (p.final != nil || len(p.res.rows) > 0 || p.running) {
		parts = append(parts, s.Text.Render(fmt.Sprintf("%d %s in %d %s", p.res.matches, plural(p.res.matches, "match", "matches"),
			len(p.res.groups), plural(len(p.res.groups), "file", "files"))))
		parts = append(parts, s.Muted.Render(fmt.Sprintf("scanned %d", p.scanned)))
	}
	if p.running {
		parts = append(parts, s.Muted.Render("searching…"))
	} else if p.final != nil {
		parts = append(parts, s.Muted.Render(fmtElapsed(p.elapsed)))
	}
	parts = append(parts, s.Muted.Render(be))
	if p.final != nil && p.final.Truncated {
		parts = append(parts, s.Warning.Render("+ more, raise max results"))
	}
	if p.final != nil && p.final.TimedOut {
		parts = append(parts, s.Warning.Render("timed out"))
	}
	if len(p.fileErrs) > 0 {
		parts = append(parts, s.Err.Render(fmt.Sprintf("%d file %s (e)", len(p.fileErrs), plural(len(p.fileErrs), "error", "errors"))))
	}
	if p.runErr != "" {
		parts = append(parts, s.Err.Render(p.runErr))
	}
	if p.final != nil && p.final.Stderr != "" {
		parts = append(parts, s.Err.Render(strings.ReplaceAll(p.final.Stderr, "\n", " ")))
	}
	return panes.Fit(strings.Join(parts, sep), w)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func fmtElapsed(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// docLines is the viewer of one scoped item: headers or fields, then the
// body, with the query highlighted; scrollable.
func (p *Pane) docLines(w, h int) []string {
	s := p.styles
	if p.docLoading {
		return []string{s.Muted.Render("opening…")}
	}
	if p.docErr != nil {
		return []string{s.Err.Render(panes.Truncate("cannot open: "+p.docErr.Error(), w)), s.Muted.Render("esc: back")}
	}
	d := p.doc
	head := s.Title.Render(panes.Truncate(d.Title, max(w-20, 10))) + s.Muted.Render("  "+d.Scope+" · esc back")
	var body []string
	q := p.scopedText
	for _, f := range d.Fields {
		wrapped := panes.Wrap(f.Value, max(w-2-len(f.Name), 1))
		if len(wrapped) == 0 {
			wrapped = []string{""}
		}
		body = append(body, s.Label.Render(f.Name+": ")+highlightAll(wrapped[0], q, s.Text, s.Match))
		for _, more := range wrapped[1:] {
			body = append(body, strings.Repeat(" ", len(f.Name)+2)+highlightAll(more, q, s.Text, s.Match))
		}
	}
	if d.Text != "" {
		if len(body) > 0 {
			body = append(body, "")
		}
		for _, l := range panes.Wrap(strings.ReplaceAll(d.Text, "\r", ""), max(w, 1)) {
			body = append(body, highlightAll(l, q, s.Text, s.Match))
		}
	}
	if d.Truncated {
		body = append(body, s.Warning.Render("… cut at 4 MiB"))
	}
	p.docScroll = min(p.docScroll, max(len(body)-(h-1), 0))
	return append([]string{head}, body[p.docScroll:]...)
}

// highlightAll styles every occurrence of q (case-sensitive, like the
// scoped search itself) in line.
func highlightAll(line, q string, base, hl lipgloss.Style) string {
	if q == "" || !strings.Contains(line, q) {
		return base.Render(line)
	}
	var b strings.Builder
	for {
		i := strings.Index(line, q)
		if i < 0 {
			break
		}
		b.WriteString(base.Render(line[:i]))
		b.WriteString(hl.Render(q))
		line = line[i+len(q):]
	}
	b.WriteString(base.Render(line))
	return b.String()
}

// ShortHelp is the status bar's keys for the current mode.
func (p *Pane) ShortHelp() []key.Binding {
	k := p.keys
	switch {
	case p.doc != nil || p.docErr != nil:
		return []key.Binding{k.Back, k.Up, k.Down}
	case p.focus == focusComposer:
		return []key.Binding{k.Run, k.NextField, k.Leave, k.History}
	case p.showErrs:
		return []key.Binding{k.Errors, k.Up, k.Down}
	}
	return []key.Binding{k.Open, k.Copy, k.Preview, k.Edit}
}

// FullHelp is the ? overlay's keys.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.keys
	return [][]key.Binding{
		{k.Run, k.Rerun, k.Stop, k.NextField, k.PrevField, k.Toggle, k.History, k.Leave},
		{k.AltCase, k.AltFixed, k.AltWord, k.AltHidden, k.AltFollow, k.AltNoIgnore, k.AltRecursive, k.AltFuzzy, k.AltScope},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Open, k.Copy, k.Preview, k.PreviewUp, k.PreviewDown, k.Errors, k.Edit, k.Scope},
	}
}
