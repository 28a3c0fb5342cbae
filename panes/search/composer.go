package searchpane

// The composer: the fields on screen, turned into a search.Request, and
// the errors placed beside them. It runs nothing (runner.go does).

import (
	"errors"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/exec/search"
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

var caseModes = []string{"smart", "sensitive", "insensitive"}

func (p *Pane) applyInitial(o Options) {
	r := o.Initial
	cfg := o.Search.Search
	p.composer.inputs[fPattern].SetValue(r.Pattern)
	if r.Case != nil {
		for i, c := range caseModes {
			if c == *r.Case {
				p.composer.caseIdx = i
			}
		}
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&p.composer.fixed, r.FixedStrings)
	set(&p.composer.word, r.WordRegexp)
	set(&p.composer.hidden, r.Hidden)
	set(&p.composer.follow, r.Follow)
	set(&p.composer.noIgnore, r.NoIgnore)
	set(&p.composer.recurse, r.Recursive)
	if r.Fuzzy != nil {
		p.composer.fuzzy = int(*r.Fuzzy)
	}
	if r.Path != nil {
		p.composer.inputs[fPath].SetValue(*r.Path)
	}
	inc := r.IncludeGlob
	if inc == nil {
		inc = r.Glob
	}
	p.composer.inputs[fInclude].SetValue(strings.Join(inc, ","))
	p.composer.inputs[fExclude].SetValue(strings.Join(r.ExcludeGlob, ","))
	num := func(f int, v *int64, def int64, keepEmpty bool) {
		switch {
		case v != nil:
			p.composer.inputs[f].SetValue(strconv.FormatInt(*v, 10))
		case !keepEmpty:
			p.composer.inputs[f].SetValue(strconv.FormatInt(def, 10))
		}
	}
	num(fContext, r.Context, 0, false)
	num(fMax, r.MaxResults, max(cfg.DefaultMaxResults, 1), false)
	num(fPerFile, r.MaxMatchesPerFile, 0, true)
	num(fTimeout, r.TimeoutMS, max(cfg.DefaultTimeoutMS, 1), false)
	for i, sc := range o.Scopes {
		if sc.Name == o.InitialScope && o.InitialScope != "" {
			p.composer.scopeIdx = i + 1
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

// visible reports whether a composer field applies to the selected scope.
func (p *Pane) applies(f int) bool {
	if p.isScoped() {
		return f == fPattern || f == fScope || f == fMax
	}
	return true
}

// cycle changes a toggle field by d steps and re-runs (debounced).
func (p *Pane) cycle(f, d int) tea.Cmd {
	switch f {
	case fScope:
		n := len(p.opts.Scopes) + 1
		p.composer.scopeIdx = ((p.composer.scopeIdx+d)%n + n) % n
		p.clearResults()
		if !p.applies(p.composer.field) {
			p.composer.field = fPattern
		}
	case fCase:
		p.composer.caseIdx = ((p.composer.caseIdx+d)%3 + 3) % 3
	case fMode:
		p.composer.fixed = !p.composer.fixed
	case fWord:
		p.composer.word = !p.composer.word
	case fHidden:
		p.composer.hidden = !p.composer.hidden
	case fFollow:
		p.composer.follow = !p.composer.follow
	case fNoIgnore:
		p.composer.noIgnore = !p.composer.noIgnore
	case fRecursive:
		p.composer.recurse = !p.composer.recurse
	case fFuzzy:
		p.composer.fuzzy = ((p.composer.fuzzy+d)%5 + 5) % 5
	default:
		return nil
	}
	return p.changed()
}

func (p *Pane) nextField(d int) {
	for range nFields {
		p.composer.field = ((p.composer.field+d)%nFields + nFields) % nFields
		if p.applies(p.composer.field) {
			return
		}
	}
}

func (p *Pane) walkHistory(up bool) tea.Cmd {
	if len(p.composer.history) == 0 {
		return nil
	}
	if up {
		if p.composer.histIdx == 0 {
			return nil
		}
		if p.composer.histIdx == len(p.composer.history) {
			p.composer.histDraft = p.composer.inputs[fPattern].Value()
		}
		p.composer.histIdx--
		p.composer.inputs[fPattern].SetValue(p.composer.history[p.composer.histIdx])
	} else {
		if p.composer.histIdx >= len(p.composer.history) {
			return nil
		}
		p.composer.histIdx++
		if p.composer.histIdx == len(p.composer.history) {
			p.composer.inputs[fPattern].SetValue(p.composer.histDraft)
		} else {
			p.composer.inputs[fPattern].SetValue(p.composer.history[p.composer.histIdx])
		}
	}
	return p.changed()
}

// setError shows an engine error beside the field it is about, read from
// the error's typed field (search.FieldOf), never parsed out of its words.
func (p *Pane) setError(err error) {
	p.composer.errField, p.composer.errText = fPattern, err.Error()
	var te *search.ToolError
	if errors.As(err, &te) {
		p.composer.errText = te.Message
	}
	fe, ok := search.FieldOf(err)
	if !ok {
		return
	}
	if f, ok := composerField[fe.Field]; ok {
		p.composer.errField = f
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

func (p *Pane) clearError() { p.composer.errField, p.composer.errText = -1, "" }

// buildRequest turns the composer into a request; number fields that are
// not integers are reported here, before the engine sees them.
func (p *Pane) buildRequest() (search.Request, bool) {
	p.clearError()
	r := search.Request{Pattern: p.composer.inputs[fPattern].Value()}
	r.Case = search.Ptr(caseModes[p.composer.caseIdx])
	r.FixedStrings = search.Ptr(p.composer.fixed)
	r.WordRegexp = search.Ptr(p.composer.word)
	r.Hidden = search.Ptr(p.composer.hidden)
	r.Follow = search.Ptr(p.composer.follow)
	r.NoIgnore = search.Ptr(p.composer.noIgnore)
	r.Recursive = search.Ptr(p.composer.recurse)
	if p.composer.fuzzy > 0 {
		r.Fuzzy = search.Ptr(int64(p.composer.fuzzy))
	}
	if v := strings.TrimSpace(p.composer.inputs[fPath].Value()); v != "" {
		r.Path = search.Ptr(v)
	}
	r.IncludeGlob = splitGlobs(p.composer.inputs[fInclude].Value())
	r.ExcludeGlob = splitGlobs(p.composer.inputs[fExclude].Value())
	nums := []struct {
		f    int
		name string
		dst  **int64
	}{{fContext, "context", &r.Context}, {fMax, "max_results", &r.MaxResults},
		{fPerFile, "max_matches_per_file", &r.MaxMatchesPerFile}, {fTimeout, "timeout_ms", &r.TimeoutMS}}
	for _, n := range nums {
		v := strings.TrimSpace(p.composer.inputs[n.f].Value())
		if v == "" {
			continue
		}
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			p.composer.errField, p.composer.errText = n.f, n.name+": must be an integer, got "+strconv.Quote(v)
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
