package searchpane

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// results holds every event of the shown search and a row index grouped by
// file. Adding is proportional to the batch; drawing touches only the rows
// on screen, however many millions there are.
type results struct {
	events  []search.Event
	rows    []row
	groups  []group
	matches int
}

type row struct {
	group int32
	ev    int32 // index into events; -1 for the file header
}

type group struct {
	path    string
	matches int
}

func (r *results) add(evs []search.Event) {
	for i := range evs {
		ev := &evs[i]
		if len(r.groups) == 0 || r.groups[len(r.groups)-1].path != ev.Path {
			r.groups = append(r.groups, group{path: ev.Path})
			r.rows = append(r.rows, row{group: int32(len(r.groups) - 1), ev: -1})
		}
		g := len(r.groups) - 1
		if ev.Type == "match" {
			r.groups[g].matches++
			r.matches++
		}
		r.rows = append(r.rows, row{group: int32(g), ev: int32(len(r.events))})
		r.events = append(r.events, *ev)
	}
}

// rowCount is the number of selectable rows in the current mode.
func (p *Pane) rowCount() int {
	if p.isScoped() {
		if p.results.scoped == nil {
			return 0
		}
		return len(p.results.scoped.Hits)
	}
	return len(p.results.res.rows)
}

// selectable reports whether the cursor may rest on row i: every scoped
// hit, every line of a file's results but not the file's header.
func (p *Pane) selectable(i int) bool {
	if p.isScoped() {
		return true
	}
	return i < len(p.results.res.rows) && p.results.res.rows[i].ev >= 0
}

// move changes the selection by d rows, skipping file headers in the
// direction of travel.
func (p *Pane) move(d int) { p.results.list.Move(d) }

// selectedHit is the index of the scoped hit under the cursor, if any.
func (p *Pane) selectedHit() (int, bool) {
	i := p.results.list.Cursor()
	if !p.isScoped() || p.results.scoped == nil || i >= len(p.results.scoped.Hits) {
		return 0, false
	}
	return i, true
}

// selected is the event under the cursor, if any.
func (p *Pane) selected() (*search.Event, bool) {
	sel := p.results.list.Cursor()
	if p.isScoped() || sel >= len(p.results.res.rows) {
		return nil, false
	}
	r := p.results.res.rows[sel]
	if r.ev < 0 {
		return nil, false
	}
	return &p.results.res.events[r.ev], true
}

// absPath is where a result's file lives: event paths are relative to the
// sandbox root because the pane always sends relative paths.
func (p *Pane) absPath(rel string) string {
	return filepath.Join(p.root, filepath.FromSlash(rel))
}

// open runs the editor on the selected match (content) or opens the
// selected hit in the pane's viewer (scopes).
func (p *Pane) open() tea.Cmd {
	if p.isScoped() {
		i, ok := p.selectedHit()
		if !ok {
			return nil
		}
		sc, id := p.opts.Scopes[p.composer.scopeIdx-1], p.results.scoped.Hits[i].ID
		p.viewer.loading = true
		p.viewer.gen++
		gen := p.viewer.gen
		open := p.opts.ScopeOpen
		if open == nil {
			open = scope.Open
		}
		return func() tea.Msg {
			doc, err := open(sc, id)
			return docMsg{gen: gen, doc: doc, err: err}
		}
	}
	ev, ok := p.selected()
	if !ok {
		return nil
	}
	cmd, err := p.editorCommand(p.absPath(ev.Path), ev.LineNumber)
	if err != nil {
		p.notice = err.Error()
		return nil
	}
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return editorMsg{err: err} })
}

// editorCommand builds `$VISUAL +N file` (or $EDITOR, or vi). The variable
// may carry arguments ("code -w"); it is split on spaces, never run by a shell.
func (p *Pane) editorCommand(path string, line uint64) (*exec.Cmd, error) {
	ed := strings.TrimSpace(p.getenv("VISUAL"))
	if ed == "" {
		ed = strings.TrimSpace(p.getenv("EDITOR"))
	}
	if ed == "" {
		ed = "vi"
	}
	parts := strings.Fields(ed)
	args := append(parts[1:len(parts):len(parts)], fmt.Sprintf("+%d", max(line, 1)), path)
	return exec.Command(parts[0], args...), nil
}

