// Package auditpane is the Audit screen: a table of the audit log that follows
// new entries live, filters fuzzily, shows every field, and keeps a chain badge.
//
// It keeps line offsets, not rows: a million-entry log costs an index of line
// starts (built by a byte scan off the UI goroutine) and the rows on screen,
// parsed when shown. The first frame comes from the log's tail; the chain is
// verified in the background by audit.VerifyIncremental, which resumes after
// the prefix an earlier start verified (checked by its SHA-256, so a rewrite
// inside it is still found); the filter is one cancellable pass over the
// bytes that parses only the lines it cannot decide. Keys are panes.KeyRow
// rows (keys.go): dispatch, footer, ? overlay and README table read them.
package auditpane

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
)

// tailRows is how much of the log the first frame reads: enough to fill any
// screen, small enough to be instant on a million-entry log.
const tailRows = 500

var outcomes = []string{"", "ok", "failed"}

// Pane is the Audit screen.
type Pane struct {
	path   string
	styles *themes.Styles
	km     keymaps

	// the index: where each line starts; until the full scan lands, only the
	// tail's lines (numbered from the tail's first)
	offs       []int64
	idxEnd     int64 // just after the last indexed line
	idxInfo    os.FileInfo
	raw        []byte // the bytes [0, idxEnd) of a small log (see inMemoryLog); nil otherwise
	indexed    bool   // offs covers the whole file
	indexing   bool   // a full scan is in flight
	igen       int    // generation of the latest full scan
	idxDone    int64
	idxTotal   int64
	idxReads   int  // index extensions in flight
	idxPending bool // a change arrived while the index was read
	cancelLoad context.CancelFunc

	rows  rowCache
	asked map[int64]bool // rows being read

	// the chain
	end      int64 // file offset after the last line fed to the chain
	chain    *audit.Chain
	anchor   *audit.Report // the head disagrees with the chain
	verDone  int64
	verTotal int64
	good     *atomic.Int64 // lines the latest verification (done or in flight) found valid: the filter trusts them
	// seen is the chain this screen last showed verified: a log deleted, cut
	// or replaced together with its head verifies on its own, not against it
	seenN      int64
	seenFirst  string
	seenSealed int
	gone       *audit.Report // the log is no longer the one seen
	mark       fileMark      // which file the chain came from, and its last line
	gen        int           // generation of the latest verification
	loading    bool          // a verification is in flight
	pending    bool          // a change arrived while a read ran
	reads      int           // incremental reads in flight
	loadErr    error

	filter    panes.TextField
	filtering bool
	event     string
	outcome   int
	filtered  bool  // view holds the matching lines; otherwise every line shows
	view      []int // line numbers passing the filters, ascending
	filterGen int   // generation of the latest filter
	pass      *filterPass
	passing   bool // the latest pass is still scanning
	passNext  int  // lines [0, passNext) are filtered into view
	filterErr error
	events    []string // event names in order of appearance
	seenEvent map[string]bool

	// list is the cursor over the view (positions, not lines: a filter
	// changes which line each is); its Map is which row each drawn table
	// line is, for clicks
	list   panes.List
	follow bool // the cursor rides the last line as lines are appended
	height int  // the table's rows at the last frame

	detail     *audit.Entry
	detailLine int // line number of the entry shown
	detailErr  error
	detailView panes.Viewport
	wantDetail int64 // offset of the entry the detail view waits for; -1 for none

	watcher  *panes.Watcher
	smallLog int64 // smallLog when the pane was made
	inMemory int64 // inMemoryLog when the pane was made
}

// New builds the pane over the log at path. It reads nothing: Init starts the reads.
func New(path string, styles *themes.Styles) *Pane {
	p := &Pane{path: path, styles: styles, follow: true, wantDetail: -1,
		smallLog: smallLog, inMemory: inMemoryLog, good: &atomic.Int64{}, asked: map[int64]bool{}}
	p.km = p.buildKeymaps()
	p.list = panes.List{Len: p.viewLen}
	return p
}

func (p *Pane) ID() string                 { return "audit" }
func (p *Pane) Title() string              { return "Audit" }
func (p *Pane) SetStyles(s *themes.Styles) { p.styles = s }
func (p *Pane) Capturing() bool            { return p.filtering }
func (p *Pane) Badge() string              { return "" }

// Init reads the tail for the first frame and starts the watcher; the index
// and the verification start when the tail has landed, so they do not compete
// with it.
func (p *Pane) Init(ctx context.Context) tea.Cmd {
	// the head too: an edit to it alone breaks the chain's anchor
	w, err := panes.Watch(filepath.Dir(p.path), filepath.Base(p.path), filepath.Base(audit.HeadPath(p.path)))
	if err == nil {
		p.watcher = w
	}
	return tea.Batch(readTail(p.path), p.watcher.Wait(changedMsg{}))
}

