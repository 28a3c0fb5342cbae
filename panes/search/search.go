// Package searchpane is the Search screen: a composer for seed 001's content
// search (and seed 000's scoped search) with results streaming in as you type.
package searchpane

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/scope"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/themes"
)

// DefaultDebounce is how long typing must pause before a live search runs.
const DefaultDebounce = 120 * time.Millisecond

// Options configures the pane.
type Options struct {
	// Search is the engine's options: sandbox root and deny list,
	// [tools.search] and the backend choice.
	Search search.Options
	// Scopes are the configured scopes offered next to content search.
	Scopes []config.ScopeConfig
	// HistoryPath is the query history file ("" keeps history in memory).
	HistoryPath string
	// Debounce is the pause before a live search; 0 means DefaultDebounce.
	Debounce time.Duration
	// Now is the clock for elapsed times; nil means time.Now.
	Now func() time.Time
	// Getenv looks up VISUAL, EDITOR and NO_COLOR; nil means os.Getenv.
	Getenv func(string) string
	// Initial pre-fills the composer; a non-empty pattern runs at Init.
	Initial search.Request
	// InitialScope selects a configured scope by name ("" is content search).
	InitialScope string
	// Engine runs content searches; nil means search.Run (ugrep/rg).
	Engine Engine
	// Backends detects the backends; nil means search.DetectBackends.
	Backends func(search.Options) []search.BackendInfo
	// ScopeOpen opens a scope hit for the preview and the viewer; nil
	// means scope.Open.
	ScopeOpen func(config.ScopeConfig, string) (scope.Document, error)
	// Denied is the engine's deny-list check for a sandbox-relative path;
	// nil reads Search.Deny conservatively (conservativeDeny). Path
	// completion never offers a denied directory.
	Denied func(rel string, isDir bool) bool
}

type focusArea int

const (
	focusComposer focusArea = iota
	focusResults
)

// messages
type (
	debounceMsg struct{ seq uint64 }
	backendMsg  struct{ info search.BackendInfo }
	scopedMsg   struct {
		gen  uint64
		hits scope.Hits
		err  error
	}
	previewMsg struct {
		path  string
		lines []string
		cut   bool // the file goes on past the lines read
		err   error
	}
	docMsg struct {
		gen uint64 // which open it answers (docGen)
		doc scope.Document
		err error
	}
	editorMsg struct {
		cmd string // the command line that ran, for its failure
		err error
	}
	historyMsg struct{ err error }
)

var _ panes.Pane = (*Pane)(nil)

// Pane is the Search screen: it routes keys and messages to its four
// children (the composer, the results, the preview and the document
// viewer, each a plain struct) and runs the searches the composer asks for.
type Pane struct {
	opts     Options
	styles   *themes.Styles
	km       keymaps
	now      func() time.Time
	getenv   func(string) string
	debounce time.Duration
	root     string    // canonical sandbox root, for opening files
	focus    focusArea // the composer or the results has the keyboard

	composer composer
	results  resultList
	preview  preview
	viewer   docViewer

	backend      search.BackendInfo
	backendKnown bool

	// running search
	seq     uint64 // debounce sequence
	gen     uint64 // generation of the newest search
	cur     *stream
	running bool
	// scanning is the files the running search has scanned so far
	scanning int64
	// recordGen is the search whose pattern joins the history once it
	// answers without an engine error (the person ran it with enter)
	recordGen uint64
	started   time.Time

	notice   string
	keysSeen int
	state    panes.Published[Snapshot]
}

// Snapshot is the pane's progress, safe to read from any goroutine: tests
// wait on it instead of on terminal bytes.
type Snapshot struct {
	Busy     bool   // a debounce, search, preview or document load is pending
	Gen      uint64 // generation of the newest search
	Shown    uint64 // generation of the results on screen
	Finished bool   // the shown search has finished
	Pattern  string // pattern of the shown results
	Backend  string // "name version" once detected
	Err      string // the inline validation message, if any
	Keys     int    // key presses handled so far
	Notice   string // the status line's notice, if any
}

// New builds the pane. History is read now (a small file) so the first
// keystroke can walk it.
func New(o Options, styles *themes.Styles) *Pane {
	// The pane opens on its results, not in the pattern field, so the
	// global keys (1–4, ?, q, tab) work on first launch; / i or enter
	// start typing and esc leaves the field (README "Keys").
	p := &Pane{opts: o, styles: styles, now: o.Now, getenv: o.Getenv,
		debounce: o.Debounce, focus: focusResults}
	p.composer = composer{scopes: o.Scopes, errField: -1, recurse: true}
	p.km = p.buildKeymaps()
	p.results.isScoped = p.composer.isScoped
	p.results.list = panes.List{Len: p.results.rowCount, Selectable: p.results.selectable}
	if p.now == nil {
		p.now = time.Now
	}
	if p.getenv == nil {
		p.getenv = os.Getenv
	}
	if p.debounce <= 0 {
		p.debounce = DefaultDebounce
	}
	p.styles = p.marked(styles)
	p.root = o.Search.Root
	if p.root == "" {
		p.root, _ = os.Getwd()
	}
	if c, err := filepath.EvalSymlinks(p.root); err == nil {
		p.root = c
	}
	p.composer.root = p.root
	p.composer.history, p.composer.histErr = LoadHistory(o.HistoryPath)
	p.composer.histIdx = len(p.composer.history)
	p.composer.applyInitial(o)
	p.publish()
	return p
}

