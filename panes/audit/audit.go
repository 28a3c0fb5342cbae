// Package auditpane is the Audit screen: a table of the audit log that follows
// new entries live, filters fuzzily, shows every field, and keeps a chain badge.
//
// The reading is the engine's (audit/index): an index of line starts built
// by a byte scan off the UI goroutine, rows parsed only for the lines on
// screen, a filter pass that parses only the lines it cannot decide, and a
// chain verified by audit.VerifyIncremental and kept current by the lines
// appended. The pane is composed of children that hold what it shows: the
// table (index, rows, cursor), the chain (the badge's verification), the
// filter (the / field and the pass) and the detail view. Keys are
// panes.KeyRow rows (keys.go): dispatch, footer, ? overlay and README table
// read them.
package auditpane

import (
	"context"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index"
	"github.com/vigil-dev/vigil/internal/fswatch"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
)

// tailRows is how much of the log the first frame reads: enough to fill any
// screen, small enough to be instant on a million-entry log.
const tailRows = 500

// smallLog is the size up to which every change re-reads and re-verifies the
// whole log (up to ~0.1 s): an edit in place anywhere is caught. Above
// it, a change that is not a pure append (the file replaced, shrunk, or its
// last known line changed) triggers the full re-read, and appends are checked
// incrementally.
var smallLog int64 = 4 << 20

// inMemoryLog is the size up to which the pane keeps the log's bytes: rows
// and filters are then computed at once, on the UI goroutine, without I/O.
// (A variable: tests take the large logs' path with small ones.)
var inMemoryLog int64 = 2 << 20

// defaultClock is a new pane's clock (SetClock changes it): a variable so
// the package's tests fix "today" for every pane they make.
var defaultClock = time.Now

// Pane is the Audit screen.
type Pane struct {
	path   string
	styles *themes.Styles
	km     keymaps

	table  table
	ver    chainState
	filter filterState
	detail detailState

	// cancelLoad cancels the reads of the latest full load (index and chain)
	cancelLoad context.CancelFunc
	watcher    *fswatch.Watcher // audit.Watch: wakes the followers
	smallLog   int64            // smallLog when the pane was made
	inMemory   int64            // inMemoryLog when the pane was made
	life       life
	state      panes.Published[Snapshot]
	now        func() time.Time // the clock the TIME column is read against (today's rows show the time alone)
	// onBroken is told each time the badge turns to BROKEN (SetOnBroken);
	// reported holds the break last told, so one break is told once
	onBroken func(*audit.Report)
	reported *audit.Report
}

// New builds the pane over the log at path. It reads nothing: Init starts the reads.
func New(path string, styles *themes.Styles) *Pane {
	p := &Pane{path: path, styles: styles, smallLog: smallLog, inMemory: inMemoryLog, now: defaultClock}
	p.table = newTable()
	p.ver.good = &atomic.Int64{}
	p.detail.want = -1
	p.life.start(context.Background())
	p.km = p.buildKeymaps()
	p.table.list = panes.List{Len: p.viewLen}
	p.publish()
	return p
}

// SetOnBroken names who is told when the pane finds the log broken (the
// TUI writes it to vigil.log: a break seen on screen leaves a trace even
// if the screen is closed before anyone reads it).
func (p *Pane) SetOnBroken(f func(*audit.Report)) { p.onBroken = f }

// SetClock sets the clock the TIME column is read against (tests fix it;
// the default is time.Now).
func (p *Pane) SetClock(now func() time.Time) {
	if now != nil {
		p.now = now
	}
}

func (p *Pane) ID() string                 { return "audit" }
func (p *Pane) Title() string              { return "Audit" }
func (p *Pane) SetStyles(s *themes.Styles) { p.styles = s }
func (p *Pane) Capturing() bool            { return p.filter.typing }
func (p *Pane) Badge() string              { return "" }

