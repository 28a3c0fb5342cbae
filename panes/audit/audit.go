// Package auditpane is the Audit screen: a table of the audit log that follows
// new entries live, filters fuzzily, shows every field, and keeps a chain badge.
package auditpane

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/sahilm/fuzzy"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/exec/safetext"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
)

// tailRows is how much of the log the first frame reads: enough to fill any
// screen, small enough to be instant on a million-entry log.
const tailRows = 500

type row struct {
	off     int64
	seq     int64
	time    string
	actor   string
	event   string
	task    string
	target  string
	outcome string
	bad     bool
	hay     string // what the fuzzy filter searches
}

func newRow(l audit.Line) row {
	e := l.Entry
	// fields come from the file: controls and invisible characters show as escapes
	r := row{off: l.Offset, seq: e.Seq, time: shown(e.Time), actor: shown(e.Actor), event: shown(e.Event),
		task: shown(e.TaskID), target: shown(e.Target), outcome: shown(e.Outcome()), bad: l.Err != nil}
	if r.bad {
		r.event, r.outcome = "(damaged)", "damaged"
	}
	r.hay = strings.Join([]string{r.time, r.actor, r.event, r.task, r.target, r.outcome}, " ")
	return r
}

// shown is safetext.Line with a fast path for the common case (printable
// ASCII without a backslash, which it returns unchanged): a million rows are
// built on every full load.
func shown(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '\\' {
			return safetext.Line(s)
		}
	}
	return s
}

// messages; gen ties a load to the request that caused it
type (
	tailMsg struct {
		rows []row
	}
	fullMsg struct {
		gen     int
		confirm bool // a second look at a head that disagreed
		rows    []row
		end     int64
		chain   *audit.Chain
		anchor  *audit.Report // the head disagrees with the chain
		mark    fileMark
		first   string // entry #0's hash
		err     error
	}
	changedMsg struct{}
	confirmMsg struct{ gen int }
	moreMsg    struct {
		gen    int   // the full load the read extends
		from   int64 // where the read began: only a read from p.end is applied
		lines  []audit.Line
		end    int64
		anchor audit.Anchor
		mark   fileMark
		reload bool // not a pure append: read the whole log again
		err    error
	}
	detailMsg struct {
		off   int64
		entry audit.Entry
		err   error
	}
)

// Keys are the pane's bindings.
type Keys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Filter, Event, Outcome, Clear, Open     key.Binding
	Back                                    key.Binding
}

func defaultKeys() Keys {
	b := func(k []string, h, d string) key.Binding {
		return key.NewBinding(key.WithKeys(k...), key.WithHelp(h, d))
	}
	return Keys{
		Up: b([]string{"up", "k"}, "↑/k", "up"), Down: b([]string{"down", "j"}, "↓/j", "down"),
		PageUp: b([]string{"pgup", "ctrl+u"}, "pgup", "page up"), PageDown: b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Top: b([]string{"home", "g"}, "g", "first"), Bottom: b([]string{"end", "G"}, "G", "last (follow)"),
		Filter: b([]string{"/"}, "/", "filter"), Event: b([]string{"e"}, "e", "event filter"),
		Outcome: b([]string{"o"}, "o", "outcome filter"), Clear: b([]string{"x"}, "x", "clear filters"),
		Open: b([]string{"enter"}, "enter", "details"), Back: b([]string{"esc"}, "esc", "back"),
	}
}

var outcomes = []string{"", "ok", "failed"}

// Pane is the Audit screen.
type Pane struct {
	path   string
	styles *themes.Styles
	keys   Keys

	rows   []row
	full   bool  // rows hold the whole file (not just the tail)
	end    int64 // file offset after the last row read
	chain  *audit.Chain
	anchor *audit.Report // the head disagrees with the chain
	// seen is the chain this screen last showed verified: a log deleted, cut
	// or replaced together with its head verifies on its own, not against it
	seenN      int64
	seenFirst  string
	seenSealed int
	gone       *audit.Report // the log is no longer the one seen
	mark       fileMark      // which file the rows came from, and its last line
	gen        int           // generation of the latest full load
	loading    bool          // a full load is in flight
	pending    bool          // a change arrived while a read ran
	reads      int           // incremental reads in flight
	loadErr    error

	filter     textinput.Model
	filtering  bool
	event      string
	outcome    int
	view       []int    // indexes into rows after filters
	filterGen  int      // generation of the latest filter request
	filterBusy bool     // a large log is being filtered in a command
	events     []string // event names in order of appearance
	seenEvent  map[string]bool
	hits       map[int][]int // row index → matched character indexes in hay

	sel, top int
	follow   bool
	height   int

	detail       *audit.Entry
	detailRow    int // index in rows of the entry shown
	detailErr    error
	detailScroll int
	wantDetail   int64 // offset of the entry the detail view waits for; -1 for none

	watcher  *panes.Watcher
	smallLog int64 // smallLog when the pane was made
}

