// Package searchpane is the Search screen: a composer for seed 001's content
// search (and seed 000's scoped search) with results streaming in as you type.
package searchpane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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
	// Getenv looks up VISUAL and EDITOR; nil means os.Getenv.
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

// composer fields, in tab order
const (
	fPattern = iota
	fScope
	fCase
	fMode
	fWord
	fHidden
	fFollow
	fNoIgnore
	fRecursive
	fFuzzy
	fPath
	fInclude
	fExclude
	fContext
	fMax
	fPerFile
	fTimeout
	nFields
)

var caseModes = []string{"smart", "sensitive", "insensitive"}

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
		err   error
	}
	docMsg struct {
		doc scope.Document
		err error
	}
	editorMsg  struct{ err error }
	historyMsg struct{ err error }
)

var _ panes.Pane = (*Pane)(nil)

// Pane is the Search screen.
type Pane struct {
	opts     Options
	styles   *themes.Styles
	km       keymaps
	now      func() time.Time
	getenv   func(string) string
	debounce time.Duration
	root     string // canonical sandbox root, for opening files

	// composer
	focus    focusArea
	field    int
	inputs   [nFields]panes.TextField // text fields: pattern, path, include, exclude, numbers
	scopeIdx int                      // 0 = content, i = Scopes[i-1]
	caseIdx  int
	fixed    bool
	word     bool
	hidden   bool
	follow   bool
	noIgnore bool
	recurse  bool
	fuzzy    int
	errField int    // field the error belongs to, -1 for none
	errText  string // inline validation message

	history   []string
	histIdx   int
	histDraft string
	histErr   error

	backend      search.BackendInfo
	backendKnown bool

	// running search
	seq     uint64 // debounce sequence
	gen     uint64 // generation of the newest search
	cur     *stream
	running bool
	// recordGen is the search whose pattern joins the history once it
	// answers without an engine error (the person ran it with enter)
	recordGen uint64
	started   time.Time

	// shown results (content)
	shownGen uint64
	res      results
	scanned  int64
	fileErrs []search.FileError
	final    *search.Response
	runErr   string
	elapsed  time.Duration
	lastReq  search.Request

	// shown results (scoped)
	scoped     *scope.Hits
	scopedText string

	sel, top int
	listH    int
	listTop  int           // pane line the results start at, as last drawn
	rowsAt   panes.LineMap // which result row each drawn line shows, for clicks

	compl     completion // the path field's completions, listed off the UI goroutine
	complWant string     // the path value whose listing was last asked for
	showErrs  bool
	errScroll int

	preview     bool
	prevPath    string // file the preview holds or is loading
	prevLines   []string
	prevErr     error
	prevLoading bool
	prevScroll  int // lines scrolled relative to centring on the selection
	doc         *scope.Document
	docErr      error
	docLoading  bool
	docScroll   int
	docBody     docCache // the document's lines laid out, for the width they were laid out at
	scPrev      scopedPreview
	notice      string

	keysSeen int
	state    atomic.Pointer[Snapshot]
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
}

// New builds the pane. History is read now (a small file) so the first
// keystroke can walk it.
func New(o Options, styles *themes.Styles) *Pane {
	// The pane opens on its results, not in the pattern field, so the
	// global keys (1–4, ?, q, tab) work on first launch; / i or enter
	// start typing and esc leaves the field (README "Keys").
	p := &Pane{opts: o, styles: styles, now: o.Now, getenv: o.Getenv,
		debounce: o.Debounce, errField: -1, recurse: true, focus: focusResults}
	p.km = p.buildKeymaps()
	if p.now == nil {
		p.now = time.Now
	}
	if p.getenv == nil {
		p.getenv = os.Getenv
	}
	if p.debounce <= 0 {
		p.debounce = DefaultDebounce
	}
	p.root = o.Search.Root
	if p.root == "" {
		p.root, _ = os.Getwd()
	}
	if c, err := filepath.EvalSymlinks(p.root); err == nil {
		p.root = c
	}
	p.history, p.histErr = LoadHistory(o.HistoryPath)
	p.histIdx = len(p.history)
	p.applyInitial(o)
	p.publish()
	return p
}

