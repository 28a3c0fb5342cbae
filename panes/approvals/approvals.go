// Package approvalspane is the Approvals screen: the queue of pending tasks
// with their real deadlines, the masked preview of the selected task's exact
// request, the approve (confirm, default No) and deny (with reason) dialogs,
// and the list of decided tasks with their signed results.
//
// The Pane is the root of three children it routes messages to: the queue
// (queue.go: the pending list and the selected task's preview), the decided
// list (decided.go: the decided tasks and the selected one's result) and
// the dialogs (dialog.go: the prompts, which return intents, and the grace
// period that holds keys back). Decisions are carried out by the Pane
// (decide.go). It reads an approval.Decider and takes what changed only
// from the queue's feed (Decider.Changes): the loader (load.go) keeps one
// reload in flight; the pane watches no file and knows no transport. Its
// reads run under the program's ctx and Close waits for them (bg.go);
// tests wait on its Snapshot (snapshot.go), and its clock is Options.Now.
//
// Every string that came from outside — task ids, agent names, jti, device
// ids, previews, effects, errors, reasons — reaches the screen through
// safetext: controls and invisible characters show as marked escapes,
// never as themselves.
package approvalspane

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/approval"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// Options configure the pane.
type Options struct {
	// Queue is the queue the pane reads, follows and decides on: this
	// home's (*approval.Queue) or the shared queue's operator side. Nil
	// when it could not be opened: QueueErr says why.
	Queue approval.Decider
	// Shared, when set, names the shared queue in the pane's heading
	// (already safe to show: no credentials).
	Shared   string
	QueueErr error // why there is no queue, shown in place of it
	// Reopen, with no Queue, is tried every Tick until it returns the
	// options of a pane over an opened queue (its Queue, ResultKey,
	// DecisionsRefused and Rules are taken; its error, while it fails, is shown as
	// QueueErr): a new home's keys made while the TUI runs open the queue
	// without a restart. It runs off the UI goroutine.
	Reopen   func() (Options, error)
	Operator string // operator:<user>
	// Now is the pane's clock: deadlines, countdowns and the grace period
	// read it, so a test that drives it never sleeps. Nil: time.Now.
	Now  func() time.Time
	Bell bool
	// Notify ([notify] terminal) rings the bell and sends an OSC 9 desktop
	// notification when a task arrives and when one is a minute from its
	// deadline (once each); it takes the place of Bell.
	Notify bool
	// Tick is how often countdowns refresh; 0 means every second.
	Tick time.Duration
	// ResultKey is the operator's public key: a decided task's stored
	// result is shown as signed only when its signature verifies with it.
	// Nil: results are shown unchecked.
	ResultKey ed25519.PublicKey
	// Unchecked, with no ResultKey, is said next to a result's signature
	// instead of showing it as signed: the shared queue's results come
	// from another host and this home holds no key to check them with.
	Unchecked string
	// Via is the surface this pane's decisions are recorded as coming
	// through: approval.ViaTUI when empty (this account's TUI),
	// approval.ViaSSH in an operator's SSH session.
	Via string
	// Key is the SHA256 fingerprint ("SHA256:…") of the SSH key the
	// operator signed in with, recorded with each decision; "" locally.
	Key string
	// DecisionsRefused, when set, means this pane may not decide: the
	// local TUI on a home whose [decisions] require_operator_key is set
	// (config.DecisionsRefusal, the words `vigil approve` says too). The
	// pane then offers no a or d, opens no prompt, and says this text on
	// the pane: how decisions are made on this home instead.
	DecisionsRefused string
	// Rules, when set, offers "allow like this" in the approve prompt and
	// the Rules view (R); nil over the shared queue (rulesource.go).
	Rules RuleSource
}

