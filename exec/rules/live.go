package rules

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Live is the rule set a long-running queue asks: the config's rules
// (compiled once) and the store's runtime rules, reloaded when another
// process (vigil rules add|revoke) changes the store. It implements the
// queue's Rules (approval.Options.Rules).
//
// Each Decide stats the store's generation file (about a microsecond);
// only when it changed, or was written within the last ReloadWindow (a
// file system's timestamps are coarser than two quick changes, and an
// inode number can be reused), is the file read, and the runtime rules are
// compiled again only when its number moved. So a rule revoked before
// `vigil rules revoke` returned never decides a task submitted after.
//
// A rule stops matching at its expiry whether or not it was swept (the
// engine compares ExpiresAt with the decision's moment); the first Decide
// after an expiry also sweeps the store, writing its rule_expired entry.
type Live struct {
	config *Set // nil: no config rules
	store  *Store
	opts   Options
	log    *slog.Logger
	gen    string // the generation file's path

	mu        sync.Mutex // serialises reloads and sweeps
	cur       atomic.Pointer[liveState]
	sweepNext time.Time // no sweep before (after a failed one)
}

// ReloadWindow is how recent a change to the generation file makes Decide
// read it rather than trust its stat.
const ReloadWindow = 2 * time.Second

type liveState struct {
	stamp   genStamp
	gen     uint64
	runtime *Set // nil: no runtime rules
	// expiry is the earliest expiry among the active runtime rules: the
	// next sweep is due then (zero: none).
	expiry time.Time
	// run is the vigil serve run some loaded rules are bound to (zero:
	// none is): when its process is gone, they no longer decide.
	run Run
}

// genStamp is what a stat of the generation file says.
type genStamp struct {
	ino, size     uint64
	mtime         int64
	exists        bool
	recentAtCheck bool
}

// NewLive builds the live set over config (nil when there are no config
// rules) and store, loading the runtime rules now. o is the config set's
// options (the time zone and cost limit apply to runtime rules too).
func NewLive(config *Set, store *Store, o Options, log *slog.Logger) (*Live, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Live{config: config, store: store, opts: o, log: log, gen: filepath.Join(store.Dir(), GenerationFile)}
	l.opts.Devices = nil
	l.cur.Store(&liveState{})
	if _, err := store.Sweep(); err != nil {
		log.Warn("rules: sweeping expired runtime rules", "err", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reload(l.stat())
	return l, nil
}

// Store is the runtime rules' store.
func (l *Live) Store() *Store { return l.store }

// Config is the config's rule set (nil without config rules).
func (l *Live) Config() *Set { return l.config }

// Decide is the verdict of the config's and the runtime rules together:
// strictest wins across both (config rules first among equals), as one
// set would decide.
func (l *Live) Decide(f Facts, now time.Time) Verdict {
	st := l.refresh()
	if !st.expiry.IsZero() && !now.Before(st.expiry) {
		st = l.sweep(now)
	}
	switch {
	case st.runtime == nil && l.config == nil:
		return verdict(&f, nil)
	case st.runtime == nil:
		return l.config.Decide(f, now)
	case l.config == nil:
		return st.runtime.Decide(f, now)
	}
	a, b := l.config.Decide(f, now), st.runtime.Decide(f, now)
	switch {
	case len(b.Matched) == 0:
		return a
	case len(a.Matched) == 0:
		return b
	}
	hits := make([]found, 0, len(a.Matched)+len(b.Matched))
	for _, m := range a.Matched {
		hits = append(hits, found{len(hits), m})
	}
	for _, m := range b.Matched {
		hits = append(hits, found{len(hits), m})
	}
	return verdict(&f, hits)
}

// Runtime lists the runtime rules Decide currently uses.
func (l *Live) Runtime() []Rule {
	st := l.refresh()
	if st.runtime == nil {
		return nil
	}
	return st.runtime.Rules()
}

// refresh reloads the runtime rules when the generation file says they
// changed; it returns the state to decide with.
func (l *Live) refresh() *liveState {
	st := l.cur.Load()
	stamp := l.stat()
	if st.run.PID != 0 && !st.run.alive() {
		stamp = genStamp{} // the run ended without a word (a crash): load without its rules
	} else if stamp == st.stamp && !stamp.recentAtCheck {
		return st
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reload(stamp)
	return l.cur.Load()
}

// reload is reloadLocked failing safe: when the store cannot be read (a
// file damaged or unreadable), no runtime rule decides — the person
// decides what they would have — until the store changes again.
func (l *Live) reload(stamp genStamp) {
	if err := l.reloadLocked(stamp); err != nil {
		l.log.Error("rules: the runtime rules cannot be loaded; none decides until the store changes", "err", err)
		l.cur.Store(&liveState{stamp: stamp, gen: ^uint64(0)})
	}
}

// stat reads the generation file's identity.
func (l *Live) stat() genStamp { return statGen(l.gen) }

// reloadLocked loads and compiles the runtime rules when the generation
// number moved (or nothing was loaded yet).
func (l *Live) reloadLocked(stamp genStamp) error {
	old := l.cur.Load()
	n, _ := readGeneration(l.gen)
	if old.stamp.exists && n == old.gen && stamp.exists {
		next := *old
		next.stamp = stamp
		l.cur.Store(&next)
		return nil
	}
	active, err := l.store.Active()
	if err != nil {
		return err
	}
	next := &liveState{stamp: stamp, gen: n}
	if run, alive := readRun(l.store.Dir()); alive {
		for _, a := range active {
			if a.Run != "" {
				next.run = run
			}
		}
	}
	if len(active) > 0 {
		defs := make([]Def, 0, len(active))
		for _, a := range active {
			if l.config != nil && l.config.has(a.ID) {
				l.log.Warn("rules: a runtime rule has a config rule's id; ignored", "rule", a.ID)
				continue
			}
			defs = append(defs, a.Def())
			if next.expiry.IsZero() || a.ExpiresAt.Before(next.expiry) {
				next.expiry = a.ExpiresAt
			}
		}
		set, err := Compile(defs, l.opts, l.store.now())
		if err != nil {
			return err
		}
		next.runtime = set
	}
	l.cur.Store(next)
	return nil
}

// sweep writes the rule_expired entries that are due and reloads.
func (l *Live) sweep(now time.Time) *liveState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.sweepNext) {
		return l.cur.Load()
	}
	if _, err := l.store.Sweep(); err != nil {
		l.log.Warn("rules: sweeping expired runtime rules", "err", err)
		l.sweepNext = now.Add(time.Minute)
		return l.cur.Load()
	}
	l.reload(genStamp{})
	if st := l.cur.Load(); !st.expiry.IsZero() && !now.Before(st.expiry) {
		l.sweepNext = now.Add(time.Minute) // the store's clock is behind this one: do not sweep on every decision
	}
	return l.cur.Load()
}

// Run writes rule_expired entries on time in a long-running process
// (vigil serve) even when no task arrives: every interval it checks the
// earliest expiry among the loaded runtime rules and sweeps when it has
// passed. It returns when ctx is done. Without it, an expiry is still
// honoured at once; only its entry waits for the next decision or command.
func (l *Live) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := l.store.now()
		if st := l.refresh(); !st.expiry.IsZero() && !now.Before(st.expiry) {
			l.sweep(now)
		}
	}
}

// has says whether the set has a rule with this id.
func (s *Set) has(id string) bool {
	for _, r := range s.rules {
		if r.ID == id {
			return true
		}
	}
	return false
}