func (p *Pane) applyInitial(o Options) {
	r := o.Initial
	cfg := o.Search.Search
	p.inputs[fPattern].SetValue(r.Pattern)
	if r.Case != nil {
		for i, c := range caseModes {
			if c == *r.Case {
				p.caseIdx = i
			}
		}
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.fixed, r.FixedStrings)
	set(&p.word, r.WordRegexp)
	set(&p.hidden, r.Hidden)
	set(&p.follow, r.Follow)
	set(&p.noIgnore, r.NoIgnore)
	set(&p.recurse, r.Recursive)
	if r.Fuzzy != nil {
		p.fuzzy = int(*r.Fuzzy)
	}
	if r.Path != nil {
		p.inputs[fPath].SetValue(*r.Path)
	}
	inc := r.IncludeGlob
	if inc == nil {
		inc = r.Glob
	}
	p.inputs[fInclude].SetValue(strings.Join(inc, ","))
	p.inputs[fExclude].SetValue(strings.Join(r.ExcludeGlob, ","))
	num := func(f int, v *int64, def int64, keepEmpty bool) {
		switch {
		case v != nil:
			p.inputs[f].SetValue(strconv.FormatInt(*v, 10))
		case !keepEmpty:
			p.inputs[f].SetValue(strconv.FormatInt(def, 10))
		}
	}
	num(fContext, r.Context, 0, false)
	num(fMax, r.MaxResults, max(cfg.DefaultMaxResults, 1), false)
	num(fPerFile, r.MaxMatchesPerFile, 0, true)
	num(fTimeout, r.TimeoutMS, max(cfg.DefaultTimeoutMS, 1), false)
	for i, sc := range o.Scopes {
		if sc.Name == o.InitialScope && o.InitialScope != "" {
			p.scopeIdx = i + 1
		}
	}
}

func (p *Pane) ID() string                 { return "search" }
func (p *Pane) Title() string              { return "Search" }
func (p *Pane) SetStyles(s *themes.Styles) { p.styles = s }
func (p *Pane) Badge() string              { return "" }

// Capturing is true while the composer has the keyboard or a document is
// open, so typed letters never trigger global shortcuts.
func (p *Pane) Capturing() bool { return p.focus == focusComposer && p.doc == nil && p.docErr == nil }

// Snapshot returns the pane's progress (see Snapshot).
func (p *Pane) Snapshot() Snapshot {
	if s := p.state.Load(); s != nil {
		return *s
	}
	return Snapshot{}
}

func (p *Pane) publish() {
	s := &Snapshot{Busy: p.running || p.seq != 0 || p.prevLoading || p.docLoading || !p.backendKnown,
		Gen: p.gen, Shown: p.shownGen, Finished: !p.running, Pattern: p.lastReq.Pattern,
		Err: p.errText, Keys: p.keysSeen}
	if p.isScoped() {
		s.Pattern = p.scopedText
	}
	if p.backendKnown {
		s.Backend = strings.TrimSpace(p.backend.Name + " " + p.backend.Version)
	}
	p.state.Store(s)
}

// Init detects the backend (it runs `--version`, so off the UI goroutine)
// and runs the initial query, if any.
func (p *Pane) Init() tea.Cmd {
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
	if strings.TrimSpace(p.inputs[fPattern].Value()) != "" {
		cmds = append(cmds, p.runNow())
	}
	return tea.Batch(cmds...)
}

// Close stops any running search.
func (p *Pane) Close() {
	p.cur.stop()
}

func (p *Pane) isScoped() bool { return p.scopeIdx > 0 && p.scopeIdx <= len(p.opts.Scopes) }

func (p *Pane) scopeName() string {
	if p.isScoped() {
		return p.opts.Scopes[p.scopeIdx-1].Name
	}
	return "content"
}

