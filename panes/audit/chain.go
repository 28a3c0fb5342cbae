package auditpane

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
	"github.com/vigil-dev/vigil/audit/index"
)

// chainState is the child that holds the badge: the chain verified so far
// (audit/index verifies it and extends it by appended lines) and what the
// screen last showed verified.
type chainState struct {
	end     int64 // file offset after the last line fed to the chain
	chain   *audit.Chain
	anchor  *audit.Report // the head disagrees with the chain
	done    int64         // the verification's progress
	total   int64
	good    *atomic.Int64 // lines the latest verification (done or in flight) found valid: the filter trusts them
	seen    index.Seen    // the chain this screen last showed verified
	gone    *audit.Report // the log is no longer the one seen
	mark    index.Mark    // the bytes the chain stands for, by their hashes
	fol     *index.Cursor // follows the log from end: appends extend the chain
	gen     int           // generation of the latest verification
	loading bool          // a verification is in flight
	pending bool          // a change arrived while a read ran
	reads   int           // incremental reads in flight
	loadErr error
}

// messages of the verification; gen ties a read to the load that asked for it
type (
	// progressMsg reports how far a streamed read is; next waits for more
	progressMsg struct {
		kind        string // "index" or "verify"
		gen         int
		done, total int64
		next        tea.Cmd
	}
	verifyMsg struct {
		gen     int
		confirm bool // a second look at a head that disagreed
		index.Verification
	}
	changedMsg struct{}
	confirmMsg struct{ gen int }
	moreMsg    struct {
		gen int // the verification the read extends
		index.Appended
	}
)

// confirmDelay is how long a head that disagrees with the log is given to
// catch up before the badge says so: an append moves the head just after the
// log, so a read between the two (and a seal or a cut log's repair) sees an
// old head for a moment.
const confirmDelay = 150 * time.Millisecond

// streamed returns a command that runs work as one of the pane's goroutines
// (started when the command first runs) and delivers its progress (the
// latest only) and then its result; nothing once the pane is closed.
func (l *life) streamed(kind string, gen int, work func(progress func(done, total int64)) tea.Msg) tea.Cmd {
	prog := make(chan progressMsg, 1)
	final := make(chan tea.Msg, 1)
	var start sync.Once
	started := false
	var wait tea.Cmd
	wait = func() tea.Msg {
		start.Do(func() {
			if started = l.enter(); !started {
				return
			}
			go func() {
				defer l.leave()
				final <- work(func(done, total int64) {
					select { // only this goroutine sends: after the drain there is room
					case <-prog:
					default:
					}
					prog <- progressMsg{kind: kind, gen: gen, done: done, total: total}
				})
			}()
		})
		if !started {
			return nil
		}
		select {
		case m := <-final:
			return m
		case m := <-prog:
			m.next = wait
			return m
		}
	}
	return wait
}

// reload reads the whole log again: the index and the chain, cancelling any
// read of the previous load.
func (p *Pane) reload() tea.Cmd {
	if p.cancelLoad != nil {
		p.cancelLoad()
	}
	ctx, cancel := context.WithCancel(p.life.ctx)
	p.cancelLoad = cancel
	t := &p.table
	t.gen++
	t.indexing = true
	t.done, t.total = 0, 0
	path, igen, limit := p.path, t.gen, p.inMemory
	scan := p.life.streamed("index", igen, func(progress func(done, total int64)) tea.Msg {
		return indexMsg{gen: igen, Scanned: index.Scan(ctx, path, 0, nil, progress, limit)}
	})
	return tea.Batch(scan, p.verify(ctx, false))
}

// verify starts a verification of the whole log.
func (p *Pane) verify(ctx context.Context, confirm bool) tea.Cmd {
	v := &p.ver
	v.gen++
	v.loading = true
	v.done, v.total = 0, 0
	good := &atomic.Int64{}
	v.good = good
	path, gen := p.path, v.gen
	return p.life.streamed("verify", gen, func(progress func(done, total int64)) tea.Msg {
		return verifyMsg{gen: gen, confirm: confirm, Verification: index.Verify(ctx, path, progress, good)}
	})
}

