// Package memorypane is the Memory screen: a search_memory form with inline
// validation, ranked hits with a fuzzy filter, and a full-text detail view.
package memorypane

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/sahilm/fuzzy"

	"github.com/vigil-dev/vigil/exec/memory"
	"github.com/vigil-dev/vigil/panes"
	"github.com/vigil-dev/vigil/safetext"
	"github.com/vigil-dev/vigil/themes"
)

// Options configure the pane.
type Options struct {
	// Tool answers searches. The CLI builds it over memory.Unavailable when
	// the store could not open, so searches still answer in the seed's words.
	Tool *memory.Tool
	// Store reloads a memory for the detail view; nil shows the hit as found.
	Store *memory.Store
	// OpenErr is why the store could not open, shown above the results.
	OpenErr error
	// Now is the clock for the detail view's "how long ago".
	Now func() time.Time
}

type mode int

const (
	modeFields mode = iota // editing the form: every key is typed
	modeList               // moving through hits
	modeFilter             // typing the fuzzy filter
	modeDetail             // one memory in full
)

// The form's fields, in tab order.
const (
	fQuery = iota
	fTags
	fSource
	fFrom
	fTo
	fLimit
	nFields
)

var fieldNames = [nFields]string{"query", "tags", "source", "from", "to", "limit"}

type (
	// resultMsg carries a search's outcome back with the generation of the
	// request that produced it, so a slow old search cannot overwrite a newer one.
	resultMsg struct {
		gen     int
		out     memory.Outcome
		refresh bool // asked again after a change on disk: keep the filter and selection
	}
	detailMsg struct {
		gen int
		mem memory.Memory
		err error
	}
)

var _ panes.Pane = (*Pane)(nil)

// Pane is the Memory screen.
type Pane struct {
	o      Options
	styles *themes.Styles
	km     keymaps

	mode   mode
	focus  int
	inputs [nFields]panes.TextField
	// invalid holds the engine's validation failures by the field they are
	// shown under; general holds those that belong to no single field.
	invalid [nFields][]memory.FieldError
	general []memory.FieldError

	gen      int
	cancel   context.CancelFunc
	running  bool
	searched bool
	// browsing: the list holds a listing newest first (the newest memories,
	// or those the filters chose without a query), not a search's hits
	browsing  bool
	filtered  bool  // browsing: the form's filters chose the memories
	more      bool  // browsing: older memories exist beyond the list
	browseErr error // the memories could not be listed
	out       memory.Outcome
	live      live // following the store's changes (live.go)

	texts    []safetext.Text // seed previews of out.Hits made safe to show
	previews []string        // their shown text, the fuzzy haystack
	filter   panes.TextField
	shown    []int         // indexes into out.Hits, rank order
	marks    map[int][]int // hit index → matched byte offsets in its preview
	// list is the cursor over shown (a hit takes its header and its
	// wrapped preview); its Map is which hit each drawn line is, for clicks
	list  panes.List
	listW int // the width the list was last laid out at: items' heights

	detail    *detail
	detailGen int

	keys  int                       // key presses handled, for Snapshot
	state panes.Published[Snapshot] // what tests wait on (Snapshot, Changed)
}

type detail struct {
	rank int
	hit  memory.Hit
	mem  memory.Memory
	err  error
	view panes.Viewport // the full text's scroll
	// loading: the stored memory is being read (the hit is shown meanwhile)
	loading bool
}

// New builds the pane.
func New(o Options, styles *themes.Styles) *Pane {
	if o.Now == nil {
		o.Now = time.Now
	}
	// the pane opens on its (empty) list, not in the query field, so the
	// global keys work on first launch; e, i or enter start typing
	p := &Pane{o: o, styles: styles, mode: modeList}
	p.km = p.buildKeymaps()
	p.list = panes.List{Len: func() int { return len(p.shown) },
		Height: func(i int) int { return p.itemHeight(p.shown[i], p.listW) }}
	p.publish()
	return p
}