// Update handles the pane's messages and, when focused, keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	cmd := p.update(msg)
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
		p.elapsed = p.now().Sub(p.started)
		p.shownGen = msg.gen
		p.sel, p.top, p.showErrs = 0, 0, false
		if msg.err != nil {
			p.scoped = nil
			p.setError(msg.err)
			return nil
		}
		h := msg.hits
		p.scoped = &h
		p.scPrev = scopedPreview{}
		return p.recordRun(msg.gen)
	case previewMsg:
		if msg.path == p.prevPath {
			p.prevLines, p.prevErr, p.prevLoading = msg.lines, msg.err, false
		}
	case docMsg:
		p.docLoading = false
		if msg.err != nil {
			p.docErr = msg.err
		} else {
			d := msg.doc
			p.doc = &d
		}
		p.docScroll = 0
	case editorMsg:
		if msg.err != nil {
			p.notice = "editor: " + msg.err.Error()
		}
	case historyMsg:
		p.histErr = msg.err
	case completionMsg:
		p.compl = msg.c
	case panes.ClipboardMsg:
		if msg.Err != nil {
			p.notice = "copied through the terminal only: " + filepath.Base(msg.Tool) + ": " + msg.Err.Error()
		}
	case scopedPreviewMsg:
		if msg.id == p.scPrev.id {
			p.scPrev.loading, p.scPrev.err = false, msg.err
			if msg.err == nil {
				d := msg.doc
				p.scPrev.doc = &d
			}
		}
	case tea.PasteMsg:
		if p.focus == focusComposer && isTextField(p.field) {
			p.inputs[p.field].Insert(msg.Content)
			return p.changed()
		}
	case tea.MouseWheelMsg:
		switch {
		case p.doc != nil:
			p.docScroll = max(p.docScroll+panes.Wheel(msg), 0)
		case p.showErrs:
			p.errScroll = min(max(p.errScroll+panes.Wheel(msg), 0), max(len(p.fileErrs)-1, 0))
		default:
			p.move(panes.Wheel(msg))
		}
	case tea.MouseClickMsg:
		if i, ok := p.rowsAt.Clicked(msg); ok && p.doc == nil && !p.showErrs {
			// a click on a row selects it (a file header: its first line)
			p.focus = focusResults
			p.sel = i
			p.move(0) // a header moves on to its first line
		}
	case tea.KeyPressMsg:
		p.keysSeen++
		return p.handleKey(msg)
	}
	return nil
}

func isTextField(f int) bool {
	switch f {
	case fPattern, fPath, fInclude, fExclude, fContext, fMax, fPerFile, fTimeout:
		return true
	}
	return false
}

// visible reports whether a composer field applies to the selected scope.
func (p *Pane) applies(f int) bool {
	if p.isScoped() {
		return f == fPattern || f == fScope || f == fMax
	}
	return true
}

func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	p.notice = ""
	if cmd, ok := p.keymap().Dispatch(msg); ok {
		return cmd
	}
	if p.focus == focusComposer && p.doc == nil && p.docErr == nil {
		return p.edit(msg) // typing
	}
	return nil
}

// cycle changes a toggle field by d steps and re-runs (debounced).
func (p *Pane) cycle(f, d int) tea.Cmd {
	switch f {
	case fScope:
		n := len(p.opts.Scopes) + 1
		p.scopeIdx = ((p.scopeIdx+d)%n + n) % n
		p.clearResults()
		if !p.applies(p.field) {
			p.field = fPattern
		}
	case fCase:
		p.caseIdx = ((p.caseIdx+d)%3 + 3) % 3
	case fMode:
		p.fixed = !p.fixed
	case fWord:
		p.word = !p.word
	case fHidden:
		p.hidden = !p.hidden
	case fFollow:
		p.follow = !p.follow
	case fNoIgnore:
		p.noIgnore = !p.noIgnore
	case fRecursive:
		p.recurse = !p.recurse
	case fFuzzy:
		p.fuzzy = ((p.fuzzy+d)%5 + 5) % 5
	default:
		return nil
	}
	return p.changed()
}

func (p *Pane) nextField(d int) {
	for range nFields {
		p.field = ((p.field+d)%nFields + nFields) % nFields
		if p.applies(p.field) {
			return
		}
	}
}

func (p *Pane) walkHistory(up bool) tea.Cmd {
	if len(p.history) == 0 {
		return nil
	}
	if up {
		if p.histIdx == 0 {
			return nil
		}
		if p.histIdx == len(p.history) {
			p.histDraft = p.inputs[fPattern].Value()
		}
		p.histIdx--
		p.inputs[fPattern].SetValue(p.history[p.histIdx])
	} else {
		if p.histIdx >= len(p.history) {
			return nil
		}
		p.histIdx++
		if p.histIdx == len(p.history) {
			p.inputs[fPattern].SetValue(p.histDraft)
		} else {
			p.inputs[fPattern].SetValue(p.history[p.histIdx])
		}
	}
	return p.changed()
}

// runAndRecord runs the composed search at once; once it has answered
// without the engine refusing it, its pattern joins the history.
func (p *Pane) runAndRecord() tea.Cmd {
	cmd := p.runNow()
	if p.running {
		p.recordGen = p.gen
	}
	return cmd
}

// recordRun records the pattern of search gen if the person ran it.
func (p *Pane) recordRun(gen uint64) tea.Cmd {
	if gen != p.recordGen || gen == 0 {
		return nil
	}
	p.recordGen = 0
	q := p.lastReq.Pattern
	if p.isScoped() {
		q = p.scopedText
	}
	return p.recordHistory(q)
}