// Pane is the Approvals screen: the root that routes to its children and
// performs what their intents ask for.
type Pane struct {
	o      Options
	styles *themes.Styles
	km     keymaps
	bg     background // the ctx the pane's reads and decisions run under

	queue   queueList   // the pending tasks and the selected one's preview
	decided decidedList // the decided tasks ("v") and the selected one's result
	dialogs dialogs     // the approve and deny prompts, and the grace period
	load    loader      // what to reload, and whether a reload is in flight
	alerts  alerts      // the arrivals and near deadlines already announced
	batch   batch       // the marked tasks and the last batch's report (batch.go)
	rules   ruleState   // the Rules view (rulesview.go)

	listErr error
	notice  string // already safe to show: a decision's outcome, or why a key did nothing
	// refused is why this pane may not decide (safe to show), "" when it
	// may: Options.DecisionsRefused, or the engine's refusal once a
	// decision came back with approval.ErrOperatorKeyRequired.
	refused string
	busy    bool
	// deciding is the task this pane is deciding now: while it executes it is
	// not pending, and that is not news from elsewhere.
	deciding string
	// lastDecided is the task this pane decided last: its leaving the queue
	// is not news.
	lastDecided string
	// legible is whether the last area the root asked about showed
	// everything a key acts on; becoming legible again re-arms the grace.
	legible bool
	// areaW×areaH is the area the root last asked about; 0×0 before.
	areaW, areaH int
	// frame is the render Legible made, for the View the root asks for
	// right after it in the same frame (a repaint would otherwise lay the
	// pane out twice); it is used once, and any Update or restyle drops it.
	frame renderedFrame

	state state // what Snapshot returns
}

// New builds the pane.
func New(o Options, styles *themes.Styles) *Pane {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick == 0 {
		o.Tick = time.Second
	}
	if o.Via == "" {
		o.Via = approval.ViaTUI
	}
	p := &Pane{o: o, styles: styles, legible: true, refused: safetext.Line(o.DecisionsRefused)}
	p.bg.start(context.Background())
	p.queue.init()
	p.decided.init()
	p.km = p.buildKeymaps()
	return p
}

func (p *Pane) ID() string    { return "approvals" }
func (p *Pane) Title() string { return "Approvals" }
func (p *Pane) SetStyles(s *themes.Styles) {
	p.styles, p.queue.cache, p.frame = s, previewCache{}, renderedFrame{}
}
func (p *Pane) Capturing() bool { return p.dialogs.open() }

// Badge is the number of pending tasks.
func (p *Pane) Badge() string {
	if len(p.queue.list) == 0 {
		return ""
	}
	return fmt.Sprint(len(p.queue.list))
}

// Init loads the queue and starts following its changes (the engine's
// feed: the pane watches no file); the pane's reads, decisions and the
// feed run under ctx from here on.
func (p *Pane) Init(ctx context.Context) tea.Cmd {
	if ctx != nil {
		p.bg.start(ctx)
	}
	if p.o.Queue == nil {
		return p.retryOpen()
	}
	return p.open()
}

// open starts reading and following the queue.
func (p *Pane) open() tea.Cmd {
	return tea.Batch(p.requestReload(), p.tick(), p.follow())
}

// Close ends the pane's background work and waits for it: the feed of
// changes, and every read or decision under way (a decision already sent
// to the engine finishes, so its outcome is recorded).
func (p *Pane) Close() {
	p.bg.close()
	if ch := p.load.changes; ch != nil {
		for range ch { // the feed closes it once it has stopped
		}
	}
}

func (p *Pane) tick() tea.Cmd {
	return tea.Tick(p.o.Tick, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update handles the pane's messages and, when focused, its keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	p.frame = renderedFrame{}
	defer p.publish()
	return p.update(msg)
}

func (p *Pane) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case listMsg, tasksMsg, changeMsg:
		return p.updateLoad(msg)
	case viewMsg:
		if msg.id == p.queue.selID {
			p.applyView(msg.view, msg.err)
		}
	case resultMsg:
		p.decided.takeResult(msg)
	case summaryMsg:
		p.openSummary(msg)
	case batchDoneMsg:
		return p.finishBatch(msg)
	case ruleMsg:
		return p.updateRules(msg)
	case outcomeMsg:
		p.busy, p.deciding, p.lastDecided = false, "", msg.id
		p.notice, p.batch.report = p.describeOutcome(msg), nil
		if errors.Is(msg.err, approval.ErrOperatorKeyRequired) && p.refused == "" {
			// the engine says this pane cannot decide: stop offering keys that would fail
			p.refused = safetext.Line(msg.err.Error())
		}
		if msg.view != nil && msg.id == p.queue.selID {
			p.applyView(*msg.view, nil)
		}
		return p.requestTasks(msg.id)
	case reopenMsg:
		return p.tryOpen()
	case openedMsg:
		return p.opened(msg)
	case tickMsg:
		p.state.ticks++
		return tea.Batch(p.tick(), p.onTick())
	case tea.MouseWheelMsg:
		if p.dialogs.open() || p.rules.shown {
			// an open prompt sits under the top of the preview: the wheel
			// neither scrolls the request out from above it nor moves the
			// task it names
			return nil
		}
		return p.wheel(msg)
	case tea.MouseClickMsg:
		if p.dialogs.open() || p.rules.shown {
			return nil // the prompt is answered with keys, not by clicking away from it
		}
		if p.decided.shown {
			return p.movedDecided(func() { p.decided.cur.Click(msg) })
		}
		return p.movedQueue(func() { p.queue.cur.Click(msg) })
	case tea.PasteMsg:
		p.dialogs.paste(msg.Content)
	case tea.KeyPressMsg:
		return p.handleKey(msg)
	}
	return nil
}