func (p *Pane) ID() string                 { return "memory" }
func (p *Pane) Title() string              { return "Memory" }
func (p *Pane) SetStyles(s *themes.Styles) { p.styles = s }
func (p *Pane) Badge() string              { return "" }

// Init lists the newest memories, so the pane shows something to browse
// before any query, and follows the store's changes under ctx, so what
// another process adds shows without a key.
func (p *Pane) Init(ctx context.Context) tea.Cmd {
	cmd := tea.Batch(p.browse(), p.follow(ctx))
	p.publish()
	return cmd
}

// Capturing is true while the form or the filter has the keyboard.
func (p *Pane) Capturing() bool { return p.mode == modeFields || p.mode == modeFilter }

// Close ends the pane's background work: a search or listing in flight,
// and the store's change feed, which it waits for.
func (p *Pane) Close() {
	p.cancelWork()
	p.live.close()
}

// cancelWork cancels the search or listing in flight.
func (p *Pane) cancelWork() {
	if p.cancel != nil {
		p.cancel()
		p.cancel = nil
	}
}

// Update handles the pane's messages and, when focused, its keys.
func (p *Pane) Update(msg tea.Msg) tea.Cmd {
	cmd := p.update(msg)
	p.publish()
	return cmd
}

func (p *Pane) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case resultMsg:
		if msg.gen != p.gen {
			return nil // superseded by a newer search
		}
		return p.applyResult(msg)
	case recentMsg:
		if msg.gen != p.gen {
			return nil // a search replaced the browse
		}
		return p.applyRecent(msg)
	case changedMsg:
		return p.changed(msg)
	case detailMsg:
		if p.detail == nil || msg.gen != p.detailGen {
			return nil // closed or replaced before it loaded
		}
		p.detail.loading = false
		if p.detail.err = msg.err; msg.err == nil {
			p.detail.mem = msg.mem
		}
	case tea.MouseClickMsg:
		if p.mode != modeDetail && p.list.Click(msg) {
			p.mode = modeList
		}
	case tea.MouseWheelMsg:
		if p.mode == modeDetail && p.detail != nil {
			p.detail.view.Wheel(msg)
		} else if p.mode == modeList {
			p.list.Wheel(msg)
		}
	case tea.KeyPressMsg:
		p.keys++
		return p.handleKey(msg)
	}
	return nil
}

// handleKey runs the mode's row for msg; other keys in the form and the
// filter are typing.
func (p *Pane) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if p.mode == modeDetail && p.detail == nil {
		p.mode = modeList
		return nil
	}
	if cmd, ok := p.keymap().Dispatch(msg); ok {
		return cmd
	}
	switch p.mode {
	case modeFields:
		if changed, _ := p.inputs[p.focus].Handle(msg); changed {
			// an edited field's old complaint no longer applies
			p.invalid[p.focus] = nil
			if p.focus == fFrom {
				p.invalid[fTo] = dropRange(p.invalid[fTo])
			}
		}
	case modeFilter:
		if changed, _ := p.filter.Handle(msg); changed {
			p.refilter()
		}
	}
	return nil
}

// dropRange removes the from > to complaint, which both date fields share.
func dropRange(errs []memory.FieldError) []memory.FieldError {
	var out []memory.FieldError
	for _, e := range errs {
		if e.Field != "filters" {
			out = append(out, e)
		}
	}
	return out
}

