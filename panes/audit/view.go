package auditpane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/sahilm/fuzzy"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// rowCache keeps the parsed rows near the screen, by line offset: two
// generations, the older dropped when the newer fills, so it stays small
// without bookkeeping per hit.
type rowCache struct {
	cur, old map[int64]row
	gen      int // bumped on reset: reads for an older generation are dropped
}

const rowCacheSize = 2048

func (c *rowCache) get(off int64) (row, bool) {
	if r, ok := c.cur[off]; ok {
		return r, true
	}
	r, ok := c.old[off]
	if ok {
		c.put(off, r)
	}
	return r, ok
}

func (c *rowCache) put(off int64, r row) {
	if c.cur == nil || len(c.cur) >= rowCacheSize {
		c.old, c.cur = c.cur, make(map[int64]row, 256)
	}
	c.cur[off] = r
}

func (c *rowCache) reset() {
	c.cur, c.old = nil, nil
	c.gen++
}

type (
	rowsMsg struct {
		gen  int
		offs []int64
		rows []row
	}
	detailMsg struct {
		off   int64
		entry audit.Entry
		err   error
	}
)

// rowMargin is how many rows beyond the screen are read ahead each way.
const rowMargin = 100

// lineEnd is where line i ends (just after its newline).
func (p *Pane) lineEnd(i int) int64 {
	if i+1 < len(p.offs) {
		return p.offs[i+1]
	}
	return p.idxEnd
}

// fetchRows reads the rows of the lines around the screen that are not
// cached or asked for yet.
func (p *Pane) fetchRows() tea.Cmd {
	n := p.viewLen()
	if n == 0 {
		return nil
	}
	h := max(p.height, 60)
	top := p.list.TopFor(h)
	var offs, ends []int64
	for i := max(top-rowMargin, 0); i < min(top+h+rowMargin, n); i++ {
		line := p.lineAt(i)
		off := p.offs[line]
		if _, ok := p.rows.get(off); ok || p.asked[off] {
			continue
		}
		if p.raw != nil {
			p.rows.put(off, rowOf(p.raw[off:p.lineEnd(line)-1])) // in memory: no I/O
			continue
		}
		p.asked[off] = true
		offs, ends = append(offs, off), append(ends, p.lineEnd(line))
	}
	if len(offs) == 0 {
		return nil
	}
	path, gen := p.path, p.rows.gen
	return func() tea.Msg {
		out := rowsMsg{gen: gen, offs: offs, rows: make([]row, len(offs))}
		f, err := os.Open(path)
		if err != nil {
			return out // the rows stay unasked-for: the next change reloads
		}
		defer f.Close()
		for i, off := range offs {
			b := make([]byte, ends[i]-off)
			if _, err := f.ReadAt(b, off); err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
				out.rows[i] = newRow(audit.Entry{}, true)
				continue
			}
			out.rows[i] = rowOf(b[:len(b)-1])
		}
		return out
	}
}

func (p *Pane) applyRows(m rowsMsg) {
	if m.gen != p.rows.gen {
		return
	}
	for i, off := range m.offs {
		delete(p.asked, off)
		p.rows.put(off, m.rows[i])
	}
}

// viewLen is how many lines pass the filters (so far).
func (p *Pane) viewLen() int {
	if p.filtered {
		return len(p.view)
	}
	return len(p.offs)
}

// lineAt is the line number of the i-th line of the view.
func (p *Pane) lineAt(i int) int {
	if p.filtered {
		return p.view[i]
	}
	return i
}

// viewIndexOf is the position in the view of the first line at or after line.
func (p *Pane) viewIndexOf(line int) int {
	n := p.viewLen()
	if !p.filtered {
		return min(line, max(n-1, 0))
	}
	i, _ := slicesSearch(p.view, line)
	return min(i, max(n-1, 0))
}