func (p *Pane) applyVerify(msg verifyMsg) tea.Cmd {
	v := &p.ver
	if msg.gen != v.gen {
		return nil // a newer verification is coming
	}
	v.loading = false
	v.loadErr = msg.Err
	v.end, v.chain, v.mark, v.anchor = msg.End, msg.Chain, msg.Mark, msg.Anchor
	v.fol = index.NewCursor(p.path, msg.End)
	p.noteDamaged()
	gone := v.seen.LostSince(v.chain, msg.First)
	var confirm tea.Cmd
	if (v.anchor != nil || gone != nil) && !msg.confirm {
		v.anchor, gone, confirm = nil, nil, p.confirmLater()
	}
	v.gone = gone
	if confirm == nil {
		v.noteSeen(msg.First)
	}
	if gone != nil {
		// a confirmed loss: keep what this screen saw beside the log, so the
		// next start finds the cut too (until a seal)
		confirm = p.holdSeen()
	}
	if v.pending {
		v.pending = false
		return tea.Batch(confirm, p.readMore())
	}
	return confirm
}

// holdSeen writes the chain this screen last showed verified into the
// record beside the log (index.Seen.Hold), off the UI goroutine.
func (p *Pane) holdSeen() tea.Cmd {
	seen, path := p.ver.seen, p.path
	return p.life.cmd(func() tea.Msg {
		_ = seen.Hold(path) // a record that cannot be written leaves the break to this session
		return nil
	})
}

// readMore reads what was appended since the chain's end, to extend it.
func (p *Pane) readMore() tea.Cmd {
	v := &p.ver
	v.reads++
	fol, gen, mark, small := v.fol, v.gen, v.mark, p.smallLog
	broken := v.broken() != nil
	return p.life.cmd(func() tea.Msg {
		return moreMsg{gen: gen, Appended: index.ReadAppended(fol, mark, small, broken)}
	})
}

func (p *Pane) applyMoreMsg(msg moreMsg) tea.Cmd {
	v := &p.ver
	v.reads = max(v.reads-1, 0)
	cmd := p.applyMore(msg)
	v.pending = v.pending || msg.More && msg.gen == v.gen
	if v.pending && v.reads == 0 && !v.loading {
		v.pending = false
		cmd = tea.Batch(cmd, p.readMore())
	}
	return cmd
}

// applyMore applies an incremental read to the chain.
func (p *Pane) applyMore(msg moreMsg) tea.Cmd {
	v := &p.ver
	if msg.gen != v.gen || v.loading {
		return nil // a verification since (or in flight) covers it
	}
	if msg.Reload {
		return p.reload()
	}
	if msg.From != v.end {
		// an overlapping read (two change signals in a burst): drop it,
		// and read again if it saw further than what was applied
		if msg.End > v.end {
			return p.readMore()
		}
		return nil
	}
	if msg.Err == nil && msg.End >= v.end {
		for _, l := range msg.Lines {
			v.chain.FeedParsed(l.Entry, l.Err)
		}
		if v.chain.Bad() == nil {
			v.good.Store(v.chain.Len())
		}
		v.end, v.mark = msg.End, msg.Mark
		if v.chain.CheckAnchor(msg.Anchor) != nil {
			return p.confirmLater()
		}
		first := ""
		if msg.From == 0 && len(msg.Lines) > 0 {
			first = msg.Lines[0].Entry.Hash
		}
		v.noteSeen(first)
	}
	return nil
}

// confirmLater asks for a second full read after confirmDelay, unless
// another read happens first.
func (p *Pane) confirmLater() tea.Cmd {
	gen := p.ver.gen
	return tea.Tick(confirmDelay, func(time.Time) tea.Msg { return confirmMsg{gen: gen} })
}

// broken is the first thing wrong with the log, or nil.
func (v *chainState) broken() *audit.Report {
	switch {
	case v.chain == nil:
		return nil
	case v.chain.Bad() != nil:
		return v.chain.Bad()
	case v.anchor != nil:
		return v.anchor
	default:
		return v.gone
	}
}

// noteSeen remembers the chain on screen as verified.
func (v *chainState) noteSeen(first string) {
	if v.broken() == nil {
		v.seen.Note(v.chain, first)
	}
}