// New builds the pane over the log at path.
func New(path string, styles *themes.Styles) *Pane {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "fuzzy filter"
	return &Pane{path: path, styles: styles, keys: defaultKeys(), filter: ti, follow: true, wantDetail: -1, smallLog: smallLog}
}

func (p *Pane) ID() string                 { return "audit" }
func (p *Pane) Title() string              { return "Audit" }
func (p *Pane) SetStyles(s *themes.Styles) { p.styles = s }
func (p *Pane) Capturing() bool            { return p.filtering }
func (p *Pane) Badge() string              { return "" }

// Init reads the tail for the first frame and starts the full load and the watcher.
func (p *Pane) Init() tea.Cmd {
	// the head too: an edit to it alone breaks the chain's anchor
	w, err := panes.Watch(filepath.Dir(p.path), filepath.Base(p.path), filepath.Base(audit.HeadPath(p.path)))
	if err == nil {
		p.watcher = w
	}
	path := p.path
	tail := func() tea.Msg {
		lines, _, err := audit.ReadTail(path, tailRows)
		if err != nil {
			return tailMsg{}
		}
		rows := make([]row, len(lines))
		for i, l := range lines {
			rows[i] = newRow(l)
		}
		return tailMsg{rows: rows}
	}
	return tea.Batch(tail, p.loadAll(), p.watcher.Wait(changedMsg{}))
}

// smallLog is the size up to which every change re-reads and re-verifies the
// whole log (up to ~0.1 s): an edit in place anywhere is caught. Above
// it, a change that is not a pure append (the file replaced, shrunk, or its
// last known line changed) triggers the full re-read, and appends are checked
// incrementally.
var smallLog int64 = 4 << 20

// fileMark is what a change is compared with: the file the rows were read
// from, a hash of its last line and a hash of every line read, taken from
// what was parsed (never re-read later, so an edit racing the read still
// shows as a change).
type fileMark struct {
	info    os.FileInfo
	lastOff int64 // -1: no line
	last    [32]byte
	// prefix hashes the lines read so far as the bytes [0, end) they are
	// (a valid line is its entry's canonical bytes); nil once one was not
	// valid. Shared read-only: clone before writing.
	prefix hash.Hash
}

// clone is m with a prefix hash of its own to extend.
func (m fileMark) clone() fileMark {
	if m.prefix == nil {
		return m
	}
	st, err := m.prefix.(encoding.BinaryMarshaler).MarshalBinary()
	h := sha256.New()
	if err != nil || h.(encoding.BinaryUnmarshaler).UnmarshalBinary(st) != nil {
		m.prefix = nil
		return m
	}
	m.prefix = h
	return m
}

// confirmDelay is how long a head that disagrees with the log is given to
// catch up before the badge says so: an append moves the head just after the
// log, so a read between the two (and a seal or a cut log's repair) sees an
// old head for a moment.
const confirmDelay = 150 * time.Millisecond

// loadAll reads the whole log off the UI goroutine, verifying as it goes.
func (p *Pane) loadAll() tea.Cmd { return p.load(false) }

func (p *Pane) load(confirm bool) tea.Cmd {
	p.gen++
	p.loading = true
	path, gen := p.path, p.gen
	return func() tea.Msg {
		anchor := audit.ReadAnchor(path) // before the log: appends move the head last
		info, _ := os.Stat(path)
		chain := audit.NewChain()
		var rows []row
		mark := fileMark{info: info, lastOff: -1, prefix: sha256.New()}
		first := ""
		end, err := audit.Scan(path, 0, func(l audit.Line) bool {
			if len(rows) == 0 && l.Err == nil {
				first = l.Entry.Hash
			}
			chain.FeedParsed(l.Entry, l.Err)
			rows = append(rows, newRow(l))
			mark.note(l)
			return true
		})
		return fullMsg{gen: gen, confirm: confirm, rows: rows, end: end, chain: chain, anchor: chain.CheckAnchor(anchor), mark: mark, first: first, err: err}
	}
}