func slicesSearch(s []int, x int) (int, bool) {
	lo, hi := 0, len(s)
	for lo < hi {
		m := (lo + hi) / 2
		if s[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s) && s[lo] == x
}

func (p *Pane) spec() filterSpec {
	return filterSpec{event: p.event, outcome: outcomes[p.outcome], query: p.filter.Value()}
}

// refilter starts the view over after a filter change or a new index: one
// pass over the lines, cancelling the one before, its matches streaming in.
func (p *Pane) refilter() tea.Cmd {
	p.filterGen++
	p.view, p.passNext, p.filterErr = nil, 0, nil
	sp := p.spec()
	if sp.empty() {
		if p.pass != nil {
			p.pass.cancel()
		}
		p.filtered, p.passing = false, false
		p.settleSelection()
		return nil
	}
	p.filtered = true
	return p.startPass(0)
}

// startPass filters lines [from, len(offs)) into the view: at once when
// they are in memory (a small log, or the tail before the index lands), else
// in a pass off the UI goroutine.
func (p *Pane) startPass(from int) tea.Cmd {
	if p.raw != nil || !p.indexed {
		if p.pass != nil {
			p.pass.cancel()
		}
		p.passing = false
		p.view = append(p.view, p.filterNow(from)...)
		p.passNext = len(p.offs)
		p.settleSelection()
		return nil
	}
	good := p.good
	if !p.indexed {
		good = nil // the tail's line numbers are not the chain's
	}
	var cmd tea.Cmd
	p.pass, cmd = startPass(p.pass, p.filterGen, p.path, p.offs[:len(p.offs):len(p.offs)], p.idxEnd, from, len(p.offs), p.spec(), good)
	p.passing = true
	return cmd
}

// filterNow filters lines [from, len(offs)) held in memory.
func (p *Pane) filterNow(from int) []int {
	var out []int
	sp := p.spec()
	if p.raw == nil { // the tail: its rows are cached
		for i := from; i < len(p.offs); i++ {
			if r, ok := p.rows.get(p.offs[i]); ok && sp.keeps(r) {
				out = append(out, i)
			}
		}
		return out
	}
	lf, known := newLineFilter(sp), int(p.good.Load())
	for i := from; i < len(p.offs); i++ {
		if lf.keeps(p.raw[p.offs[i]:p.lineEnd(i)-1], i < known) {
			out = append(out, i)
		}
	}
	return out
}

func (p *Pane) applyBatch(m filterBatchMsg) tea.Cmd {
	if m.pass != p.pass || m.gen != p.filterGen {
		return nil // superseded: that pass is cancelled
	}
	p.view = append(p.view, m.matches...)
	p.passNext = m.next
	if m.err != nil {
		p.filterErr = m.err
	}
	p.settleSelection()
	if !m.done {
		return m.pass.wait()
	}
	p.passing = false
	if len(p.offs) > m.pass.to {
		return p.startPass(m.pass.to) // lines appended meanwhile
	}
	return nil
}

// extendView takes lines [from, len(offs)) (just appended) into the view.
func (p *Pane) extendView(from int) tea.Cmd {
	if p.filtered && !p.passing {
		cmd := p.startPass(from)
		p.settleSelection()
		return cmd
	}
	p.settleSelection()
	return nil
}

// settleSelection keeps the selection in the view, on the last line when following.
func (p *Pane) settleSelection() {
	if p.follow {
		p.list.Last()
	}
}

// handleKey runs the mode's row for msg; other keys in the filter are typing.
func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if cmd, ok := p.keymap().Dispatch(msg); ok {
		return cmd
	}
	if p.filtering {
		if changed, _ := p.filter.Handle(msg); changed {
			return p.refilter()
		}
	}
	return nil
}

// inDetail is whether the detail view shows (its entry loaded, or failed to).
func (p *Pane) inDetail() bool { return p.detail != nil || p.detailErr != nil }

func (p *Pane) closeDetail() { p.detail, p.detailErr, p.wantDetail = nil, nil, -1 }

// openSelected opens the detail view of the selected entry.
func (p *Pane) openSelected() tea.Cmd {
	if p.viewLen() == 0 {
		return nil
	}
	p.detailLine = p.lineAt(p.list.Cursor())
	return p.openDetail(p.offs[p.detailLine])
}

func (p *Pane) openDetail(off int64) tea.Cmd {
	path := p.path
	p.wantDetail = off
	return func() tea.Msg {
		out := detailMsg{off: off}
		_, err := audit.Scan(path, off, func(l audit.Line) bool {
			out.entry, out.err = l.Entry, l.Err
			return false
		})
		if err != nil {
			out.err = err
		}
		return out
	}
}

func (p *Pane) move(d int) {
	p.list.Move(d)
	p.follow = p.list.Cursor() == p.viewLen()-1
}

// Report is the chain's state for the badge.
func (p *Pane) Report() string {
	switch {
	case p.loadErr != nil:
		return "cannot read log: " + p.loadErr.Error()
	case p.chain == nil:
		if p.verTotal > 0 {
			return fmt.Sprintf("verifying… %d%%", percent(p.verDone, p.verTotal))
		}
		return "verifying…"
	case p.broken() != nil:
		b := p.broken()
		return fmt.Sprintf("BROKEN at #%d: %s", b.Index, b.Detail)
	default:
		s := fmt.Sprintf("chain verified · %d entries", p.chain.Len())
		if n := len(p.chain.Sealed()); n > 0 {
			s += fmt.Sprintf(" · %d sealed gap(s)", n)
		}
		return s
	}
}