// recordHistory remembers the current pattern as a run search: in memory
// now, so ↑ reaches it in this session, and on disk off the UI goroutine.
// Only searches the person ran are recorded (enter, ctrl+r, or esc after its
// results showed): the live searches typing starts are not, so a half-typed
// "leas" never lands in the history, and a pattern the engine refused is
// not recorded at all.
func (p *Pane) recordHistory(q string) tea.Cmd {
	if strings.TrimSpace(q) == "" {
		return nil
	}
	p.history = pushHistory(p.history, q)
	p.histIdx = len(p.history)
	p.histDraft = ""
	path := p.opts.HistoryPath
	if path == "" {
		return nil
	}
	return func() tea.Msg { return historyMsg{err: AppendHistory(path, q)} }
}

// ranCurrent reports whether the results on screen answer the pattern as it
// is now, without an error: the person has seen this search run.
func (p *Pane) ranCurrent() bool {
	q := p.inputs[fPattern].Value()
	if strings.TrimSpace(q) == "" || p.errText != "" || p.runErr != "" || p.shownGen != p.gen || p.seq != 0 {
		return false
	}
	if p.isScoped() {
		return p.scoped != nil && p.scopedText == q
	}
	return p.lastReq.Pattern == q && (p.final != nil || p.running)
}

// changed is called after every edit: local checks at once, the search
// after the debounce.
func (p *Pane) changed() tea.Cmd {
	if _, ok := p.buildRequest(); !ok {
		p.seq = 0 // nothing to run until the field is fixed
		p.stopSearch()
		return nil
	}
	if strings.TrimSpace(p.inputs[fPattern].Value()) == "" {
		p.seq = 0
		p.stopSearch()
		p.clearResults()
		return nil
	}
	// the running search is now stale: stop its backend at once, but keep
	// its results on screen until the new ones arrive
	p.stopSearch()
	p.seq++
	seq := p.seq
	return tea.Tick(p.debounce, func(time.Time) tea.Msg { return debounceMsg{seq: seq} })
}

// setError shows an engine error beside the field it is about, read from
// the error's typed field (search.FieldOf), never parsed out of its words.
func (p *Pane) setError(err error) {
	p.errField, p.errText = fPattern, err.Error()
	var te *search.ToolError
	if errors.As(err, &te) {
		p.errText = te.Message
	}
	fe, ok := search.FieldOf(err)
	if !ok {
		return
	}
	if f, ok := composerField[fe.Field]; ok {
		p.errField = f
	}
}

// composerField is the composer field each request field is edited in.
var composerField = map[search.Field]int{
	search.FieldPattern: fPattern, search.FieldCase: fCase, search.FieldFixedStrings: fMode,
	search.FieldWordRegexp: fWord, search.FieldHidden: fHidden, search.FieldFollow: fFollow,
	search.FieldNoIgnore: fNoIgnore, search.FieldRecursive: fRecursive, search.FieldFuzzy: fFuzzy,
	search.FieldPath: fPath, search.FieldIncludeGlob: fInclude, search.FieldGlob: fInclude,
	search.FieldExcludeGlob: fExclude, search.FieldContext: fContext, search.FieldMaxResults: fMax,
	search.FieldMaxMatchesPerFile: fPerFile, search.FieldTimeoutMS: fTimeout,
}

func (p *Pane) clearError() { p.errField, p.errText = -1, "" }

// buildRequest turns the composer into a request; number fields that are
// not integers are reported here, before the engine sees them.
func (p *Pane) buildRequest() (search.Request, bool) {
	p.clearError()
	r := search.Request{Pattern: p.inputs[fPattern].Value()}
	r.Case = search.Ptr(caseModes[p.caseIdx])
	r.FixedStrings = search.Ptr(p.fixed)
	r.WordRegexp = search.Ptr(p.word)
	r.Hidden = search.Ptr(p.hidden)
	r.Follow = search.Ptr(p.follow)
	r.NoIgnore = search.Ptr(p.noIgnore)
	r.Recursive = search.Ptr(p.recurse)
	if p.fuzzy > 0 {
		r.Fuzzy = search.Ptr(int64(p.fuzzy))
	}
	if v := strings.TrimSpace(p.inputs[fPath].Value()); v != "" {
		r.Path = search.Ptr(v)
	}
	r.IncludeGlob = splitGlobs(p.inputs[fInclude].Value())
	r.ExcludeGlob = splitGlobs(p.inputs[fExclude].Value())
	nums := []struct {
		f    int
		name string
		dst  **int64
	}{{fContext, "context", &r.Context}, {fMax, "max_results", &r.MaxResults},
		{fPerFile, "max_matches_per_file", &r.MaxMatchesPerFile}, {fTimeout, "timeout_ms", &r.TimeoutMS}}
	for _, n := range nums {
		v := strings.TrimSpace(p.inputs[n.f].Value())
		if v == "" {
			continue
		}
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			p.errField, p.errText = n.f, n.name+": must be an integer, got "+strconv.Quote(v)
			return r, false
		}
		*n.dst = search.Ptr(i)
	}
	return r, true
}