// Init reads the tail for the first frame and starts the watcher; the index
// and the verification start when the tail has landed, so they do not compete
// with it. The pane's background work runs under ctx: it ends with the
// program, or at Close.
func (p *Pane) Init(ctx context.Context) tea.Cmd {
	p.life.start(ctx)
	// the log and its head: an edit to the head alone breaks the chain's anchor
	if w, err := audit.Watch(p.path); err == nil {
		p.watcher = w
	}
	return tea.Batch(p.readTail(), p.waitChange())
}

// waitChange is a command that delivers the next change signal.
func (p *Pane) waitChange() tea.Cmd {
	w := p.watcher
	if w == nil {
		return nil
	}
	return p.life.cmd(func() tea.Msg {
		if _, ok := <-w.C(); !ok {
			return nil // closed
		}
		w.Take() // the followers read from where they stand: names and losses tell them nothing more
		return changedMsg{}
	})
}

// Update handles the pane's messages and, when focused, keys; then it asks
// for the rows the screen is about to show.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	cmd := p.update(msg)
	cmd = tea.Batch(cmd, p.fetchRows())
	p.publish()
	return cmd
}

func (p *Pane) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tailMsg:
		return p.applyTail(msg)
	case progressMsg:
		if msg.kind == "index" && msg.gen == p.table.gen {
			p.table.done, p.table.total = msg.done, msg.total
		}
		if msg.kind == "verify" && msg.gen == p.ver.gen {
			p.ver.done, p.ver.total = msg.done, msg.total
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
		if msg.gen == p.ver.gen && !p.ver.loading {
			return p.verify(p.life.ctx, true)
		}
	case changedMsg:
		return tea.Batch(p.waitChange(), p.changed())
	case moreMsg:
		return p.applyMoreMsg(msg)
	case rowsMsg:
		p.table.applyRows(msg)
	case detailMsg:
		p.detail.apply(msg)
	case tea.MouseClickMsg:
		if !p.detail.open() && p.table.list.Click(msg) {
			p.table.follow = p.table.list.Cursor() == p.viewLen()-1
		}
	case tea.MouseWheelMsg:
		if p.detail.open() {
			p.detail.view.Wheel(msg)
		} else {
			p.table.list.Wheel(msg)
			p.table.follow = p.table.list.Cursor() == p.viewLen()-1
		}
	case tea.KeyPressMsg:
		return p.handleKey(msg)
	}
	return nil
}

// changed handles a change signal: the index and the chain each read what
// was appended (or everything, when it was not a pure append), one read of
// each at a time.
func (p *Pane) changed() tea.Cmd {
	var cmds []tea.Cmd
	if !p.table.indexed || p.table.reads > 0 {
		p.table.pending = true
	} else {
		cmds = append(cmds, p.indexMore())
	}
	if p.ver.chain == nil || p.ver.loading || p.ver.reads > 0 {
		// one read at a time (a large log's costs a pass over the file):
		// the change is read when the one in flight is done
		p.ver.pending = true
	} else {
		cmds = append(cmds, p.readMore())
	}
	return tea.Batch(cmds...)
}

// Close stops the watcher and every read in flight, and waits for the
// pane's goroutines: after it returns the pane reads and writes nothing.
func (p *Pane) Close() {
	p.watcher.Close() // first: it releases the command waiting on it
	p.life.close()
	if p.filter.pass != nil {
		<-p.filter.pass.Done() // it ends with the pane's context
	}
}

// LoadSync reads the whole log on the calling goroutine: for headless renders
// and tests that need the loaded state without running a program.
func (p *Pane) LoadSync() {
	p.table.gen++
	p.ver.gen++
	good := &atomic.Int64{}
	p.ver.good = good
	ctx := p.life.ctx
	runSync(p, p.Update(indexMsg{gen: p.table.gen, Scanned: index.Scan(ctx, p.path, 0, nil, nil, p.inMemory)}))
	p.Update(verifyMsg{gen: p.ver.gen, Verification: index.Verify(ctx, p.path, nil, good)}) // a confirmation's timer is left unrun
	if p.table.height == 0 {
		p.table.height = 100
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