// arguments builds the search_memory arguments object from the form, so the
// engine validates exactly what an MCP client would send. A limit that is not
// a JSON number goes as a string, for the engine to reject in its own words.
// An untouched query is left out: the filters alone then choose (a query
// typed blank is sent, for the engine to refuse).
func (p *Pane) arguments() []byte {
	args := map[string]any{}
	if q := p.inputs[fQuery].Value(); q != "" {
		args["query"] = q
	}
	if l := strings.TrimSpace(p.inputs[fLimit].Value()); l != "" {
		if _, err := strconv.ParseFloat(l, 64); err == nil && json.Valid([]byte(l)) {
			args["limit"] = json.RawMessage(l)
		} else {
			args["limit"] = l
		}
	}
	filters := map[string]any{}
	if t := strings.TrimSpace(p.inputs[fTags].Value()); t != "" {
		tags := []string{}
		for _, tag := range strings.Split(t, ",") {
			if tag = strings.TrimSpace(tag); tag != "" {
				tags = append(tags, tag)
			}
		}
		filters["tags"] = tags
	}
	if s := strings.TrimSpace(p.inputs[fSource].Value()); s != "" {
		filters["source"] = s
	}
	if s := strings.TrimSpace(p.inputs[fFrom].Value()); s != "" {
		filters["date_from"] = s
	}
	if s := strings.TrimSpace(p.inputs[fTo].Value()); s != "" {
		filters["date_to"] = s
	}
	if len(filters) > 0 {
		args["filters"] = filters
	}
	raw, err := json.Marshal(args)
	if err != nil {
		// only strings and a checked number go in; keep the tool's answer path anyway
		return []byte(`null`)
	}
	return raw
}

// fieldOf maps an engine field path to the form field it is shown under.
func fieldOf(e memory.FieldError) int {
	switch e.Field {
	case "query":
		return fQuery
	case "limit":
		return fLimit
	case "filters.tags":
		return fTags
	case "filters.source":
		return fSource
	case "filters.date_from":
		return fFrom
	case "filters.date_to":
		return fTo
	case "filters":
		if strings.Contains(e.Message, "date_from") {
			return fTo
		}
	}
	return -1
}

// run validates the form and, when valid, starts a search in the background.
// Validation is synchronous: it is pure and cheap, and the person sees the
// complaint in the same frame as their enter.
func (p *Pane) run() tea.Cmd {
	if p.formEmpty() {
		return p.browse() // nothing asked: the newest memories
	}
	// no query: the filters alone choose, newest first
	filterOnly := p.inputs[fQuery].Value() == ""
	parse := memory.ParseArguments
	if filterOnly {
		parse = memory.ParseListArguments
	}
	req, invalid := parse(p.arguments())
	p.invalid = [nFields][]memory.FieldError{}
	p.general = nil
	if len(invalid) > 0 {
		first := -1
		for _, e := range invalid {
			if f := fieldOf(e); f >= 0 {
				p.invalid[f] = append(p.invalid[f], e)
				if first < 0 {
					first = f
				}
			} else {
				p.general = append(p.general, e)
			}
		}
		p.mode = modeFields
		if first >= 0 {
			p.focus = first
		}
		// the old hits answer another form: they go, and a search still
		// in flight is dropped when it lands
		p.dropList()
		return nil
	}
	p.mode = modeList
	if filterOnly {
		return p.listing(req, false) // at most the form's limit, as a search
	}
	return p.search(req, false)
}

// search runs req through the tool off the UI goroutine; a refresh is
// quiet (no "searching…") and keeps the filter and the selection.
func (p *Pane) search(req memory.Request, refresh bool) tea.Cmd {
	if p.o.Tool == nil {
		p.gen++
		p.cancelWork()
		p.running, p.live.refreshing = false, false
		return nil
	}
	ctx := p.startWork(refresh)
	gen, tool := p.gen, p.o.Tool
	return func() tea.Msg { return resultMsg{gen: gen, out: tool.Search(ctx, req), refresh: refresh} }
}

// startWork begins a read whose answer replaces the list, dropping the one
// in flight.
func (p *Pane) startWork(refresh bool) context.Context {
	p.gen++
	p.cancelWork()
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.running, p.live.refreshing = cancel, !refresh, refresh
	return ctx
}