func (m *fileMark) note(l audit.Line) {
	m.lastOff = l.Offset
	if l.Err != nil {
		m.last = [32]byte{} // the chain is broken: every change reloads anyway
		m.prefix = nil
		return
	}
	b, _ := l.Entry.Line() // a valid line is its entry's canonical bytes
	m.last = sha256.Sum256(b)
	if m.prefix != nil {
		m.prefix.Write(b)
		m.prefix.Write([]byte{'\n'})
	}
}

// appendedOnly says whether the file at path is still the one mark describes
// with bytes only added after from.
func (m fileMark) appendedOnly(path string, from int64) bool {
	st, err := os.Stat(path)
	if err != nil || m.info == nil || !os.SameFile(st, m.info) || st.Size() < from {
		return false
	}
	if m.lastOff < 0 {
		return from == 0
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, from-m.lastOff)
	if _, err := f.ReadAt(b, m.lastOff); err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
		return false
	}
	if sha256.Sum256(b[:len(b)-1]) != m.last || m.prefix == nil {
		return false
	}
	// and every byte before it as read: an entry edited in place in the
	// middle keeps the size and the last line
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false
	}
	h := sha256.New()
	if n, err := io.Copy(h, io.LimitReader(f, from)); err != nil || n != from {
		return false
	}
	return bytes.Equal(h.Sum(nil), m.prefix.Sum(nil))
}

func (p *Pane) readMore() tea.Cmd {
	p.reads++
	path, from, gen, mark, small := p.path, p.end, p.gen, p.mark.clone(), p.smallLog
	broken := p.broken() != nil
	return func() tea.Msg {
		if broken || !mark.appendedOnly(path, from) {
			return moreMsg{gen: gen, from: from, reload: true}
		}
		if st, err := os.Stat(path); err == nil && st.Size() <= small {
			return moreMsg{gen: gen, from: from, reload: true}
		}
		anchor := audit.ReadAnchor(path)
		var lines []audit.Line
		end, err := audit.Scan(path, from, func(l audit.Line) bool {
			lines = append(lines, l)
			mark.note(l)
			return true
		})
		return moreMsg{gen: gen, from: from, lines: lines, end: end, anchor: anchor, mark: mark, err: err}
	}
}

// confirmLater asks for a second full read after confirmDelay, unless
// another read happens first.
func (p *Pane) confirmLater() tea.Cmd {
	gen := p.gen
	return tea.Tick(confirmDelay, func(time.Time) tea.Msg { return confirmMsg{gen: gen} })
}

// broken is the first thing wrong with the log, or nil.
func (p *Pane) broken() *audit.Report {
	switch {
	case p.chain == nil:
		return nil
	case p.chain.Bad() != nil:
		return p.chain.Bad()
	case p.anchor != nil:
		return p.anchor
	default:
		return p.gone
	}
}

// lostSince is what became of the chain this screen last showed verified,
// given the freshly read one (entry #0's hash first), or nil: still there,
// perhaps longer, or cut on purpose (sealed).
func (p *Pane) lostSince(first string) *audit.Report {
	n := p.chain.Len()
	switch {
	case p.seenN == 0 || p.chain.Bad() != nil:
		return nil
	case n == 0:
		return &audit.Report{Index: 0, Reason: audit.ReasonTruncated,
			Detail: fmt.Sprintf("the log this screen verified (%d entries) is gone, with its head", p.seenN)}
	case first != p.seenFirst:
		return &audit.Report{Index: 0, Reason: audit.ReasonReplaced,
			Detail: fmt.Sprintf("entry #0 is not the one of the log this screen verified (%d entries): replaced, with its head", p.seenN)}
	case n < p.seenN && len(p.chain.Sealed()) <= p.seenSealed:
		return &audit.Report{Index: n, Reason: audit.ReasonTruncated,
			Detail: fmt.Sprintf("the log ends at %d entries but this screen verified %d: cut, with its head", n, p.seenN)}
	}
	return nil
}

// noteSeen remembers the chain on screen as verified.
func (p *Pane) noteSeen(first string) {
	if p.broken() == nil {
		p.seenN, p.seenSealed = p.chain.Len(), len(p.chain.Sealed())
		if first != "" {
			p.seenFirst = first
		}
	}
}

