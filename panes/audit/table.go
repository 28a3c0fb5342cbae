package auditpane

import (
	"os"
	"sort"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/preview"
)

// table is the child that holds what the table shows: the index of line
// starts (audit/index), the rows read around the screen, the event names for
// the event filter's cycle, and the cursor.
type table struct {
	// the index: where each line starts; until the full scan lands, only the
	// tail's lines (numbered from the tail's first)
	offs     []int64
	end      int64         // just after the last indexed line
	fol      *index.Cursor // follows the log from end: appends extend the index
	raw      []byte        // the bytes [0, end) of a small log (see inMemoryLog); nil otherwise
	indexed  bool          // offs covers the whole file
	indexing bool          // a full scan is in flight
	gen      int           // generation of the latest full scan
	done     int64         // the full scan's progress
	total    int64
	reads    int  // index extensions in flight
	pending  bool // a change arrived while the index was read

	rows  rowCache
	asked map[int64]bool // rows being read

	events    []string // event names in order of appearance
	seenEvent map[string]bool

	// list is the cursor over the view (positions, not lines: a filter
	// changes which line each is); its Map is which row each drawn table
	// line is, for clicks
	list   panes.List
	follow bool // the cursor rides the last line as lines are appended
	height int  // the table's rows at the last frame
}

func newTable() table { return table{follow: true, asked: map[int64]bool{}} }

// span is the index as the engine's filter reads it.
func (t *table) span() index.Span { return index.Span{Offs: t.offs, End: t.end} }

// lineEnd is where line i ends (just after its newline).
func (t *table) lineEnd(i int) int64 { return t.span().LineEnd(i) }

// lineOf is the number of the first line starting at or after off.
func (t *table) lineOf(off int64) int {
	return sort.Search(len(t.offs), func(i int) bool { return t.offs[i] >= off })
}

// noteEvent records an event name, in order of appearance, so cycling the
// event filter never rescans the log.
func (t *table) noteEvent(e string) {
	if t.seenEvent == nil {
		t.seenEvent = map[string]bool{}
	}
	if !t.seenEvent[e] && len(t.events) < index.MaxEvents {
		t.seenEvent[e] = true
		t.events = append(t.events, e)
	}
}

// nextEvent cycles the event filter through the events present.
func (t *table) nextEvent(cur string) string {
	if cur == "" {
		if len(t.events) > 0 {
			return t.events[0]
		}
		return ""
	}
	for i, e := range t.events {
		if e == cur && i+1 < len(t.events) {
			return t.events[i+1]
		}
	}
	return ""
}

// messages of the index and the rows
type (
	tailMsg struct {
		offs []int64
		rows []index.Row
		end  int64
	}
	indexMsg struct {
		gen int
		index.Scanned
	}
	indexMoreMsg struct {
		gen int
		index.Scanned
	}
	rowsMsg struct {
		gen  int
		offs []int64
		rows []index.Row
	}
)

func (p *Pane) readTail() tea.Cmd {
	path := p.path
	return p.life.cmd(func() tea.Msg {
		lines, _, err := audit.ReadTail(path, tailRows)
		if err != nil {
			return tailMsg{}
		}
		out := tailMsg{offs: make([]int64, len(lines)), rows: make([]index.Row, len(lines))}
		for i, l := range lines {
			out.offs[i] = l.Offset
			out.rows[i] = index.NewRow(l.Entry, l.Err != nil)
		}
		if len(lines) > 0 {
			// the tail's last line ends where the next one starts: at the
			// end of the file's complete lines
			out.end, _ = audit.EndOfCompleteLines(path)
		}
		return out
	})
}

// applyTail shows the tail until the index lands, then starts the full reads.
func (p *Pane) applyTail(msg tailMsg) tea.Cmd {
	t := &p.table
	if t.indexed || t.indexing {
		return nil
	}
	t.offs, t.end = msg.offs, msg.end
	t.rows.reset()
	for i, r := range msg.rows {
		t.rows.put(msg.offs[i], r)
		t.noteEvent(r.Event)
	}
	return tea.Batch(p.refilter(), p.reload())
}