func percent(done, total int64) int64 {
	if total <= 0 {
		return 0
	}
	return min(done*100/total, 100)
}

// View renders the table or the detail view.
func (p *Pane) View(w, h int) string {
	s := p.styles
	p.list.Map.Reset(0, 0, 0) // a frame without the table (the detail) maps no rows for clicks
	if w <= 0 || h <= 0 {
		return panes.Block(nil, w, h)
	}
	badge := p.Report()
	var badgeStyled string
	switch {
	case p.broken() != nil, p.loadErr != nil:
		badgeStyled = s.Err.Render("✗ " + badge)
	case p.chain == nil:
		badgeStyled = s.Muted.Render(badge)
	default:
		badgeStyled = s.Success.Render("✓ " + badge)
	}
	filters := []string{}
	if p.event != "" {
		filters = append(filters, "event="+p.event)
	}
	if o := outcomes[p.outcome]; o != "" {
		filters = append(filters, "outcome="+o)
	}
	head := s.Heading.Render("Audit log") + "  " + badgeStyled
	if len(filters) > 0 {
		head += "  " + s.Warning.Render("["+strings.Join(filters, " ")+"]")
	}
	switch {
	case p.indexing && p.idxTotal > 0:
		head += "  " + s.Muted.Render(fmt.Sprintf("indexing… %d%%", percent(p.idxDone, p.idxTotal)))
	case p.passing:
		head += "  " + s.Muted.Render(fmt.Sprintf("filtering… %d%%", percent(int64(p.passNext), int64(len(p.offs)))))
	case p.filterErr != nil:
		head += "  " + s.Err.Render("filter: "+safetext.Line(p.filterErr.Error()))
	}
	lines := []string{head}
	if p.filtering || p.filter.Value() != "" {
		lines = append(lines, p.filterLine(w))
	}
	if p.detail != nil || p.detailErr != nil {
		body := append(lines[1:], p.detailLines(w)...)
		return panes.Block(append([]string{lines[0]}, p.detailView.Window(body, h-1)...), w, h)
	}
	cols := columns(w)
	lines = append(lines, s.Label.Render(cols.format("TIME", "ACTOR", "EVENT", "TASK", "TARGET", "OUTCOME")))
	p.list.Map.Reset(len(lines), 0, w)
	tableH := h - len(lines)
	p.height = tableH
	n := p.viewLen()
	if n == 0 {
		msg := "no entries yet"
		switch {
		case p.passing:
			msg = "filtering…"
		case len(p.offs) > 0:
			msg = "no entries match the filters (x clears them)"
		}
		lines = append(lines, s.Muted.Render(msg))
		return panes.Block(lines, w, h)
	}
	badLine := int64(-1)
	if b := p.broken(); b != nil && p.indexed {
		badLine = b.Index
	}
	query := p.filter.Value()
	rows := p.list.Render(tableH, func(i int, selected bool) []string {
		line := p.tableRow(p.lineAt(i), badLine, query, cols)
		if selected {
			line = panes.SelectRow(line, w, s.Selected)
		}
		return []string{line}
	})
	return panes.Block(append(lines, rows...), w, h)
}

// tableRow is line li of the log as a table row: read (or being read),
// marked where the chain breaks, the filter's matches highlighted.
func (p *Pane) tableRow(li int, badLine int64, query string, cols cols) string {
	s := p.styles
	r, ok := p.rows.get(p.offs[li])
	if !ok {
		r = row{time: "…"} // being read
	}
	switch {
	case int64(li) == badLine:
		// the entry where the chain breaks: marked, whatever the filter
		return s.Err.Render(cols.format(r.time, r.actor, r.event, r.task, r.target, "✗ "+p.broken().Reason))
	case !ok:
		return s.Muted.Render(cols.format(r.time, "", "", "", "", ""))
	case query != "":
		line := cols.format(r.time, r.actor, r.event, r.task, r.target, r.outcome)
		if m := fuzzy.Find(query, []string{r.hay()}); len(m) == 1 {
			line = highlight(r, cols, m[0].MatchedIndexes, s)
		}
		return line
	}
	line := cols.format(r.time, r.actor, r.event, r.task, r.target, r.outcome)
	if r.outcome != "ok" {
		line = s.Warning.Render(line)
	}
	return line
}

// filterLine is the / filter: the field with its cursor while typing, its
// value (made safe) otherwise.
func (p *Pane) filterLine(w int) string {
	s := p.styles
	if !p.filtering {
		return s.Cursor.Render("/") + s.Input.Render(safetext.Line(p.filter.Value()))
	}
	if p.filter.Value() == "" {
		return s.Cursor.Render("/") + s.Cursor.Reverse(true).Render(" ") + s.Muted.Render("fuzzy filter")
	}
	before, at, after := p.filter.Window(max(w-1, 1))
	return s.Cursor.Render("/") + s.InputFocused.Render(before) + s.Cursor.Reverse(true).Render(at) + s.InputFocused.Render(after)
}