// dropList empties the list and drops what is in flight: nothing shown
// answers the form, and nothing is asked again after a change.
func (p *Pane) dropList() {
	p.gen++
	p.cancelWork()
	p.running, p.live.refreshing = false, false
	p.live.shown = shownNone
	p.clearHits()
}

// formEmpty reports a form with no query and no filter.
func (p *Pane) formEmpty() bool {
	// a blank query typed is a query (the engine says what is wrong with
	// it); only a form never typed in browses
	for i := range p.inputs {
		if p.inputs[i].Value() != "" {
			return false
		}
	}
	return true
}

// clearHits empties the list: nothing shown answers the form any more.
func (p *Pane) clearHits() {
	p.out, p.texts, p.previews = memory.Outcome{}, nil, nil
	p.shown, p.marks = nil, nil
	p.list.Reset()
	p.searched, p.browsing, p.filtered = false, false, false
	p.filter.SetValue("")
}

func (p *Pane) applyResult(msg resultMsg) tea.Cmd {
	p.cancelWork()
	p.running, p.live.refreshing = false, false
	p.searched, p.browsing, p.filtered, p.browseErr = true, false, false, nil
	if msg.refresh {
		p.replaceHits(msg.out)
	} else {
		p.setHits(msg.out)
	}
	p.live.shown, p.live.req = shownSearch, msg.out.Request
	return p.afterWork()
}

// setHits makes out's hits the list: their previews made safe once, the
// filter cleared (it was typed for other hits), the first selected.
func (p *Pane) setHits(out memory.Outcome) {
	p.browseErr = nil
	p.out = out
	p.texts = make([]safetext.Text, len(out.Hits))
	p.previews = make([]string, len(out.Hits))
	for i, h := range out.Hits {
		p.texts[i] = oneLine(memory.Preview(h.Text))
		p.previews[i] = p.texts[i].String()
	}
	// a filter typed for the old hits means nothing for the new ones
	p.filter.SetValue("")
	p.list.Reset()
	p.refilter()
}

// oneLine lays a preview out on one line as Vigil chooses: each of its own
// lines made safe (safetext) and joined with a space, as before, so a
// multi-line memory reads as prose in the list; the detail view shows the
// lines as lines. Tabs become spaces; everything else hidden is marked.
func oneLine(s string) safetext.Text {
	var out safetext.Text
	for i, l := range safetext.InspectLines(s, safetext.Options{TabWidth: 1}) {
		if i > 0 {
			out.Spans = append(out.Spans, safetext.Span{Text: " "})
		}
		out.Spans = append(out.Spans, l.Spans...)
		out.Hidden += l.Hidden
	}
	return out
}

// refilter narrows the hits to those whose preview fuzzy-matches the filter,
// keeping rank order and, when it survives, the selected hit.
func (p *Pane) refilter() {
	selHit := -1
	if sel := p.list.Cursor(); sel < len(p.shown) {
		selHit = p.shown[sel]
	}
	p.shown, p.marks = p.shown[:0], map[int][]int{}
	pat := p.filter.Value()
	if strings.TrimSpace(pat) == "" {
		terms := queryTerms(p.out.Request.Query)
		for i := range p.out.Hits {
			p.shown = append(p.shown, i)
			p.marks[i] = termMarks(p.previews[i], terms)
		}
	} else {
		p.filterHits(pat)
	}
	p.list.Reset()
	for i, h := range p.shown {
		if h == selHit {
			p.list.Select(i)
		}
	}
}