func (p *Pane) ID() string                 { return "search" }
func (p *Pane) Title() string              { return "Search" }
func (p *Pane) SetStyles(s *themes.Styles) { p.styles = p.marked(s) }

// marked is s with matches underlined under NO_COLOR: without colour the
// theme's highlight is bold at most, which many terminals draw like any
// other text, and a match must still be told from its line.
func (p *Pane) marked(s *themes.Styles) *themes.Styles {
	if s == nil || p.getenv("NO_COLOR") == "" {
		return s
	}
	c := *s
	c.Match = c.Match.Underline(true)
	return &c
}
func (p *Pane) Badge() string { return "" }

// Capturing is true while the composer has the keyboard or a document is
// open, so typed letters never trigger global shortcuts.
func (p *Pane) Capturing() bool { return p.focus == focusComposer && !p.viewing() }

// Snapshot returns the pane's progress (see Snapshot).
func (p *Pane) Snapshot() Snapshot { return p.state.Load() }

// Changed returns a channel closed when the pane has handled its next
// message: take it, read Snapshot, and wait on it while the state is not
// the one wanted (a wait on state, never on time).
func (p *Pane) Changed() <-chan struct{} { return p.state.Changed() }

// publish stores the state for Snapshot and wakes those waiting.
func (p *Pane) publish() {
	s := Snapshot{Busy: p.running || p.seq != 0 || p.preview.loading || p.viewer.loading || !p.backendKnown,
		Gen: p.gen, Shown: p.results.gen, Finished: !p.running, Pattern: p.results.lastReq.Pattern,
		Err: p.composer.errText, Keys: p.keysSeen, Notice: p.notice}
	if p.composer.isScoped() {
		s.Pattern = p.results.scopedText
	}
	if p.backendKnown {
		s.Backend = strings.TrimSpace(p.backend.Name + " " + p.backend.Version)
	}
	p.state.Publish(s)
}

// Init detects the backend (it runs `--version`, so off the UI goroutine)
// and runs the initial query, if any.
func (p *Pane) Init(ctx context.Context) tea.Cmd {
	opts := p.opts.Search
	backends := p.opts.Backends
	if backends == nil {
		backends = search.DetectBackends
	}
	detect := func() tea.Msg {
		want := opts.Backend
		for _, b := range backends(opts) {
			if b.OK && (want == "" || want == "auto" || b.Name == want) {
				return backendMsg{info: b}
			}
		}
		return backendMsg{}
	}
	cmds := []tea.Cmd{detect}
	if strings.TrimSpace(p.composer.pattern()) != "" {
		cmds = append(cmds, p.runNow())
	}
	return tea.Batch(cmds...)
}

// Leave clears the status line's notice (a copy, an editor's failure): it
// spoke of a view the screen no longer shows.
func (p *Pane) Leave() {
	p.notice = ""
	p.publish()
}

// Close stops any running search.
func (p *Pane) Close() {
	p.cur.stop()
}

// viewing reports whether the viewer fills the pane (a document, the
// error opening it, or "opening…"): the list is hidden, so its keys, the
// wheel and clicks do not reach it.
func (p *Pane) viewing() bool { return p.viewer.showing() }

// scopeOpen opens a scope hit: Options.ScopeOpen, or scope.Open.
func (p *Pane) scopeOpen() scopeOpener {
	if p.opts.ScopeOpen != nil {
		return p.opts.ScopeOpen
	}
	return scope.Open
}

// scopeOpener opens a scope hit by id (scope.Open's shape).
type scopeOpener = func(config.ScopeConfig, string) (scope.Document, error)

// Update handles the pane's messages and, when focused, keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	cmd := p.update(msg)
	p.followSelection()
	if c := p.syncPreview(); c != nil {
		cmd = tea.Batch(cmd, c)
	}
	if c := p.listCompletions(); c != nil {
		cmd = tea.Batch(cmd, c)
	}
	p.publish()
	return cmd
}

