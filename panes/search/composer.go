package searchpane

// The composer: the fields on screen, turned into a search.Request, and
// the errors placed beside them. It runs nothing (runner.go does).

import (
	"errors"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/search"
	"github.com/vigil-dev/vigil/panes"
)

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

// composer is the fields on screen (composer.go turns them into a request).
type composer struct {
	scopes   []config.ScopeConfig // Options.Scopes, offered next to content search
	root     string               // the sandbox root, named beside a path the engine refused
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

	compl     completion // the path field's completions, listed off the UI goroutine
	complWant string     // the path value whose listing was last asked for
}

var caseModes = []string{"smart", "sensitive", "insensitive"}

// applyInitial fills the fields from Options.Initial and the scope named
// by Options.InitialScope.
func (c *composer) applyInitial(o Options) {
	r := o.Initial
	cfg := o.Search.Search
	c.inputs[fPattern].SetValue(r.Pattern)
	if r.Case != nil {
		for i, m := range caseModes {
			if m == *r.Case {
				c.caseIdx = i
			}
		}
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.fixed, r.FixedStrings)
	set(&c.word, r.WordRegexp)
	set(&c.hidden, r.Hidden)
	set(&c.follow, r.Follow)
	set(&c.noIgnore, r.NoIgnore)
	set(&c.recurse, r.Recursive)
	if r.Fuzzy != nil {
		c.fuzzy = int(*r.Fuzzy)
	}
	if r.Path != nil {
		c.inputs[fPath].SetValue(*r.Path)
	}
	inc := r.IncludeGlob
	if inc == nil {
		inc = r.Glob
	}
	c.inputs[fInclude].SetValue(strings.Join(inc, ","))
	c.inputs[fExclude].SetValue(strings.Join(r.ExcludeGlob, ","))
	num := func(f int, v *int64, def int64, keepEmpty bool) {
		switch {
		case v != nil:
			c.inputs[f].SetValue(strconv.FormatInt(*v, 10))
		case !keepEmpty:
			c.inputs[f].SetValue(strconv.FormatInt(def, 10))
		}
	}
	num(fContext, r.Context, 0, false)
	num(fMax, r.MaxResults, max(cfg.DefaultMaxResults, 1), false)
	num(fPerFile, r.MaxMatchesPerFile, 0, true)
	num(fTimeout, r.TimeoutMS, max(cfg.DefaultTimeoutMS, 1), false)
	for i, sc := range o.Scopes {
		if sc.Name == o.InitialScope && o.InitialScope != "" {
			c.scopeIdx = i + 1
		}
	}
}

func isTextField(f int) bool {
	switch f {
	case fPattern, fPath, fInclude, fExclude, fContext, fMax, fPerFile, fTimeout:
		return true
	}
	return false
}

// isScoped reports whether a configured scope is selected, not content
// search.
func (c *composer) isScoped() bool { return c.scopeIdx > 0 && c.scopeIdx <= len(c.scopes) }

// scope is the selected scope; only meaningful when isScoped.
func (c *composer) scope() config.ScopeConfig { return c.scopes[c.scopeIdx-1] }

// pattern is the pattern field's text.
func (c *composer) pattern() string { return c.inputs[fPattern].Value() }

// applies reports whether a composer field applies to the selected scope.
func (c *composer) applies(f int) bool {
	if c.isScoped() {
		return f == fPattern || f == fScope || f == fMax
	}
	return true
}

// toggle changes a toggle field by d steps; it reports false for a field
// that is not a toggle.
func (c *composer) toggle(f, d int) bool {
	switch f {
	case fScope:
		n := len(c.scopes) + 1
		c.scopeIdx = ((c.scopeIdx+d)%n + n) % n
		if !c.applies(c.field) {
			c.field = fPattern
		}
	case fCase:
		c.caseIdx = ((c.caseIdx+d)%3 + 3) % 3
	case fMode:
		c.fixed = !c.fixed
	case fWord:
		c.word = !c.word
	case fHidden:
		c.hidden = !c.hidden
	case fFollow:
		c.follow = !c.follow
	case fNoIgnore:
		c.noIgnore = !c.noIgnore
	case fRecursive:
		c.recurse = !c.recurse
	case fFuzzy:
		c.fuzzy = ((c.fuzzy+d)%5 + 5) % 5
	default:
		return false
	}
	return true
}