// Update handles the pane's messages and, when focused, keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tailMsg:
		if !p.full {
			p.rows = msg.rows
			p.noteEvents(0)
			return p.refilter()
		}
	case fullMsg:
		if msg.gen != p.gen {
			return nil // a newer full load is coming
		}
		p.loading = false
		p.loadErr = msg.err
		p.rows, p.end, p.chain, p.full = msg.rows, msg.end, msg.chain, true
		p.anchor, p.mark = msg.anchor, msg.mark
		gone := p.lostSince(msg.first)
		var confirm tea.Cmd
		if (p.anchor != nil || gone != nil) && !msg.confirm {
			p.anchor, gone, confirm = nil, nil, p.confirmLater()
		}
		p.gone = gone
		if confirm == nil {
			p.noteSeen(msg.first)
		}
		p.events, p.seenEvent = nil, nil
		p.noteEvents(0)
		cmd := tea.Batch(p.refilter(), confirm)
		if p.pending {
			p.pending = false
			return tea.Batch(cmd, p.readMore())
		}
		return cmd
	case filteredMsg:
		p.applyFilter(msg)
	case confirmMsg:
		if msg.gen == p.gen && !p.loading {
			return p.load(true)
		}
	case changedMsg:
		next := p.watcher.Wait(changedMsg{})
		if !p.full || p.loading || p.reads > 0 {
			// one read at a time (a large log's costs a pass over the file):
			// the change is read when the one in flight is done
			p.pending = true
			return next
		}
		return tea.Batch(next, p.readMore())
	case moreMsg:
		p.reads = max(p.reads-1, 0)
		cmd := p.applyMore(msg)
		if p.pending && p.reads == 0 && !p.loading {
			p.pending = false
			cmd = tea.Batch(cmd, p.readMore())
		}
		return cmd
	case detailMsg:
		if msg.off != p.wantDetail {
			return nil // closed, or another entry was asked for since
		}
		p.detail, p.detailErr = &msg.entry, msg.err
		p.detailScroll = 0
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelUp {
			p.move(-3)
		} else if msg.Button == tea.MouseWheelDown {
			p.move(3)
		}
	case tea.KeyPressMsg:
		return p.handleKey(msg)
	}
	return nil
}

// applyMore applies an incremental read.
func (p *Pane) applyMore(msg moreMsg) tea.Cmd {
	if msg.gen != p.gen || p.loading {
		return nil // a full load since (or in flight) covers it
	}
	if msg.reload {
		return p.loadAll()
	}
	if msg.from != p.end {
		// an overlapping read (two change signals in a burst): drop it,
		// and read again if it saw further than what was applied
		if msg.end > p.end {
			return p.readMore()
		}
		return nil
	}
	if msg.err == nil && msg.end >= p.end {
		from := len(p.rows)
		for _, l := range msg.lines {
			p.chain.FeedParsed(l.Entry, l.Err)
			p.rows = append(p.rows, newRow(l))
		}
		p.end, p.mark = msg.end, msg.mark
		if p.chain.CheckAnchor(msg.anchor) != nil {
			return p.confirmLater()
		}
		first := ""
		if msg.from == 0 && len(msg.lines) > 0 {
			first = msg.lines[0].Entry.Hash
		}
		p.noteSeen(first)
		p.noteEvents(from)
		if !p.filterBusy {
			p.extendView(from) // only the new rows: appends cost what they add
		}
	}
	return nil
}

