package searchpane

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
)

// syncPreview loads the selected file (or scope hit) for the preview when
// the selection changes, off the UI goroutine.
func (p *Pane) syncPreview() tea.Cmd {
	if !p.preview.open {
		return nil
	}
	if p.composer.isScoped() {
		i, ok := p.results.selectedHit()
		if !ok {
			return nil
		}
		return p.preview.loadScoped(p.composer.scope(), p.results.scoped.Hits[i].ID, p.scopeOpen())
	}
	ev, ok := p.results.selected()
	if !ok {
		return nil
	}
	return p.preview.load(ev.Path, p.absPath(ev.Path))
}

// toggle opens or closes the preview; an opened one aims at the selection
// afresh.
func (v *preview) toggle() { v.open, v.at = !v.open, previewAt{} }

// load reads the file at abs (rel to the sandbox root) unless the preview
// holds or is loading it already.
func (v *preview) load(rel, abs string) tea.Cmd {
	if rel == v.path {
		return nil
	}
	v.path, v.lines, v.err, v.loading = rel, nil, nil, true
	return func() tea.Msg {
		lines, cut, err := readLines(abs, scope.OpenMaxBytes)
		return previewMsg{path: rel, lines: lines, cut: cut, err: err}
	}
}

// got takes a file's lines if they are still the ones wanted.
func (v *preview) got(msg previewMsg) {
	if msg.path == v.path {
		v.lines, v.cut, v.err, v.loading = msg.lines, msg.cut, msg.err, false
	}
}

// reread makes the next sync read the file again (it may have changed).
func (v *preview) reread() { v.path = "" }

// aim re-aims the preview when the selection changes: centred on line (a
// content hit's, 0-based), or at the top (line < 0: a scope hit). J/K and
// the wheel then move from there until the next change.
func (v *preview) aim(at previewAt, line int) {
	if at == v.at {
		return
	}
	v.at = at
	if line >= 0 {
		v.view.CenterOn(line)
		return
	}
	v.view.Top()
}

// readLines reads a file's lines up to limit bytes; cut reports a file
// longer than that, whose last, partial line is then dropped (the preview
// says where its reading stopped instead of showing half a line).
func readLines(path string, limit int64) (lines []string, cut bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(buf)) > limit {
		cut = true
		buf = buf[:limit]
		if nl := bytes.LastIndexByte(buf, '\n'); nl >= 0 {
			buf = buf[:nl+1]
		}
	}
	if len(buf) == 0 {
		return nil, cut, nil
	}
	text := strings.TrimSuffix(string(buf), "\n")
	lines = strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r") // a CRLF line end, as the engine's lines.text has none
	}
	return lines, cut, nil
}

// scopedPreview is the selected scope hit opened for the preview: a
// message with its headers and body, a record with its columns.
type scopedPreview struct {
	id      string
	doc     *scope.Document
	err     error
	loading bool
}

type scopedPreviewMsg struct {
	id  string
	doc scope.Document
	err error
}

// loadScoped opens scope hit id for the preview unless it is the one
// shown or opening.
func (v *preview) loadScoped(sc config.ScopeConfig, id string, open scopeOpener) tea.Cmd {
	if id == v.scoped.id {
		return nil
	}
	v.scoped = scopedPreview{id: id, loading: true}
	return func() tea.Msg {
		doc, err := open(sc, id)
		return scopedPreviewMsg{id: id, doc: doc, err: err}
	}
}

// gotScoped takes an opened hit if it is still the one wanted.
func (v *preview) gotScoped(msg scopedPreviewMsg) {
	if msg.id != v.scoped.id {
		return
	}
	v.scoped.loading, v.scoped.err = false, msg.err
	if msg.err == nil {
		d := msg.doc
		v.scoped.doc = &d
	}
}

// previewAt is the selection a preview shows: the results' generation, the
// mode and the row.
type previewAt struct {
	gen    uint64
	scoped bool
	row    int
	set    bool
}

// followSelection re-aims the preview at the selection (preview.aim).
func (p *Pane) followSelection() {
	at := previewAt{gen: p.results.gen, scoped: p.composer.isScoped(), row: p.results.list.Cursor(), set: true}
	line := -1
	if ev, ok := p.results.selected(); ok {
		line = int(ev.LineNumber) - 1
	}
	p.preview.aim(at, line)
}

// area is a rectangle of the pane, in its own cells.
type area struct{ x, y, w, h int }

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
	return append([]string{head}, p.preview.view.Window(p.preview.body.layout(pv.doc, w, p.results.scopedText, p.styles), h-1)...)
}

func (p *Pane) previewBlock(w, h int) string {
	s := p.styles
	if p.composer.isScoped() {
		return panes.Block(p.scopedPreviewLines(w, h), w, h)
	}
	ev, ok := p.results.selected()
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

// preview is the selected result's file (or scope hit) beside the list.
type preview struct {
	open    bool
	path    string // file the preview holds or is loading
	lines   []string
	cut     bool // lines are the first scope.OpenMaxBytes of a longer file
	err     error
	loading bool
	view    panes.Viewport // the preview's scroll: centred on the hit, then J/K and the wheel
	at      previewAt      // the selection the preview was last centred on
	area    area           // where the preview was last drawn, for the wheel
	scoped  scopedPreview
	body    docCache // the scope hit's lines laid out
}