func (p *Pane) detailLines(w int) []string {
	s := p.styles
	var why []string
	if b := p.broken(); b != nil && p.indexed && int64(p.detailLine) == b.Index {
		for _, l := range panes.Wrap(fmt.Sprintf("✗ the chain breaks here: %s — %s", b.Reason, b.Detail), max(w, 1)) {
			why = append(why, s.Err.Render(l))
		}
	}
	if p.detailErr != nil {
		return append(why, s.Err.Render("this line is damaged: "+p.detailErr.Error()), s.Muted.Render("esc: back"))
	}
	e := *p.detail
	var details bytes.Buffer
	if err := json.Indent(&details, e.Details, "", "  "); err != nil {
		details.Write(e.Details)
	}
	fields := [][2]string{
		{"seq", fmt.Sprint(e.Seq)}, {"time", e.Time}, {"actor", e.Actor}, {"event", e.Event},
		{"task_id", e.TaskID}, {"capability", e.Capability}, {"target", e.Target}, {"token_jti", e.TokenJTI},
		{"success", fmt.Sprint(e.Success)}, {"error_code", e.ErrorCode},
		{"content_hash_before", e.ContentHashBefore}, {"content_hash_after", e.ContentHashAfter},
		{"prev", e.Prev}, {"hash", e.Hash},
	}
	out := []string{s.Title.Render(fmt.Sprintf("Entry #%d", e.Seq)) + s.Muted.Render("  (esc: back, ↑/↓ scroll)")}
	out = append(out, why...)
	for _, f := range fields {
		label := s.Label.Render(fmt.Sprintf("%-20s", f[0]))
		wrapped := panes.Wrap(safetext.Line(f[1]), max(w-21, 1))
		if len(wrapped) == 0 {
			wrapped = []string{""}
		}
		out = append(out, label+" "+wrapped[0])
		for _, more := range wrapped[1:] {
			out = append(out, strings.Repeat(" ", 21)+more)
		}
	}
	out = append(out, s.Label.Render("details"))
	for _, l := range strings.Split(details.String(), "\n") {
		out = append(out, panes.Wrap(safetext.Line(l), max(w-2, 1))...)
	}
	return out
}

type cols struct{ widths [6]int }

func columns(w int) cols {
	// time 20, event 10, outcome 16 (approval_timeout); the rest shares what is left
	c := cols{widths: [6]int{20, 0, 10, 0, 0, 16}}
	rest := w - 20 - 10 - 16 - 5
	if rest < 12 {
		rest = 12
	}
	c.widths[1] = rest * 30 / 100
	c.widths[3] = rest * 35 / 100
	c.widths[4] = rest - c.widths[1] - c.widths[3]
	return c
}

func (c cols) format(v ...string) string {
	parts := make([]string, len(v))
	for i, s := range v {
		parts[i] = panes.Fit(s, c.widths[i])
	}
	return strings.Join(parts, " ")
}

// highlight renders a row with the fuzzy filter's matched characters styled.
func highlight(r row, c cols, hits []int, s *themes.Styles) string {
	set := map[int]bool{}
	for _, h := range hits {
		set[h] = true
	}
	fields := []string{r.time, r.actor, r.event, r.task, r.target, r.outcome}
	var parts []string
	base := 0 // byte offset of the field in the haystack (fuzzy reports byte offsets)
	for i, f := range fields {
		var b strings.Builder
		for j, ch := range panes.Fit(f, c.widths[i]) {
			// the haystack joins fields with single spaces; the fitted text
			// matches the field byte for byte until a cut's ellipsis
			if j < len(f) && set[base+j] && strings.HasPrefix(f[j:], string(ch)) {
				b.WriteString(s.MatchChar.Render(string(ch)))
			} else {
				b.WriteRune(ch)
			}
		}
		parts = append(parts, b.String())
		base += len(f) + 1
	}
	return strings.Join(parts, " ")
}

// ShortHelp is the status bar's keys for the current mode, from its rows.
func (p *Pane) ShortHelp() []key.Binding { return p.keymap().Footer() }

// FullHelp is the ? overlay's keys for the current mode, from its rows (the
// table's after another mode's, for what esc returns to).
func (p *Pane) FullHelp() [][]key.Binding {
	list := p.km.list.HelpGroups()
	if p.filtering || p.inDetail() {
		return append([][]key.Binding{p.keymap().Help()}, list...)
	}
	return list
}