func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := p.keys
	if p.filtering {
		switch msg.String() {
		case "enter", "esc":
			p.filtering = false
			p.filter.Blur()
			if msg.String() == "esc" {
				p.filter.SetValue("")
				return p.refilter()
			}
			return nil
		}
		var cmd tea.Cmd
		p.filter, cmd = p.filter.Update(msg)
		return tea.Batch(cmd, p.refilter())
	}
	if p.detail != nil || p.detailErr != nil {
		switch {
		case key.Matches(msg, k.Back), key.Matches(msg, k.Open), msg.String() == "q":
			p.detail, p.detailErr, p.wantDetail = nil, nil, -1
		case key.Matches(msg, k.Up):
			p.detailScroll = max(p.detailScroll-1, 0)
		case key.Matches(msg, k.Down):
			p.detailScroll++
		case key.Matches(msg, k.PageUp):
			p.detailScroll = max(p.detailScroll-10, 0)
		case key.Matches(msg, k.PageDown):
			p.detailScroll += 10
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Up):
		p.move(-1)
	case key.Matches(msg, k.Down):
		p.move(1)
	case key.Matches(msg, k.PageUp):
		p.move(-max(p.height-1, 1))
	case key.Matches(msg, k.PageDown):
		p.move(max(p.height-1, 1))
	case key.Matches(msg, k.Top):
		p.sel, p.follow = 0, false
	case key.Matches(msg, k.Bottom):
		p.sel, p.follow = max(len(p.view)-1, 0), true
	case key.Matches(msg, k.Filter):
		p.filtering = true
		return p.filter.Focus()
	case key.Matches(msg, k.Event):
		p.event = p.nextEvent()
		return p.refilter()
	case key.Matches(msg, k.Outcome):
		p.outcome = (p.outcome + 1) % len(outcomes)
		return p.refilter()
	case key.Matches(msg, k.Clear):
		p.event, p.outcome = "", 0
		p.filter.SetValue("")
		return p.refilter()
	case key.Matches(msg, k.Open):
		if p.sel < len(p.view) {
			p.detailRow = p.view[p.sel]
			return p.openDetail(p.rows[p.view[p.sel]].off)
		}
	}
	return nil
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
	p.sel += d
	if p.sel < 0 {
		p.sel = 0
	}
	if p.sel >= len(p.view) {
		p.sel = len(p.view) - 1
	}
	p.follow = p.sel == len(p.view)-1
}

// noteEvents records the event names of rows[from:], in order of appearance,
// so cycling the event filter never rescans the log.
func (p *Pane) noteEvents(from int) {
	if p.seenEvent == nil {
		p.seenEvent = map[string]bool{}
	}
	for _, r := range p.rows[from:] {
		if !p.seenEvent[r.event] {
			p.seenEvent[r.event] = true
			p.events = append(p.events, r.event)
		}
	}
}

// nextEvent cycles the event filter through the events present.
func (p *Pane) nextEvent() string {
	if p.event == "" {
		if len(p.events) > 0 {
			return p.events[0]
		}
		return ""
	}
	for i, e := range p.events {
		if e == p.event && i+1 < len(p.events) {
			return p.events[i+1]
		}
	}
	return ""
}

type rowSource struct {
	rows []row
	idx  []int
}

func (s rowSource) String(i int) string { return s.rows[s.idx[i]].hay }
func (s rowSource) Len() int            { return len(s.idx) }

// syncFilterRows is how many rows are filtered on the UI goroutine; larger
// logs are filtered in a command so typing in the filter never stalls.
const syncFilterRows = 20000

// filterSpec is what the view is filtered by.
type filterSpec struct {
	event, outcome, query string
}

func (p *Pane) spec() filterSpec {
	return filterSpec{event: p.event, outcome: outcomes[p.outcome], query: p.filter.Value()}
}

// filterRows returns the indexes (from from on) of rows passing sp, and the
// fuzzy filter's matched byte offsets per row.
func filterRows(rows []row, from int, sp filterSpec) ([]int, map[int][]int) {
	var idx []int
	for i := from; i < len(rows); i++ {
		r := rows[i]
		if sp.event != "" && r.event != sp.event {
			continue
		}
		if (sp.outcome == "ok" && r.outcome != "ok") || (sp.outcome == "failed" && r.outcome == "ok") {
			continue
		}
		idx = append(idx, i)
	}
	if sp.query == "" {
		return idx, nil
	}
	matches := fuzzy.FindFromNoSort(sp.query, rowSource{rows, idx})
	hits := make(map[int][]int, len(matches))
	kept := make([]int, 0, len(matches))
	for _, m := range matches {
		kept = append(kept, idx[m.Index])
		hits[idx[m.Index]] = m.MatchedIndexes
	}
	return kept, hits
}

type filteredMsg struct {
	gen  int
	n    int // rows[:n] were filtered
	idx  []int
	hits map[int][]int
}

// refilter recomputes the view after a filter change or a reload: at once for
// small logs, in a command (tagged with a generation) for large ones. Rows are
// only ever appended, so the command reads a stable prefix.
func (p *Pane) refilter() tea.Cmd {
	p.filterGen++
	sp, rows, gen := p.spec(), p.rows, p.filterGen
	if len(rows) <= syncFilterRows {
		idx, hits := filterRows(rows, 0, sp)
		p.applyFilter(filteredMsg{gen: gen, n: len(rows), idx: idx, hits: hits})
		return nil
	}
	p.filterBusy = true
	return func() tea.Msg {
		idx, hits := filterRows(rows, 0, sp)
		return filteredMsg{gen: gen, n: len(rows), idx: idx, hits: hits}
	}
}