// filterHits keeps the hits the filter matches in their text, their tags
// or their source, each read on its own (a pattern spread across the three
// would match nearly anything), ranked by the best of the three scores,
// ties in search order; the marks in the text are drawn.
func (p *Pane) filterHits(pat string) {
	n := len(p.out.Hits)
	best := make([]int, n)
	found := make([]bool, n)
	take := func(src fuzzy.Source, text bool) {
		for _, m := range fuzzy.FindFrom(pat, src) {
			if !found[m.Index] || m.Score > best[m.Index] {
				best[m.Index] = m.Score
			}
			found[m.Index] = true
			if text {
				p.marks[m.Index] = m.MatchedIndexes
			}
		}
	}
	take(fieldSource{p, fieldText}, true)
	take(fieldSource{p, fieldTags}, false)
	take(fieldSource{p, fieldSrc}, false)
	for i := range n {
		if found[i] {
			p.shown = append(p.shown, i)
		}
	}
	sort.SliceStable(p.shown, func(a, b int) bool { return best[p.shown[a]] > best[p.shown[b]] })
}

const (
	fieldText = iota
	fieldTags
	fieldSrc
)

// fieldSource is one of a hit's filterable parts, for fuzzy: its shown
// text, its tags as "#a #b", or its source.
type fieldSource struct {
	p     *Pane
	field int
}

func (f fieldSource) Len() int { return len(f.p.out.Hits) }

func (f fieldSource) String(i int) string {
	h := f.p.out.Hits[i]
	switch f.field {
	case fieldTags:
		var b strings.Builder
		for _, t := range h.Tags {
			b.WriteString("#" + safetext.Line(t) + " ")
		}
		return b.String()
	case fieldSrc:
		return safetext.Line(h.Source)
	}
	return f.p.previews[i]
}

// queryTerms are the words of a search query, lower-cased, for marking
// them in the hits (FTS5 matched them case-insensitively).
func queryTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) > 1 {
			out = append(out, w)
		}
	}
	return out
}

// termMarks are the byte offsets of the runes of every case-insensitive
// occurrence of the terms in shown (ASCII folding: a term and its match
// have the same length), in order.
func termMarks(shown string, terms []string) []int {
	if len(terms) == 0 {
		return nil
	}
	lower := strings.ToLower(shown)
	if len(lower) != len(shown) {
		return nil // a case change altered lengths: no reliable offsets
	}
	marked := make([]bool, len(shown))
	for _, t := range terms {
		for from := 0; ; {
			i := strings.Index(lower[from:], t)
			if i < 0 {
				break
			}
			for j := from + i; j < from+i+len(t); j++ {
				marked[j] = true
			}
			from += i + len(t)
		}
	}
	var out []int
	for i := 0; i < len(shown); {
		_, size := utf8.DecodeRuneInString(shown[i:])
		if marked[i] {
			out = append(out, i)
		}
		i += size
	}
	return out
}

// Selected is the hit under the cursor, if any.
func (p *Pane) Selected() (memory.Hit, bool) {
	sel := p.list.Cursor()
	if sel >= len(p.shown) {
		return memory.Hit{}, false
	}
	return p.out.Hits[p.shown[sel]], true
}

// openDetail shows the selected memory and reloads it from the store off the
// UI goroutine, so the detail is the stored memory, not a copy from the search.
func (p *Pane) openDetail() tea.Cmd {
	h, ok := p.Selected()
	if !ok {
		return nil
	}
	p.detailGen++
	p.detail = &detail{rank: p.shown[p.list.Cursor()] + 1, hit: h, mem: h.Memory}
	p.mode = modeDetail
	if p.o.Store == nil {
		return nil
	}
	p.detail.loading = true
	gen, store, id := p.detailGen, p.o.Store, h.ID
	return func() tea.Msg {
		m, err := store.Get(context.Background(), id)
		return detailMsg{gen: gen, mem: m, err: err}
	}
}

// ShortHelp is the status bar's keys for the current mode, from its rows.
func (p *Pane) ShortHelp() []key.Binding { return p.keymap().Footer() }

// FullHelp is the ? overlay's keys for the current mode, from its rows.
func (p *Pane) FullHelp() [][]key.Binding {
	if p.mode == modeList {
		return [][]key.Binding{p.km.list.Help()}
	}
	return [][]key.Binding{p.keymap().Help(), p.km.list.Help()}
}