func (p *Pane) applyIndex(msg indexMsg) tea.Cmd {
	t := &p.table
	if msg.gen != t.gen {
		return nil // a newer scan is coming
	}
	t.indexing = false
	if msg.Err != nil {
		p.ver.loadErr = msg.Err
		return nil
	}
	// keep the selection on the same line when the numbering changes
	selOff := int64(-1)
	if sel := t.list.Cursor(); !t.follow && sel < p.viewLen() {
		selOff = t.offs[p.lineAt(sel)]
	}
	t.offs, t.end, t.indexed, t.raw = msg.Offs, msg.End, true, msg.Raw
	t.fol = index.NewCursor(p.path, msg.End)
	t.rows.reset()
	t.asked = map[int64]bool{}
	t.events, t.seenEvent = nil, nil
	for _, e := range msg.Events {
		t.noteEvent(e)
	}
	p.noteDamaged()
	cmd := p.refilter()
	if selOff >= 0 {
		t.list.Select(p.viewIndexOf(t.lineOf(selOff)))
	}
	if p.detail.want >= 0 {
		p.detail.line = t.lineOf(p.detail.want) // numbered anew
	}
	if t.pending {
		t.pending = false
		cmd = tea.Batch(cmd, p.indexMore())
	}
	return cmd
}

func (p *Pane) applyIndexMore(msg indexMoreMsg) tea.Cmd {
	t := &p.table
	t.reads = max(t.reads-1, 0)
	if msg.gen != t.gen || t.indexing {
		return nil // a full scan since (or in flight) covers it
	}
	if msg.Err != nil {
		return p.reload() // cut or replaced: read it all again
	}
	var cmd tea.Cmd
	if msg.From == t.end && msg.End >= t.end {
		n := len(t.offs)
		if t.raw != nil && msg.Raw != nil && int64(len(t.raw)) == msg.From {
			t.raw = append(t.raw, msg.Raw...)
		} else {
			t.raw = nil // grown past inMemoryLog: read from the file from now on
		}
		t.offs = append(t.offs, msg.Offs...)
		t.end = msg.End
		for _, e := range msg.Events {
			t.noteEvent(e)
		}
		cmd = p.extendView(n)
	}
	t.pending = t.pending || msg.More
	if t.pending && t.reads == 0 {
		t.pending = false
		cmd = tea.Batch(cmd, p.indexMore())
	}
	return cmd
}

// indexMore extends the index by the lines appended since it was read.
func (p *Pane) indexMore() tea.Cmd {
	t := &p.table
	t.reads++
	fol, gen := t.fol, t.gen
	limit := int64(-1) // grown past inMemoryLog: the bytes are read from the file
	if t.raw != nil {
		limit = p.inMemory
	}
	seen := make(map[string]bool, len(t.events))
	for _, e := range t.events {
		seen[e] = true
	}
	return p.life.cmd(func() tea.Msg {
		return indexMoreMsg{gen: gen, Scanned: index.Extend(fol, seen, limit)}
	})
}

// noteDamaged offers "(damaged)" to the event filter once the chain has
// found a line that does not parse (the index, which parses nothing, cannot).
func (p *Pane) noteDamaged() {
	if p.ver.chain == nil {
		return
	}
	if b := p.ver.chain.Bad(); b != nil && (b.Reason == audit.ReasonGarbage || b.Reason == audit.ReasonEdited) {
		p.table.noteEvent(index.DamagedEvent)
	}
}

// rowCache keeps the parsed rows near the screen, by line offset: two
// generations, the older dropped when the newer fills, so it stays small
// without bookkeeping per hit.
type rowCache struct {
	cur, old map[int64]index.Row
	gen      int // bumped on reset: reads for an older generation are dropped
}

const rowCacheSize = 2048

func (c *rowCache) get(off int64) (index.Row, bool) {
	if r, ok := c.cur[off]; ok {
		return r, true
	}
	r, ok := c.old[off]
	if ok {
		c.keep(off, r)
	}
	return r, ok
}