func (p *Pane) applyFilter(m filteredMsg) {
	if m.gen != p.filterGen {
		return // the filter changed since: a newer result is coming
	}
	p.filterBusy = false
	p.view, p.hits = m.idx, m.hits
	p.extendView(m.n) // rows that arrived while filtering
}

// extendView filters only rows[from:] (new entries) into the view.
func (p *Pane) extendView(from int) {
	idx, hits := filterRows(p.rows, from, p.spec())
	p.view = append(p.view, idx...)
	for k, v := range hits {
		if p.hits == nil {
			p.hits = map[int][]int{}
		}
		p.hits[k] = v
	}
	if p.follow || p.sel >= len(p.view) {
		p.sel = max(len(p.view)-1, 0)
	}
}

// Report is the chain's state for the badge.
func (p *Pane) Report() string {
	switch {
	case p.loadErr != nil:
		return "cannot read log: " + p.loadErr.Error()
	case p.chain == nil:
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

// View renders the table or the detail view.
func (p *Pane) View(w, h int) string {
	s := p.styles
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
	if p.filterBusy {
		head += "  " + s.Muted.Render("filtering…")
	}
	lines := []string{head}
	if p.filtering || p.filter.Value() != "" {
		lines = append(lines, p.filter.View())
	}
	if p.detail != nil || p.detailErr != nil {
		lines = append(lines, p.detailLines(w)...)
		start := min(p.detailScroll, max(len(lines)-h, 0))
		p.detailScroll = start
		body := append([]string{lines[0]}, lines[1+start:]...)
		return panes.Block(body, w, h)
	}
	cols := columns(w)
	lines = append(lines, s.Label.Render(cols.format("TIME", "ACTOR", "EVENT", "TASK", "TARGET", "OUTCOME")))
	tableH := h - len(lines)
	p.height = tableH
	if len(p.view) == 0 {
		msg := "no entries yet"
		if len(p.rows) > 0 {
			msg = "no entries match the filters (x clears them)"
		}
		lines = append(lines, s.Muted.Render(msg))
		return panes.Block(lines, w, h)
	}
	p.top = panes.Scroll(p.top, p.sel, tableH, len(p.view))
	badRow := int64(-1)
	if b := p.broken(); b != nil && p.full {
		badRow = b.Index
	}
	for i := p.top; i < len(p.view) && i < p.top+tableH; i++ {
		ri := p.view[i]
		r := p.rows[ri]
		line := cols.format(r.time, r.actor, r.event, r.task, r.target, r.outcome)
		if int64(ri) == badRow {
			// the entry where the chain breaks: marked, whatever the filter
			line = s.Err.Render(cols.format(r.time, r.actor, r.event, r.task, r.target, "✗ "+p.broken().Reason))
		} else if hits, ok := p.hits[ri]; ok {
			line = highlight(line, r, cols, hits, s)
		} else if r.outcome != "ok" {
			line = s.Warning.Render(line)
		}
		if i == p.sel {
			line = s.Selected.Render(panes.Fit(line, w))
		}
		lines = append(lines, line)
	}
	return panes.Block(lines, w, h)
}

func (p *Pane) detailLines(w int) []string {
	s := p.styles
	var why []string
	if b := p.broken(); b != nil && p.full && int64(p.detailRow) == b.Index {
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

// highlight re-renders a row with the fuzzy filter's matched characters styled.
func highlight(line string, r row, c cols, hits []int, s *themes.Styles) string {
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

// ShortHelp is the status bar's keys.
func (p *Pane) ShortHelp() []key.Binding {
	if p.detail != nil {
		return []key.Binding{p.keys.Back, p.keys.Up, p.keys.Down}
	}
	return []key.Binding{p.keys.Open, p.keys.Filter, p.keys.Event, p.keys.Outcome}
}

// FullHelp is the ? overlay's keys.
func (p *Pane) FullHelp() [][]key.Binding {
	k := p.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Open, k.Back, k.Filter, k.Event, k.Outcome, k.Clear}}
}

// Close stops the watcher.
func (p *Pane) Close() { p.watcher.Close() }

// LoadSync reads the whole log on the calling goroutine: for headless renders
// and tests that need the loaded state without running a program.
func (p *Pane) LoadSync() { p.Update(p.loadAll()()) }