// copySelection puts path:line on the clipboard: OSC 52 and the session's
// clipboard tool when one is installed (panes.Clipboard).
func (p *Pane) copySelection() tea.Cmd {
	var s string
	if p.isScoped() {
		i, ok := p.selectedHit()
		if !ok {
			return nil
		}
		s = p.results.scoped.Hits[i].ID
	} else if ev, ok := p.selected(); ok {
		s = fmt.Sprintf("%s:%d", ev.Path, ev.LineNumber)
	} else {
		return nil
	}
	// A name is pasted into shells and editors: control characters in it
	// (an ESC[201~ ending bracketed paste, a newline) would run as typed
	// there, and invisible ones would paste something other than what was
	// read. Such a name is not copied at all.
	if n := safetext.Hidden(s); n > 0 {
		p.notice = fmt.Sprintf("not copied: the name holds %d control or invisible characters (pasting it could run what it hides)", n)
		return nil
	}
	p.notice = "copied " + s
	return panes.Clipboard{Getenv: p.getenv}.Copy(s)
}

// syncPreview loads the selected file for the preview when it changes,
// off the UI goroutine.
func (p *Pane) syncPreview() tea.Cmd {
	if !p.preview.open {
		return nil
	}
	if p.isScoped() {
		return p.syncScopedPreview()
	}
	ev, ok := p.selected()
	if !ok || ev.Path == p.preview.path {
		return nil
	}
	p.preview.path, p.preview.lines, p.preview.err, p.preview.loading = ev.Path, nil, nil, true
	path, abs := ev.Path, p.absPath(ev.Path)
	return func() tea.Msg {
		lines, cut, err := readLines(abs, scope.OpenMaxBytes)
		return previewMsg{path: path, lines: lines, cut: cut, err: err}
	}
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

// complete extends the path field like a shell: a single candidate
// completes with a slash, several complete their common prefix. It reports
// whether the field changed.
func (p *Pane) complete() bool {
	v := p.composer.inputs[fPath].Value()
	dir, names := p.completions()
	if len(names) == 0 {
		return false
	}
	names = append([]string(nil), names...)
	next := dir + names[0] + "/"
	if len(names) > 1 {
		common := names[0]
		for _, n := range names[1:] {
			for !strings.HasPrefix(n, common) {
				common = common[:len(common)-1]
			}
		}
		next = dir + common
	}
	if next == v {
		return false
	}
	p.composer.inputs[fPath].SetValue(next)
	return true
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

// syncScopedPreview opens the selected hit for the preview when the
// selection changes, off the UI goroutine.
func (p *Pane) syncScopedPreview() tea.Cmd {
	i, ok := p.selectedHit()
	if !ok {
		return nil
	}
	id := p.results.scoped.Hits[i].ID
	if id == p.preview.scoped.id {
		return nil
	}
	p.preview.scoped = scopedPreview{id: id, loading: true}
	sc := p.opts.Scopes[p.composer.scopeIdx-1]
	open := p.opts.ScopeOpen
	if open == nil {
		open = scope.Open
	}
	return func() tea.Msg {
		doc, err := open(sc, id)
		return scopedPreviewMsg{id: id, doc: doc, err: err}
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

// followSelection re-aims the preview when the selection changes: the
// content preview centres on the hit's line, a scope hit's opens at its top.
// Scrolling (J/K, the wheel) then moves from there until the next change.
func (p *Pane) followSelection() {
	at := previewAt{gen: p.results.gen, scoped: p.isScoped(), row: p.results.list.Cursor(), set: true}
	if at == p.preview.at {
		return
	}
	p.preview.at = at
	if ev, ok := p.selected(); ok {
		p.preview.view.CenterOn(int(ev.LineNumber) - 1)
		return
	}
	p.preview.view.Top()
}

// area is a rectangle of the pane, in its own cells.
type area struct{ x, y, w, h int }

func (a area) has(x, y int) bool { return x >= a.x && x < a.x+a.w && y >= a.y && y < a.y+a.h }
