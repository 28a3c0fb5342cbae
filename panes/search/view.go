package searchpane

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// View draws the composer, the results (with the preview beside or below
// them) and the status line in exactly w×h.
func (p *Pane) View(w, h int) string {
	// what a click or the wheel lands on is only what this frame draws: a
	// frame without the list (the viewer, no room left) maps no rows
	p.results.list.Map.Reset(0, 0, 0)
	p.preview.area = area{}
	if w <= 0 || h <= 0 {
		return ""
	}
	if p.viewing() {
		return panes.Block(p.docLines(w, h), w, h)
	}
	top := p.composerLines(w, h)
	if len(top) > h-1 {
		top = top[:max(h-1, 0)]
	}
	status := p.statusLine(w)
	areaH := h - len(top) - 1
	p.results.listTop = len(top)
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
	if p.results.showErrs {
		return panes.Block(p.errorLines(w, h), w, h)
	}
	if !p.preview.open {
		return p.listBlock(w, h)
	}
	if w >= 100 {
		lw := w * 55 / 100
		pw := w - lw - 1
		p.preview.area = area{x: lw + 1, y: p.results.listTop, w: pw, h: h}
		left := strings.Split(p.listBlock(lw, h), "\n")
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
		p.preview.area = area{}
		return p.listBlock(w, h)
	}
	p.preview.area = area{x: 0, y: p.results.listTop + lh, w: w, h: ph}
	return p.listBlock(w, lh) + "\n" + p.previewBlock(w, ph)
}

