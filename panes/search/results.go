package searchpane

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
)

// resultList is the results on screen: a content search's rows or a
// scope's hits, the list's cursor over them, and the file errors.
type resultList struct {
	isScoped func() bool // the composer's: a scope's hits, not content rows

	gen      uint64 // generation of the results shown
	res      results
	scanned  int64
	fileErrs []search.FileError
	final    *search.Response
	runErr   string
	stopped  bool // ctrl+x stopped the search before it finished
	elapsed  time.Duration
	lastReq  search.Request

	scoped     *scope.Hits
	scopedText string

	// list is the results' cursor and top (content rows with their file
	// headers, or scoped hits); its Map is which row each drawn line shows
	list    panes.List
	listTop int // pane line the results start at, as last drawn

	showErrs bool
	errView  panes.Viewport // the file errors' scroll
	errBody  errLayout      // the file errors laid out
}

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
func (r *resultList) rowCount() int {
	if r.isScoped() {
		if r.scoped == nil {
			return 0
		}
		return len(r.scoped.Hits)
	}
	return len(r.res.rows)
}

// selectable reports whether the cursor may rest on row i: every scoped
// hit, every line of a file's results but not the file's header.
func (r *resultList) selectable(i int) bool {
	if r.isScoped() {
		return true
	}
	return i < len(r.res.rows) && r.res.rows[i].ev >= 0
}

// move changes the selection by d rows, skipping file headers in the
// direction of travel.
func (r *resultList) move(d int) { r.list.Move(d) }

// selectedHit is the index of the scoped hit under the cursor, if any.
func (r *resultList) selectedHit() (int, bool) {
	i := r.list.Cursor()
	if !r.isScoped() || r.scoped == nil || i >= len(r.scoped.Hits) {
		return 0, false
	}
	return i, true
}

// selected is the event under the cursor, if any.
func (r *resultList) selected() (*search.Event, bool) {
	sel := r.list.Cursor()
	if r.isScoped() || sel >= len(r.res.rows) {
		return nil, false
	}
	row := r.res.rows[sel]
	if row.ev < 0 {
		return nil, false
	}
	return &r.res.events[row.ev], true
}

// selection is what y copies: the scope hit's id, or the match's
// path:line.
func (r *resultList) selection() (string, bool) {
	if i, ok := r.selectedHit(); ok {
		return r.scoped.Hits[i].ID, true
	}
	if ev, ok := r.selected(); ok {
		return fmt.Sprintf("%s:%d", ev.Path, ev.LineNumber), true
	}
	return "", false
}

// clear empties the list for search gen (nothing shown for it yet). The
// fields are reset one by one: list's callbacks hold this struct.
func (r *resultList) clear(gen uint64) {
	r.res = results{}
	r.scoped = nil
	r.final = nil
	r.fileErrs = nil
	r.scanned = 0
	r.runErr = ""
	r.stopped = false
	r.showErrs = false
	r.list.Reset()
	r.gen = gen
	r.lastReq = search.Request{}
	r.scopedText = ""
}

// begin replaces the shown results with search gen's on its first news,
// so the screen never flashes empty while typing.
func (r *resultList) begin(gen uint64) {
	r.res = results{}
	r.fileErrs, r.final, r.runErr = nil, nil, ""
	r.stopped = false
	r.scanned = 0
	r.showErrs = false
	r.errView.Top()
	r.list.Reset()
	r.gen = gen
}

// add takes a batch of content events and file errors; the first events of
// a search put the cursor on its first match.
func (r *resultList) add(evs []search.Event, errs []search.FileError, scanned int64) {
	fresh := len(r.res.rows) == 0
	r.res.add(evs)
	if fresh {
		r.selectFirstMatch()
	}
	r.fileErrs = append(r.fileErrs, errs...)
	r.scanned = max(r.scanned, scanned)
}

// finish records a content search's final response.
func (r *resultList) finish(resp search.Response) {
	r.final = &resp
	r.scanned = resp.FilesScanned
	if resp.Errors != nil {
		r.fileErrs = resp.Errors // the complete list, in order
	}
}

// showScoped shows a scoped search's answer (nil hits: it failed).
func (r *resultList) showScoped(gen uint64, hits *scope.Hits, elapsed time.Duration) {
	r.elapsed = elapsed
	r.gen = gen
	r.showErrs = false
	r.list.Reset()
	r.scoped = hits
}

// selectFirstMatch puts the cursor on the first match line (not a header or
// a context line) of fresh results.
func (r *resultList) selectFirstMatch() {
	for i, row := range r.res.rows {
		if row.ev >= 0 && r.res.events[row.ev].Type == "match" {
			r.list.Select(i)
			return
		}
	}
	r.list.Select(0)
}

// absPath is where a result's file lives: event paths are relative to the
// sandbox root because the pane always sends relative paths.
func (p *Pane) absPath(rel string) string {
	return filepath.Join(p.root, filepath.FromSlash(rel))
}

// open runs the editor on the selected match (content) or opens the
// selected hit in the pane's viewer (scopes).
func (p *Pane) open() tea.Cmd {
	if p.composer.isScoped() {
		i, ok := p.results.selectedHit()
		if !ok {
			return nil
		}
		return p.viewer.open(p.composer.scope(), p.results.scoped.Hits[i].ID, p.scopeOpen())
	}
	ev, ok := p.results.selected()
	if !ok {
		return nil
	}
	cmd, err := p.editorCommand(p.absPath(ev.Path), ev.LineNumber)
	if err != nil {
		p.notice = err.Error()
		return nil
	}
	line := strings.Join(cmd.Args, " ")
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return editorMsg{cmd: line, err: err} })
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
	s, ok := p.results.selection()
	if !ok {
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

func (a area) has(x, y int) bool { return x >= a.x && x < a.x+a.w && y >= a.y && y < a.y+a.h }