func readTail(path string) tea.Cmd {
	return func() tea.Msg {
		lines, _, err := audit.ReadTail(path, tailRows)
		if err != nil {
			return tailMsg{}
		}
		out := tailMsg{offs: make([]int64, len(lines)), rows: make([]row, len(lines))}
		for i, l := range lines {
			out.offs[i] = l.Offset
			out.rows[i] = newRow(l.Entry, l.Err != nil)
		}
		if len(lines) > 0 {
			// the tail's last line ends where the next one starts: at the
			// end of the file's complete lines
			out.end, _ = audit.EndOfCompleteLines(path)
		}
		return out
	}
}

// Update handles the pane's messages and, when focused, keys; then it asks
// for the rows the screen is about to show.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	cmd := p.update(msg)
	return tea.Batch(cmd, p.fetchRows())
}

func (p *Pane) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tailMsg:
		return p.applyTail(msg)
	case progressMsg:
		if msg.kind == "index" && msg.gen == p.igen {
			p.idxDone, p.idxTotal = msg.done, msg.total
		}
		if msg.kind == "verify" && msg.gen == p.gen {
			p.verDone, p.verTotal = msg.done, msg.total
		}
		return msg.next
	case indexMsg:
		return p.applyIndex(msg)
	case indexMoreMsg:
		return p.applyIndexMore(msg)
	case verifyMsg:
		return p.applyVerify(msg)
	case filterBatchMsg:
		return p.applyBatch(msg)
	case confirmMsg:
		if msg.gen == p.gen && !p.loading {
			return p.verify(context.Background(), true)
		}
	case changedMsg:
		return tea.Batch(p.watcher.Wait(changedMsg{}), p.changed())
	case moreMsg:
		p.reads = max(p.reads-1, 0)
		cmd := p.applyMore(msg)
		if p.pending && p.reads == 0 && !p.loading {
			p.pending = false
			cmd = tea.Batch(cmd, p.readMore())
		}
		return cmd
	case rowsMsg:
		p.applyRows(msg)
	case detailMsg:
		if msg.off != p.wantDetail {
			return nil // closed, or another entry was asked for since
		}
		p.detail, p.detailErr = &msg.entry, msg.err
		p.detailView.Top()
	case tea.MouseClickMsg:
		if !p.inDetail() && p.list.Click(msg) {
			p.follow = p.list.Cursor() == p.viewLen()-1
		}
	case tea.MouseWheelMsg:
		if p.inDetail() {
			p.detailView.Wheel(msg)
		} else {
			p.list.Wheel(msg)
			p.follow = p.list.Cursor() == p.viewLen()-1
		}
	case tea.KeyPressMsg:
		return p.handleKey(msg)
	}
	return nil
}

// applyTail shows the tail until the index lands, then starts the full reads.
func (p *Pane) applyTail(msg tailMsg) tea.Cmd {
	if p.indexed || p.indexing {
		return nil
	}
	p.offs, p.idxEnd = msg.offs, msg.end
	p.rows.reset()
	for i, r := range msg.rows {
		p.rows.put(msg.offs[i], r)
		p.noteEvent(r.event)
	}
	return tea.Batch(p.refilter(), p.reload())
}

func (p *Pane) applyIndex(msg indexMsg) tea.Cmd {
	if msg.gen != p.igen {
		return nil // a newer scan is coming
	}
	p.indexing = false
	if msg.err != nil {
		p.loadErr = msg.err
		return nil
	}
	// keep the selection on the same line when the numbering changes
	selOff := int64(-1)
	if sel := p.list.Cursor(); !p.follow && sel < p.viewLen() {
		selOff = p.offs[p.lineAt(sel)]
	}
	p.offs, p.idxEnd, p.idxInfo, p.indexed, p.raw = msg.offs, msg.end, msg.info, true, msg.raw
	p.rows.reset()
	p.asked = map[int64]bool{}
	p.events, p.seenEvent = nil, nil
	for _, e := range msg.events {
		p.noteEvent(e)
	}
	p.noteDamaged()
	cmd := p.refilter()
	if selOff >= 0 {
		p.list.Select(p.viewIndexOf(p.lineOf(selOff)))
	}
	if p.wantDetail >= 0 {
		p.detailLine = p.lineOf(p.wantDetail) // numbered anew
	}
	if p.idxPending {
		p.idxPending = false
		cmd = tea.Batch(cmd, p.indexMore())
	}
	return cmd
}

// lineOf is the number of the first line starting at or after off.
func (p *Pane) lineOf(off int64) int {
	return sort.Search(len(p.offs), func(i int) bool { return p.offs[i] >= off })
}