func splitGlobs(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, g := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(g))
	}
	return out
}

// runNow starts the composed search at once, superseding any running one.
func (p *Pane) runNow() tea.Cmd {
	p.seq = 0
	req, ok := p.buildRequest()
	if !ok {
		return nil
	}
	if strings.TrimSpace(req.Pattern) == "" {
		p.stopSearch()
		p.clearResults()
		return nil
	}
	p.stopSearch()
	p.gen++
	gen := p.gen
	p.running = true
	p.started = p.now()
	if p.isScoped() {
		sc := p.opts.Scopes[p.scopeIdx-1]
		q := scope.Query{Text: req.Pattern, MaxResults: int(derefOr(req.MaxResults, 100))}
		p.scopedText = req.Pattern
		return func() tea.Msg {
			hits, terr := scope.Search(context.Background(), sc, q, scope.Limits{})
			if terr != nil {
				return scopedMsg{gen: gen, err: terr}
			}
			return scopedMsg{gen: gen, hits: hits}
		}
	}
	p.lastReq = req
	run := p.opts.Engine
	if run == nil {
		run = search.Run
	}
	p.cur = startStream(gen, req, p.opts.Search, run)
	return p.cur.pump()
}

func derefOr(v *int64, d int64) int64 {
	if v == nil {
		return d
	}
	return *v
}

func (p *Pane) stopSearch() {
	if p.cur != nil {
		p.cur.stop()
		p.cur = nil
	}
	p.running = false
}

func (p *Pane) clearResults() {
	p.res = results{}
	p.scoped = nil
	p.final = nil
	p.fileErrs = nil
	p.scanned = 0
	p.runErr = ""
	p.sel, p.top, p.showErrs = 0, 0, false
	p.shownGen = p.gen
	p.lastReq = search.Request{}
	p.scopedText = ""
	p.scPrev = scopedPreview{}
}

// onBatch takes a batch of the newest search onto the screen; batches of a
// superseded search are dropped and not pumped again.
func (p *Pane) onBatch(m batchMsg) tea.Cmd {
	if m.gen != p.gen || p.cur == nil || p.cur.gen != m.gen {
		return nil
	}
	if p.shownGen != m.gen {
		// first news of a new query: replace the old results only now, so
		// the screen never flashes empty while typing
		p.res = results{}
		p.fileErrs, p.final, p.runErr = nil, nil, ""
		p.sel, p.top, p.showErrs, p.errScroll = 0, 0, false, 0
		p.shownGen = m.gen
		p.clearError()
	}
	fresh := len(p.res.rows) == 0
	p.res.add(m.events)
	if fresh {
		p.selectFirstMatch()
	}
	p.fileErrs = append(p.fileErrs, m.errs...)
	p.scanned = max(p.scanned, m.scanned)
	if !m.finished {
		return p.cur.pump()
	}
	p.running = false
	p.elapsed = p.now().Sub(p.started)
	p.cur = nil
	if m.err != nil {
		var te *search.ToolError
		if errors.As(m.err, &te) {
			p.setError(te)
			p.res = results{}
			return nil
		}
		p.runErr = m.err.Error()
	}
	record := p.recordRun(m.gen)
	resp := m.resp
	p.final = &resp
	p.scanned = resp.FilesScanned
	if resp.Errors != nil {
		p.fileErrs = resp.Errors // the complete list, in order
	}
	return record
}

// selectFirstMatch puts the cursor on the first match line (not a header or
// a context line) of fresh results.
func (p *Pane) selectFirstMatch() {
	for i, r := range p.res.rows {
		if r.ev >= 0 && p.res.events[r.ev].Type == "match" {
			p.sel = i
			return
		}
	}
	p.sel = 0
}