func (p *Pane) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case backendMsg:
		p.backend, p.backendKnown = msg.info, true
	case debounceMsg:
		if msg.seq == p.seq && p.seq != 0 {
			return p.runNow()
		}
	case batchMsg:
		return p.onBatch(msg)
	case scopedMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.running = false
		if msg.err != nil {
			p.results.showScoped(msg.gen, nil, p.now().Sub(p.started))
			p.composer.setError(msg.err)
			return nil
		}
		h := msg.hits
		p.results.showScoped(msg.gen, &h, p.now().Sub(p.started))
		p.preview.scoped = scopedPreview{}
		return p.recordRun(msg.gen)
	case previewMsg:
		p.preview.got(msg)
	case docMsg:
		p.viewer.got(msg) // dropped if the person went back before it opened
	case editorMsg:
		p.preview.reread() // the editor may have changed the file
		if msg.err != nil {
			// which command failed matters as much as how: $VISUAL or
			// $EDITOR may not be what the person thinks (statusLine makes
			// both safe)
			p.notice = "editor failed: " + msg.cmd + ": " + msg.err.Error()
		}
	case historyMsg:
		p.composer.histErr = msg.err
	case completionMsg:
		p.composer.compl = msg.c
	case panes.ClipboardMsg:
		if msg.Err != nil {
			p.notice = "copied through the terminal only: " + filepath.Base(msg.Tool) + ": " + msg.Err.Error()
		}
	case scopedPreviewMsg:
		p.preview.gotScoped(msg)
	case tea.PasteMsg:
		if p.focus == focusComposer && isTextField(p.composer.field) {
			p.composer.inputs[p.composer.field].Insert(msg.Content)
			return p.changed()
		}
	case tea.MouseWheelMsg:
		switch {
		case p.viewing():
			p.viewer.view.Wheel(msg)
		case p.results.showErrs:
			p.results.errView.Wheel(msg)
		case p.preview.open && p.preview.area.has(msg.X, msg.Y):
			p.preview.view.Wheel(msg)
		default:
			p.results.list.Wheel(msg)
		}
	case tea.MouseClickMsg:
		// a click on a row selects it (a file header: its first line)
		if !p.viewing() && !p.results.showErrs && p.results.list.Click(msg) {
			p.focus = focusResults
		}
	case tea.KeyPressMsg:
		p.keysSeen++
		return p.handleKey(msg)
	}
	return nil
}

func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	p.notice = ""
	if p.typesAhead(msg) {
		return p.startTyping(msg)
	}
	if cmd, ok := p.keymap().Dispatch(msg); ok {
		return cmd
	}
	switch {
	case p.focus == focusComposer && !p.viewing():
		return p.typeKey(msg)
	case printable(msg) && p.onList():
		return p.startTyping(msg)
	}
	return unclaimed(msg, "")
}

// printable is a key that types text: no ctrl or alt, and text to insert.
func printable(msg tea.KeyPressMsg) bool {
	return msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0
}

// onList reports whether the results list (not the file errors or a
// document) has the keyboard.
func (p *Pane) onList() bool {
	return p.focus == focusResults && !p.viewing() && !p.results.showErrs
}

// typesAhead reports whether a key is the first letter of a pattern: with
// no pattern yet ("results appear here as you type") the list's letters (j,
// e, y, p…) would move, copy or open nothing, so every printable key but /
// types. Once a pattern ran, the list's keys act even while its results
// are still on their way (enter, esc, p opens the preview). The root's own
// keys (1–4, tab, ?, q) never reach the pane here.
func (p *Pane) typesAhead(msg tea.KeyPressMsg) bool {
	return p.onList() && p.results.rowCount() == 0 && p.composer.pattern() == "" && printable(msg) && msg.Text != "/"
}

// startTyping puts the keyboard in the pattern field, at its end, and types
// msg there: a printable key no row claims is the pattern's next letter,
// never dropped (issue: "1" then "NewVerifier" used to keep only "fier").
func (p *Pane) startTyping(msg tea.KeyPressMsg) tea.Cmd {
	p.focus, p.composer.field = focusComposer, fPattern
	p.composer.inputs[fPattern].Handle(tea.KeyPressMsg{Code: tea.KeyEnd})
	return p.typeKey(msg)
}

// typeKey gives a key to the focused field; a key the field has no use for
// (a letter on an option, ctrl+g in the pattern) says so in the footer.
func (p *Pane) typeKey(msg tea.KeyPressMsg) tea.Cmd {
	changed, used := p.composer.edit(msg)
	switch {
	case changed:
		return p.changed()
	case used:
		return nil
	case !isTextField(p.composer.field) && printable(msg):
		return unclaimed(msg, "this field is an option: space or ← changes it, tab moves on")
	}
	return unclaimed(msg, "")
}

// unclaimed reports a key nothing here acts on, so no key is swallowed
// without a word (the root shows the reason in the footer).
func unclaimed(msg tea.KeyPressMsg, why string) tea.Cmd {
	if why == "" {
		why = "no key here (? lists them)"
	}
	k := msg.String()
	return func() tea.Msg { return panes.KeyDisabledMsg{Key: k, Reason: why} }
}