func (p *Pane) applyIndexMore(msg indexMoreMsg) tea.Cmd {
	p.idxReads = max(p.idxReads-1, 0)
	if msg.gen != p.igen || p.indexing {
		return nil // a full scan since (or in flight) covers it
	}
	if msg.err != nil {
		return p.reload() // replaced or shrunk: read it all again
	}
	var cmd tea.Cmd
	if msg.from == p.idxEnd && msg.end >= p.idxEnd {
		n := len(p.offs)
		if p.raw != nil && msg.raw != nil && int64(len(p.raw)) == msg.from {
			p.raw = append(p.raw, msg.raw...)
		} else {
			p.raw = nil // grown past inMemoryLog: read from the file from now on
		}
		p.offs = append(p.offs, msg.offs...)
		p.idxEnd = msg.end
		for _, e := range msg.events {
			p.noteEvent(e)
		}
		cmd = p.extendView(n)
	}
	if p.idxPending && p.idxReads == 0 {
		p.idxPending = false
		cmd = tea.Batch(cmd, p.indexMore())
	}
	return cmd
}

// changed handles a change signal: the index and the chain each read what
// was appended (or everything, when it was not a pure append), one read of
// each at a time.
func (p *Pane) changed() tea.Cmd {
	var cmds []tea.Cmd
	if !p.indexed || p.idxReads > 0 {
		p.idxPending = true
	} else {
		cmds = append(cmds, p.indexMore())
	}
	if p.chain == nil || p.loading || p.reads > 0 {
		// one read at a time (a large log's costs a pass over the file):
		// the change is read when the one in flight is done
		p.pending = true
	} else {
		cmds = append(cmds, p.readMore())
	}
	return tea.Batch(cmds...)
}

func (p *Pane) applyVerify(msg verifyMsg) tea.Cmd {
	if msg.gen != p.gen {
		return nil // a newer verification is coming
	}
	p.loading = false
	p.loadErr = msg.err
	p.end, p.chain, p.mark, p.anchor = msg.end, msg.chain, msg.mark, msg.anchor
	p.noteDamaged()
	gone := p.lostSince(msg.first)
	var confirm tea.Cmd
	if (p.anchor != nil || gone != nil) && !msg.confirm {
		p.anchor, gone, confirm = nil, nil, p.confirmLater()
	}
	p.gone = gone
	if confirm == nil {
		p.noteSeen(msg.first)
	}
	if p.pending {
		p.pending = false
		return tea.Batch(confirm, p.readMore())
	}
	return confirm
}

// applyMore applies an incremental read to the chain.
func (p *Pane) applyMore(msg moreMsg) tea.Cmd {
	if msg.gen != p.gen || p.loading {
		return nil // a verification since (or in flight) covers it
	}
	if msg.reload {
		return p.reload()
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
		for _, l := range msg.lines {
			p.chain.FeedParsed(l.Entry, l.Err)
		}
		if p.chain.Bad() == nil {
			p.good.Store(p.chain.Len())
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
	}
	return nil
}

// noteEvent records an event name, in order of appearance, so cycling the
// event filter never rescans the log.
func (p *Pane) noteEvent(e string) {
	if p.seenEvent == nil {
		p.seenEvent = map[string]bool{}
	}
	if !p.seenEvent[e] && len(p.events) < maxEvents {
		p.seenEvent[e] = true
		p.events = append(p.events, e)
	}
}

// noteDamaged offers "(damaged)" to the event filter once the chain has
// found a line that does not parse (the index, which parses nothing, cannot).
func (p *Pane) noteDamaged() {
	if p.chain == nil {
		return
	}
	if b := p.chain.Bad(); b != nil && (b.Reason == audit.ReasonGarbage || b.Reason == audit.ReasonEdited) {
		p.noteEvent(damagedEvent)
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

// Close stops the watcher and any read in flight.
func (p *Pane) Close() {
	if p.cancelLoad != nil {
		p.cancelLoad()
	}
	if p.pass != nil {
		p.pass.cancel()
	}
	p.watcher.Close()
}

// LoadSync reads the whole log on the calling goroutine: for headless renders
// and tests that need the loaded state without running a program.
func (p *Pane) LoadSync() {
	p.igen++
	p.gen++
	good := &atomic.Int64{}
	p.good = good
	ctx := context.Background()
	runSync(p, p.Update(indexMsg{gen: p.igen, indexed: scanIndex(ctx, p.path, 0, nil, nil, p.inMemory)}))
	p.Update(verifyMsg{gen: p.gen, verified: verifyLog(ctx, p.path, nil, good)}) // a confirmation's timer is left unrun
	if p.height == 0 {
		p.height = 100
	}
	runSync(p, p.fetchRows())
}

// runSync runs a command and what follows from it on the calling goroutine
// (LoadSync's filter pass and row reads); it stops at timers.
func runSync(p *Pane, cmd tea.Cmd) {
	for cmd != nil {
		msg := cmd()
		switch m := msg.(type) {
		case tea.BatchMsg:
			for _, c := range m {
				runSync(p, c)
			}
			return
		case nil:
			return
		}
		cmd = p.Update(msg)
	}
}