// nextField moves the focus d fields on, skipping those the scope hides.
func (c *composer) nextField(d int) {
	for range nFields {
		c.field = ((c.field+d)%nFields + nFields) % nFields
		if c.applies(c.field) {
			return
		}
	}
}

// walkHistory puts the previous (up) or next run pattern in the pattern
// field, keeping what was typed as the draft below the newest; it reports
// whether the field changed.
func (c *composer) walkHistory(up bool) bool {
	if len(c.history) == 0 {
		return false
	}
	if up {
		if c.histIdx == 0 {
			return false
		}
		if c.histIdx == len(c.history) {
			c.histDraft = c.pattern()
		}
		c.histIdx--
		c.inputs[fPattern].SetValue(c.history[c.histIdx])
		return true
	}
	if c.histIdx >= len(c.history) {
		return false
	}
	c.histIdx++
	if c.histIdx == len(c.history) {
		c.inputs[fPattern].SetValue(c.histDraft)
	} else {
		c.inputs[fPattern].SetValue(c.history[c.histIdx])
	}
	return true
}

// remember adds a run pattern to the history in memory, so ↑ reaches it in
// this session.
func (c *composer) remember(q string) {
	c.history = pushHistory(c.history, q)
	c.histIdx = len(c.history)
	c.histDraft = ""
}

// edit gives a key to the focused text field; it reports whether the text
// changed and whether the field had a use for the key. An edit of the pattern leaves the history walk.
func (c *composer) edit(msg tea.KeyPressMsg) (changed, used bool) {
	if !isTextField(c.field) {
		return false, false
	}
	changed, used = c.inputs[c.field].Handle(msg)
	if changed && c.field == fPattern {
		c.histIdx = len(c.history)
	}
	return changed, used
}

// setError shows an engine error beside the field it is about, read from
// the error's typed field (search.FieldOf), never parsed out of its words.
func (c *composer) setError(err error) {
	c.errField, c.errText = fPattern, err.Error()
	var te *search.ToolError
	if errors.As(err, &te) {
		c.errText = te.Message
	}
	fe, ok := search.FieldOf(err)
	if !ok {
		return
	}
	if f, ok := composerField[fe.Field]; ok {
		c.errField = f
	}
	if fe.Field == search.FieldPath && c.root != "" {
		// "escapes the sandbox root" says little without the root
		c.errText += " (sandbox root " + c.root + ")"
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

func (c *composer) clearError() { c.errField, c.errText = -1, "" }

// buildRequest turns the composer into a request; number fields that are
// not integers are reported here, before the engine sees them.
func (c *composer) buildRequest() (search.Request, bool) {
	c.clearError()
	r := search.Request{Pattern: c.inputs[fPattern].Value()}
	r.Case = search.Ptr(caseModes[c.caseIdx])
	r.FixedStrings = search.Ptr(c.fixed)
	r.WordRegexp = search.Ptr(c.word)
	r.Hidden = search.Ptr(c.hidden)
	r.Follow = search.Ptr(c.follow)
	r.NoIgnore = search.Ptr(c.noIgnore)
	r.Recursive = search.Ptr(c.recurse)
	if c.fuzzy > 0 {
		r.Fuzzy = search.Ptr(int64(c.fuzzy))
	}
	if v := strings.TrimSpace(c.inputs[fPath].Value()); v != "" {
		r.Path = search.Ptr(v)
	}
	r.IncludeGlob = splitGlobs(c.inputs[fInclude].Value())
	r.ExcludeGlob = splitGlobs(c.inputs[fExclude].Value())
	nums := []struct {
		f    int
		name string
		dst  **int64
	}{{fContext, "context", &r.Context}, {fMax, "max_results", &r.MaxResults},
		{fPerFile, "max_matches_per_file", &r.MaxMatchesPerFile}, {fTimeout, "timeout_ms", &r.TimeoutMS}}
	for _, n := range nums {
		v := strings.TrimSpace(c.inputs[n.f].Value())
		if v == "" {
			continue
		}
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			c.errField, c.errText = n.f, n.name+": must be an integer, got "+strconv.Quote(v)
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
