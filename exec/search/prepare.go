package search

import (
	"context"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/text/unicode/norm"
)

// prepared is a request ready to run.
type prepared struct {
	e                effective
	pl               place
	be               BackendInfo
	pat              string
	fixed            bool
	deny             globSet
	denyGlobs        []string
	include, exclude globSet
	env              []string

	proof      *patternProof // the ordered path's pattern check
	startKnown atomic.Bool   // a backend run has finished: its start-up cost is known
	heavyStart atomic.Bool   // ...and it was large (ugrep compiling a Unicode class)
}

func prepare(ctx context.Context, req Request, opts Options) (*prepared, error) {
	p, err := prepareUnchecked(req, opts)
	if err != nil {
		return nil, err
	}
	if err := checkPattern(ctx, p.be, p.e, p.pat, p.fixed, p.env); err != nil {
		return nil, err
	}
	return p, nil
}

// prepareUnchecked is prepare without asking the backend to compile the
// pattern, which Run does while the walk and the first chunks start.
func prepareUnchecked(req Request, opts Options) (*prepared, error) {
	e, err := validateFields(req, opts)
	if err != nil {
		return nil, err
	}
	p := &prepared{e: e, env: opts.Env}
	if p.env == nil {
		p.env = os.Environ()
	}
	p.denyGlobs = opts.Deny
	nfcDeny := make([]string, len(opts.Deny))
	for i, g := range opts.Deny {
		nfcDeny[i] = norm.NFC.String(g) // names are also matched in NFC
	}
	if p.deny, err = compileDeny(nfcDeny); err != nil {
		return nil, execFailed("sandbox.deny: %v", err)
	}
	p.include, _ = compileSet(e.include)
	p.exclude, _ = compileSet(e.exclude)
	if p.pl, err = resolvePath(req.Path, opts, p.deny); err != nil {
		return nil, err
	}
	if p.be, err = selectBackend(opts); err != nil {
		return nil, err
	}
	if e.fuzzy > 0 && p.be.Name != "ugrep" {
		return nil, badField(FieldFuzzy, "not supported by the %s backend; install ugrep or omit fuzzy", p.be.Name)
	}
	p.pat, p.fixed = e.backendPattern(p.be.Name)
	if p.be.Name == "ugrep" {
		if p.pat, p.fixed, err = ugrepPattern(p.pat, p.fixed); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Validate checks a request without searching: schema rules, caps, the
// sandbox path, backend availability, fuzzy support and the regex (by asking
// the backend to compile it). It returns a *ToolError or nil.
func Validate(req Request, opts Options) error {
	_, err := prepare(context.Background(), req, opts)
	return err
}

// patternProof settles whether the backend accepts the pattern. Any
// backend run that exits with 0 or 1 has compiled it, so the ordered path
// starts no process just for the check unless a run fails (exit 2: was it
// the pattern?) or no run happens at all.
type patternProof struct {
	once  sync.Once
	done  chan struct{}
	err   error
	check func() error
}

func newPatternProof(check func() error) *patternProof {
	return &patternProof{done: make(chan struct{}), check: check}
}

// accepted records a backend run that compiled the pattern.
func (pp *patternProof) accepted() {
	if pp != nil {
		pp.once.Do(func() { close(pp.done) })
	}
}

// verify runs the check itself, unless already settled.
func (pp *patternProof) verify() {
	if pp != nil {
		pp.once.Do(func() { pp.err = pp.check(); close(pp.done) })
	}
}