// put caches a row read from the log, as it will be shown: ids an agent
// chose (the actor, a lease's sub, and the task id) masked when they are
// secret-shaped (a pasted key used as an id), as every other screen shows
// them; the filter matches what is shown.
func (c *rowCache) put(off int64, r index.Row) {
	r.Actor, r.Task = preview.MaskIdentifier(r.Actor), preview.MaskIdentifier(r.Task)
	c.keep(off, r)
}

func (c *rowCache) keep(off int64, r index.Row) {
	if c.cur == nil || len(c.cur) >= rowCacheSize {
		c.old, c.cur = c.cur, make(map[int64]index.Row, 256)
	}
	c.cur[off] = r
}

func (c *rowCache) reset() {
	c.cur, c.old = nil, nil
	c.gen++
}

// rowMargin is how many rows beyond the screen are read ahead each way.
const rowMargin = 100

// fetchRows reads the rows of the lines around the screen that are not
// cached or asked for yet.
func (p *Pane) fetchRows() tea.Cmd {
	t := &p.table
	n := p.viewLen()
	if n == 0 {
		return nil
	}
	h := max(t.height, 60)
	top := t.list.TopFor(h)
	var offs, ends []int64
	for i := max(top-rowMargin, 0); i < min(top+h+rowMargin, n); i++ {
		line := p.lineAt(i)
		off := t.offs[line]
		if _, ok := t.rows.get(off); ok || t.asked[off] {
			continue
		}
		if t.raw != nil {
			t.rows.put(off, index.RowOf(t.raw[off:t.lineEnd(line)-1])) // in memory: no I/O
			continue
		}
		t.asked[off] = true
		offs, ends = append(offs, off), append(ends, t.lineEnd(line))
	}
	if len(offs) == 0 {
		return nil
	}
	path, gen := p.path, t.rows.gen
	return p.life.cmd(func() tea.Msg { return readRows(path, gen, offs, ends) })
}

// readRows reads the rows of the lines [offs[i], ends[i]).
func readRows(path string, gen int, offs, ends []int64) tea.Msg {
	out := rowsMsg{gen: gen, offs: offs, rows: make([]index.Row, len(offs))}
	f, err := os.Open(path)
	if err != nil {
		return out // the rows stay unasked-for: the next change reloads
	}
	defer f.Close()
	for i, off := range offs {
		b := make([]byte, ends[i]-off)
		if _, err := f.ReadAt(b, off); err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			out.rows[i] = index.NewRow(audit.Entry{}, true)
			continue
		}
		out.rows[i] = index.RowOf(b[:len(b)-1])
	}
	return out
}

func (t *table) applyRows(m rowsMsg) {
	if m.gen != t.rows.gen {
		return
	}
	for i, off := range m.offs {
		delete(t.asked, off)
		t.rows.put(off, m.rows[i])
	}
}

// viewLen is how many lines pass the filters (so far).
func (p *Pane) viewLen() int {
	if p.filter.on {
		return len(p.filter.view)
	}
	return len(p.table.offs)
}

// lineAt is the line number of the i-th line of the view.
func (p *Pane) lineAt(i int) int {
	if p.filter.on {
		return p.filter.view[i]
	}
	return i
}

// viewIndexOf is the position in the view of the first line at or after line.
func (p *Pane) viewIndexOf(line int) int {
	n := p.viewLen()
	if !p.filter.on {
		return min(line, max(n-1, 0))
	}
	i, _ := sort.Find(len(p.filter.view), func(k int) int { return line - p.filter.view[k] })
	return min(i, max(n-1, 0))
}

// settleSelection keeps the selection in the view, on the last line when following.
func (p *Pane) settleSelection() {
	if p.table.follow {
		p.table.list.Last()
	}
}

func (p *Pane) move(d int) {
	p.table.list.Move(d)
	p.table.follow = p.table.list.Cursor() == p.viewLen()-1
}