// applyView shows a freshly read preview. A preview whose hash differs from
// the one on screen is a different request: an open approval closes (it
// named the old hash) and decision keys pause.
func (p *Pane) applyView(v approval.View, err error) {
	if p.queue.setView(v, err) {
		p.dialogs.grace.arm(p.o.Now())
		if p.dialogs.confirmsTask(v.Record.TaskID) {
			p.dialogs.close()
			p.notice = safetext.Line(v.Record.TaskID) + ": the request changed while you were looking — review the new preview (nothing was approved)"
		}
	}
}

// wheel moves the list under the pointer by a notch, or scrolls the
// preview (the result in the decided list) anywhere else.
func (p *Pane) wheel(msg tea.MouseWheelMsg) tea.Cmd {
	list, view := &p.queue.cur, &p.queue.preview
	if p.decided.shown {
		list, view = &p.decided.cur, &p.decided.view
	}
	if _, over := list.Map.At(msg.X, msg.Y); !over {
		view.Wheel(msg)
		return nil
	}
	if p.decided.shown {
		return p.movedDecided(func() { p.decided.cur.Wheel(msg) })
	}
	return p.movedQueue(func() { p.queue.cur.Wheel(msg) })
}

// Legible reports whether an area of w×h shows everything a key in this
// pane acts on: the whole selected row with its deadline, the top of its
// preview and any open prompt. The root drops keys (but quit) otherwise.
// Becoming legible again counts as the prompt appearing: the grace re-arms.
func (p *Pane) Legible(w, h int) bool {
	p.areaW, p.areaH = w, h
	lines, ok := p.render(w, h)
	p.frame = renderedFrame{lines: lines, w: w, h: h, valid: true}
	if ok && !p.legible {
		p.dialogs.grace.arm(p.o.Now())
	}
	p.legible = ok
	return ok
}

// Leave clears the pane's notice when the screen stops showing it: the
// notice answered a key in a view that is gone (an open prompt stays, and
// its grace re-arms when it is shown again).
func (p *Pane) Leave() {
	p.notice = ""
	p.frame = renderedFrame{}
}

// Busy reports a decision being carried out (quitting would interrupt it).
func (p *Pane) Busy() bool { return p.busy }

// ShortHelp is the status bar's keys: the current mode's rows that act now
// (a and d are not offered with nothing pending).
func (p *Pane) ShortHelp() []key.Binding { return p.keymap().Footer() }

// FullHelp is the ? overlay's keys for the current mode, from its rows (the
// pending list's after a prompt's, for what answering it returns to).
func (p *Pane) FullHelp() [][]key.Binding {
	list := p.km.pending
	if p.decided.shown {
		list = p.km.decided
	}
	if p.rules.shown {
		list = p.km.rules
	}
	groups := list.HelpGroups()
	if p.dialogs.open() {
		return append([][]key.Binding{p.keymap().Help()}, groups...)
	}
	return groups
}

// View renders the queue above the selected task's preview, or the decided
// tasks above the selected one's result.
func (p *Pane) View(w, h int) string {
	lines := p.frame.lines
	if !p.frame.valid || p.frame.w != w || p.frame.h != h {
		lines, _ = p.render(w, h)
	}
	p.frame = renderedFrame{}
	return panes.Block(lines, w, h)
}

// renderedFrame is one render of the pane at w×h.
type renderedFrame struct {
	lines []string
	w, h  int
	valid bool
}

// indexOf is where task id is in list, or -1.
func indexOf(list []approval.Record, id string) int {
	if id == "" {
		return -1
	}
	for i, r := range list {
		if r.TaskID == id {
			return i
		}
	}
	return -1
}