func (p *Pane) composerLines(w, h int) []string {
	s := p.styles
	focused := p.focus == focusComposer
	prompt := s.Muted.Render("❯ ")
	if focused && p.composer.field == fPattern {
		prompt = s.Title.Render("❯ ")
	}
	var pat string
	if p.composer.inputs[fPattern].Value() == "" && !(focused && p.composer.field == fPattern) {
		pat = s.Muted.Render("pattern — / to edit")
	} else if p.composer.inputs[fPattern].Value() == "" {
		pat = p.renderField(fPattern, w-2) + s.Muted.Render("type a pattern · tab options · esc results")
	} else {
		pat = p.renderField(fPattern, w-2)
	}
	lines := []string{prompt + pat}
	if p.composer.errField == fPattern {
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
				if f == p.composer.field {
					first = max(0, i-limit+1)
				}
			}
		}
	}
	for i := first; i < len(rows) && i < first+limit; i++ {
		lines = append(lines, rows[i].text)
		for _, f := range rows[i].fields {
			if f == p.composer.errField {
				lines = append(lines, p.errLines(w)...)
			}
		}
	}
	if p.composer.errField > fPattern && !containsChipRow(rows[first:min(first+limit, len(rows))], p.composer.errField) {
		lines = append(lines, p.errLines(w)...)
	}
	if focused {
		switch p.composer.field {
		case fPath:
			dir, names := p.completions()
			if len(names) > 0 {
				for i := range names {
					names[i] = safetext.Line(dir + names[i] + "/")
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
	for _, l := range panes.Wrap("✗ "+safetext.Line(p.composer.errText), max(w-2, 1)) {
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
			sc := p.opts.Scopes[p.composer.scopeIdx-1]
			val = sc.Name + "(" + sc.Kind + ")"
		}
	case fCase:
		name, val = "case", caseModes[p.composer.caseIdx]
	case fMode:
		name, val = "mode", "regex"
		if p.composer.fixed {
			val = "fixed"
		}
	case fWord:
		name, val = "word", onOff(p.composer.word)
	case fHidden:
		name, val = "hidden", onOff(p.composer.hidden)
	case fFollow:
		name, val = "follow", onOff(p.composer.follow)
	case fNoIgnore:
		name, val = "no-ignore", onOff(p.composer.noIgnore)
	case fRecursive:
		name, val = "recursive", onOff(p.composer.recurse)
	case fFuzzy:
		name, val = "fuzzy", "off"
		if p.composer.fuzzy > 0 {
			val = strconv.Itoa(p.composer.fuzzy)
		}
		if p.backendKnown && p.backend.Name == "rg" && p.composer.fuzzy == 0 {
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
	focused := p.focus == focusComposer && p.composer.field == f
	if isTextField(f) {
		if focused {
			val = p.renderField(f, max(w/2, 8))
		} else {
			val = p.composer.inputs[f].Value()
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
			val = panes.Truncate(safetext.Line(val), max(w/3, 6))
		}
	}
	label := s.Label.Render(name + ":")
	valStyle := s.Text
	if f == p.composer.errField {
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
	fd := &p.composer.inputs[f]
	focused := p.focus == focusComposer && p.composer.field == f
	before, at, after := fd.Window(max(width, 1))
	if !focused {
		return p.styles.Input.Render(before + strings.TrimRight(at+after, " "))
	}
	return p.styles.InputFocused.Render(before) + p.styles.Cursor.Reverse(true).Render(at) + p.styles.InputFocused.Render(after)
}

// listBlock draws the visible window of the results (content or scoped).
func (p *Pane) listBlock(w, h int) string {
	s := p.styles
	n := p.rowCount()
	if n == 0 {
		var msg string
		switch {
		case p.running:
			msg = "searching…"
		case strings.TrimSpace(p.composer.inputs[fPattern].Value()) == "":
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
	if p.isScoped() {
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
	switch p.opts.Scopes[p.composer.scopeIdx-1].Kind {
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

// scopedPreviewLines is the selected hit opened: a message's headers and
// body, a record's columns, scrolled with J/K.
func (p *Pane) scopedPreviewLines(w, h int) []string {
	s := p.styles
	pv := p.preview.scoped
	switch {
	case p.results.scoped == nil || len(p.results.scoped.Hits) == 0:
		return []string{s.Muted.Render("preview: select a hit")}
	case pv.loading:
		return []string{s.Muted.Render("opening…")}
	case pv.err != nil:
		return []string{p.safeField("cannot open: "+pv.err.Error(), w, s.Err)}
	case pv.doc == nil:
		return nil
	}
	head := p.safeField(pv.doc.Title, w, s.Title)
	return append([]string{head}, p.preview.view.Window(p.layoutDoc(pv.doc, w), h-1)...)
}

func (p *Pane) previewBlock(w, h int) string {
	s := p.styles
	if p.isScoped() {
		return panes.Block(p.scopedPreviewLines(w, h), w, h)
	}
	ev, ok := p.selected()
	if !ok {
		return panes.Block([]string{s.Muted.Render("preview: select a match")}, w, h)
	}
	num := ":" + strconv.FormatUint(ev.LineNumber, 10)
	head := p.safeField(ev.Path, max(w-len(num), 1), s.Heading) + s.Heading.Render(num)
	lines := []string{head}
	switch {
	case p.preview.loading || p.preview.path != ev.Path:
		lines = append(lines, s.Muted.Render("loading…"))
	case p.preview.err != nil:
		lines = append(lines, p.safeField(p.preview.err.Error(), w, s.Err))
	case int(ev.LineNumber) > len(p.preview.lines):
		lines = append(lines, p.hitBeyondPreview(ev, w)...)
	default:
		// the window around the hit: centred when the selection changed
		// (followSelection), then where J/K and the wheel took it
		sel := int(ev.LineNumber) - 1
		first, end := p.preview.view.Range(len(p.preview.lines), h-1)
		nw := len(strconv.Itoa(end))
		for i := first; i < end; i++ {
			mark, sepc := " ", "│"
			text := p.preview.lines[i]
			var spans []search.Span
			o := rowOpts{tabs: tabWidth, base: s.Muted, hl: s.Match, warn: s.Warning}
			if i == sel {
				mark = s.Cursor.Render("›")
				o = p.lineOpts(ev, s.Text)
				spans = eventSpans(ev)
				if ev.Cut() {
					text = ev.Line // the spans are offsets in the engine's window of the line
				}
			}
			num := fmt.Sprintf("%*d%s", nw, i+1, sepc)
			lines = append(lines, mark+s.Muted.Render(num)+renderLine(text, spans, w-1-len([]rune(num)), o))
		}
	}
	return panes.Block(lines, w, h)
}

// hitBeyondPreview is the preview of a hit whose line is not among the
// lines read (past the first scope.OpenMaxBytes, or in a file that has
// since become shorter): the hit's own line as the engine found it, and
// why nothing around it is shown. Other lines shown in its place would
// read as its neighbours.
func (p *Pane) hitBeyondPreview(ev *search.Event, w int) []string {
	s := p.styles
	num := fmt.Sprintf("%d│", ev.LineNumber)
	hit := s.Cursor.Render("›") + s.Muted.Render(num) + renderLine(ev.Line, eventSpans(ev), w-1-len([]rune(num)), p.lineOpts(ev, s.Text))
	why := fmt.Sprintf("line %d is past the first %d MiB, all the preview reads of a file", ev.LineNumber, scope.OpenMaxBytes>>20)
	if !p.preview.cut {
		why = fmt.Sprintf("the file has %d line%s now: it changed since the search", len(p.preview.lines), plural(len(p.preview.lines), "", "s"))
	}
	return append([]string{hit, ""}, panes.Wrap(s.Muted.Render(why), w)...)
}

func (p *Pane) errorLines(w, h int) []string {
	s := p.styles
	head := s.Heading.Render(fmt.Sprintf("File errors (%d)", len(p.results.fileErrs))) + s.Muted.Render(" · e/esc close · ↑/↓ scroll")
	return append([]string{head}, p.results.errView.Window(p.layoutErrors(w), h-1)...)
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

func (p *Pane) layoutErrors(w int) []string {
	var of *search.FileError
	if len(p.results.fileErrs) > 0 {
		of = &p.results.fileErrs[0]
	}
	if p.results.errBody.width != w || p.results.errBody.of != of || p.results.errBody.n > len(p.results.fileErrs) {
		p.results.errBody = errLayout{width: w, of: of}
	}
	for _, e := range p.results.fileErrs[p.results.errBody.n:] {
		for _, l := range panes.Wrap(safetext.Line(e.Path)+": "+safetext.Line(e.Error), max(w-2, 1)) {
			p.results.errBody.lines = append(p.results.errBody.lines, "  "+p.styles.Err.Render(l))
		}
	}
	p.results.errBody.n = len(p.results.fileErrs)
	return p.results.errBody.lines
}

func (p *Pane) statusLine(w int) string {
	s := p.styles
	sep := s.Subtle.Render(" · ")
	var parts []string
	if p.notice != "" {
		return panes.Fit(s.Warning.Render(safetext.Line(p.notice)), w)
	}
	be := "detecting backend…"
	if p.backendKnown {
		be = strings.TrimSpace(p.backend.Name + " " + p.backend.Version)
		if be == "" {
			be = "no backend"
		}
	}
	if p.isScoped() {
		sc := p.opts.Scopes[p.composer.scopeIdx-1]
		if p.results.scoped != nil {
			parts = append(parts, s.Text.Render(fmt.Sprintf("%d of %d hits", len(p.results.scoped.Hits), p.results.scoped.Count)))
			if p.results.scoped.Truncated {
				parts = append(parts, s.Warning.Render("+ more, raise max results"))
			}
		}
		parts = append(parts, s.Muted.Render("scope "+sc.Name+" ("+sc.Kind+")"))
		if p.running || p.seq != 0 {
			parts = append(parts, s.Muted.Render("searching…"))
		} else if p.results.scoped != nil {
			parts = append(parts, s.Muted.Render(fmtElapsed(p.results.elapsed)))
		}
		return panes.Fit(strings.Join(parts, sep), w)
	}
	// stale: the results on screen answer an older pattern while a new
	// search waits for its debounce or for its first batch
	stale := p.seq != 0 || (p.running && p.results.gen != p.gen)
	if stale {
		parts = append(parts, s.Warning.Render("searching…"))
	}
	if p.results.gen != 0 && (p.results.final != nil || len(p.results.res.rows) > 0 || p.running) {
		counts := fmt.Sprintf("%d %s in %d %s", p.results.res.matches, plural(p.results.res.matches, "match", "matches"),
			len(p.results.res.groups), plural(len(p.results.res.groups), "file", "files"))
		if stale {
			parts = append(parts, s.Muted.Render("previous: "+counts))
		} else {
			parts = append(parts, s.Text.Render(counts))
			parts = append(parts, s.Muted.Render(fmt.Sprintf("scanned %d", p.results.scanned)))
		}
	}
	switch {
	case stale: // the old elapsed time would read as the new search's
	case p.running:
		parts = append(parts, s.Muted.Render("searching…"))
	case p.results.final != nil:
		parts = append(parts, s.Muted.Render(fmtElapsed(p.results.elapsed)))
	}
	parts = append(parts, s.Muted.Render(be))
	if p.results.final != nil && p.results.final.Truncated {
		parts = append(parts, s.Warning.Render("+ more, raise max results"))
	}
	if p.results.final != nil && p.results.final.TimedOut {
		parts = append(parts, s.Warning.Render("timed out"))
	}
	if len(p.results.fileErrs) > 0 {
		parts = append(parts, s.Err.Render(fmt.Sprintf("%d file %s (e)", len(p.results.fileErrs), plural(len(p.results.fileErrs), "error", "errors"))))
	}
	if p.results.runErr != "" {
		parts = append(parts, s.Err.Render(safetext.Line(p.results.runErr)))
	}
	if p.results.final != nil && p.results.final.Stderr != "" {
		parts = append(parts, s.Err.Render(strings.Join(safetext.Lines(p.results.final.Stderr), " ")))
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
	if p.viewer.loading {
		return []string{s.Muted.Render("opening…")}
	}
	if p.viewer.err != nil {
		return []string{p.safeField("cannot open: "+p.viewer.err.Error(), w, s.Err), s.Muted.Render("esc: back")}
	}
	d := p.viewer.doc
	head := p.safeField(d.Title, max(w-20, 10), s.Title) + s.Muted.Render("  "+d.Scope+" · esc back")
	body := p.layoutDoc(d, w)
	return append([]string{head}, p.viewer.view.Window(body, h-1)...)
}

// docCache is a document laid out for one width: escaping and wrapping
// up to 4 MiB of text is done once, not on every frame.
type docCache struct {
	doc   *scope.Document
	width int
	query string
	lines []string
}

// layoutDoc is a document's fields and body, made safe (safetext:
// escapes marked, tabs expanded in the body), wrapped to w and
// highlighted.
func (p *Pane) layoutDoc(d *scope.Document, w int) []string {
	if p.viewer.body.doc == d && p.viewer.body.width == w && p.viewer.body.query == p.results.scopedText {
		return p.viewer.body.lines
	}
	s := p.styles
	q := safetext.Line(p.results.scopedText)
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
	p.viewer.body = docCache{doc: d, width: w, query: p.results.scopedText, lines: body}
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

// ShortHelp is the status bar's keys for the current mode, from its rows.
func (p *Pane) ShortHelp() []key.Binding { return p.keymap().Footer() }

// FullHelp is the ? overlay's keys for the current mode, from its rows.
func (p *Pane) FullHelp() [][]key.Binding {
	switch {
	case p.viewer.loading:
		return [][]key.Binding{p.km.opening.Help()}
	case p.viewing():
		return [][]key.Binding{p.km.document.Help()}
	case p.focus == focusComposer:
		return [][]key.Binding{p.km.composer.Help(), p.km.anywhere.Help()}
	case p.results.showErrs:
		return [][]key.Binding{p.km.errors.Help(), p.km.anywhere.Help()}
	}
	return [][]key.Binding{p.km.results.Help(), p.km.anywhere.Help()}
}
