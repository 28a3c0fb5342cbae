package auditpane

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/vigil-dev/vigil/audit"
)

// The log is read in three parts, none on the UI goroutine: the tail for the
// first frame, an index of line starts (bytes only), and the verification
// for the badge (verify.go: only what is new since the last verified start).
// Appends then extend the index and the chain by the new bytes alone.

// messages; gen ties a read to the load that asked for it
type (
	tailMsg struct {
		offs []int64
		rows []row
		end  int64
	}
	// progressMsg reports how far a streamed read is; next waits for more
	progressMsg struct {
		kind        string // "index" or "verify"
		gen         int
		done, total int64
		next        tea.Cmd
	}
	indexMsg struct {
		gen int
		indexed
	}
	indexMoreMsg struct {
		gen  int
		from int64
		indexed
	}
	verifyMsg struct {
		gen     int
		confirm bool // a second look at a head that disagreed
		verified
	}
	changedMsg struct{}
	confirmMsg struct{ gen int }
	moreMsg    struct {
		gen    int   // the verification the read extends
		from   int64 // where the read began: only a read from p.end is applied
		lines  []audit.Line
		end    int64
		anchor audit.Anchor
		mark   fileMark
		reload bool // not a pure append: read the whole log again
		err    error
	}
)

// streamed returns a command that runs work in a goroutine (started when the
// command first runs) and delivers its progress (the latest only) and then
// its result.
func streamed(kind string, gen int, work func(progress func(done, total int64)) tea.Msg) tea.Cmd {
	prog := make(chan progressMsg, 1)
	final := make(chan tea.Msg, 1)
	var start sync.Once
	var wait tea.Cmd
	wait = func() tea.Msg {
		start.Do(func() {
			go func() {
				final <- work(func(done, total int64) {
					select { // only this goroutine sends: after the drain there is room
					case <-prog:
					default:
					}
					prog <- progressMsg{kind: kind, gen: gen, done: done, total: total}
				})
			}()
		})
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
	ctx, cancel := context.WithCancel(context.Background())
	p.cancelLoad = cancel
	p.igen++
	p.indexing = true
	p.idxDone, p.idxTotal = 0, 0
	path, igen, limit := p.path, p.igen, p.inMemory
	index := streamed("index", igen, func(progress func(done, total int64)) tea.Msg {
		return indexMsg{gen: igen, indexed: scanIndex(ctx, path, 0, nil, progress, limit)}
	})
	return tea.Batch(index, p.verify(ctx, false))
}

// verify starts a verification of the whole log.
func (p *Pane) verify(ctx context.Context, confirm bool) tea.Cmd {
	p.gen++
	p.loading = true
	p.verDone, p.verTotal = 0, 0
	good := &atomic.Int64{}
	p.good = good
	path, gen := p.path, p.gen
	return streamed("verify", gen, func(progress func(done, total int64)) tea.Msg {
		return verifyMsg{gen: gen, confirm: confirm, verified: verifyLog(ctx, path, progress, good)}
	})
}

// indexMore extends the index by the bytes appended since it was read.
func (p *Pane) indexMore() tea.Cmd {
	p.idxReads++
	path, from, igen, info := p.path, p.idxEnd, p.igen, p.idxInfo
	limit := int64(-1) // grown past inMemoryLog: the bytes are read from the file
	if p.raw != nil {
		limit = p.inMemory
	}
	seen := make(map[string]bool, len(p.events))
	for _, e := range p.events {
		seen[e] = true
	}
	return func() tea.Msg {
		if st, err := os.Stat(path); err != nil || info == nil || !os.SameFile(st, info) || st.Size() < from {
			return indexMoreMsg{gen: igen, from: from, indexed: indexed{err: errShrunk}}
		}
		return indexMoreMsg{gen: igen, from: from, indexed: scanIndex(context.Background(), path, from, seen, nil, limit)}
	}
}

// smallLog is the size up to which every change re-reads and re-verifies the
// whole log (up to ~0.1 s): an edit in place anywhere is caught. Above
// it, a change that is not a pure append (the file replaced, shrunk, or its
// last known line changed) triggers the full re-read, and appends are checked
// incrementally.
var smallLog int64 = 4 << 20

// fileMark is what a change is compared with: the file the rows were read
// from, the SHA-256 of the bytes verified ([0, baseEnd)), and a running hash
// of the lines read after them, taken from what was parsed (never re-read
// later, so an edit racing the read still shows as a change).
type fileMark struct {
	info    os.FileInfo
	lastOff int64 // -1: no line read after the verified bytes
	last    [32]byte
	baseEnd int64
	base    []byte // SHA-256 of [0, baseEnd); nil: unknown
	// prefix hashes the lines read after baseEnd as the bytes they are (a
	// valid line is its entry's canonical bytes); nil once one was not
	// valid, or when base is unknown. Shared read-only: clone before writing.
	prefix hash.Hash
}

// setBase records the verified bytes [0, end)'s hash (nil: unknown) and starts the
// hash of what is read after them.
func (m *fileMark) setBase(end int64, sum []byte) {
	m.baseEnd, m.base, m.prefix = end, sum, nil
	if sum != nil {
		m.prefix = sha256.New()
	}
}

// clone is m with a prefix hash of its own to extend.
func (m fileMark) clone() fileMark {
	if m.prefix == nil {
		return m
	}
	st, err := m.prefix.(encoding.BinaryMarshaler).MarshalBinary()
	h := sha256.New()
	if err != nil || h.(encoding.BinaryUnmarshaler).UnmarshalBinary(st) != nil {
		m.prefix = nil
		return m
	}
	m.prefix = h
	return m
}

// confirmDelay is how long a head that disagrees with the log is given to
// catch up before the badge says so: an append moves the head just after the
// log, so a read between the two (and a seal or a cut log's repair) sees an
// old head for a moment.
const confirmDelay = 150 * time.Millisecond

func (m *fileMark) note(l audit.Line) {
	m.lastOff = l.Offset
	if l.Err != nil {
		m.last = [32]byte{} // the chain is broken: every change reloads anyway
		m.prefix = nil
		return
	}
	b, _ := l.Entry.Line() // a valid line is its entry's canonical bytes
	m.last = sha256.Sum256(b)
	if m.prefix != nil {
		m.prefix.Write(b)
		m.prefix.Write([]byte{'\n'})
	}
}

// appendedOnly says whether the file at path is still the one mark describes
// with bytes only added after from.
func (m fileMark) appendedOnly(path string, from int64) bool {
	st, err := os.Stat(path)
	if err != nil || m.info == nil || !os.SameFile(st, m.info) || st.Size() < from {
		return false
	}
	if m.prefix == nil || m.base == nil || from < m.baseEnd {
		return from == 0 && m.lastOff < 0 && m.baseEnd == 0
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if m.lastOff >= 0 { // a cheap look at the last line read before the whole
		b := make([]byte, from-m.lastOff)
		if _, err := f.ReadAt(b, m.lastOff); err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			return false
		}
		if sha256.Sum256(b[:len(b)-1]) != m.last {
			return false
		}
	}
	// and every byte before it as verified and read: an entry edited in
	// place in the middle keeps the size and the last line
	base := sha256.New()
	if n, err := io.Copy(base, io.NewSectionReader(f, 0, m.baseEnd)); err != nil || n != m.baseEnd || !bytes.Equal(base.Sum(nil), m.base) {
		return false
	}
	after := sha256.New()
	if n, err := io.Copy(after, io.NewSectionReader(f, m.baseEnd, from-m.baseEnd)); err != nil || n != from-m.baseEnd {
		return false
	}
	return bytes.Equal(after.Sum(nil), m.prefix.Sum(nil))
}

func (p *Pane) readMore() tea.Cmd {
	p.reads++
	path, from, gen, mark, small := p.path, p.end, p.gen, p.mark.clone(), p.smallLog
	broken := p.broken() != nil
	return func() tea.Msg {
		if broken || !mark.appendedOnly(path, from) {
			return moreMsg{gen: gen, from: from, reload: true}
		}
		if st, err := os.Stat(path); err == nil && st.Size() <= small {
			return moreMsg{gen: gen, from: from, reload: true}
		}
		anchor := audit.ReadAnchor(path)
		var lines []audit.Line
		end, err := audit.Scan(path, from, func(l audit.Line) bool {
			lines = append(lines, l)
			mark.note(l)
			return true
		})
		return moreMsg{gen: gen, from: from, lines: lines, end: end, anchor: anchor, mark: mark, err: err}
	}
}

// confirmLater asks for a second full read after confirmDelay, unless
// another read happens first.
func (p *Pane) confirmLater() tea.Cmd {
	gen := p.gen
	return tea.Tick(confirmDelay, func(time.Time) tea.Msg { return confirmMsg{gen: gen} })
}

// broken is the first thing wrong with the log, or nil.
func (p *Pane) broken() *audit.Report {
	switch {
	case p.chain == nil:
		return nil
	case p.chain.Bad() != nil:
		return p.chain.Bad()
	case p.anchor != nil:
		return p.anchor
	default:
		return p.gone
	}
}

// lostSince is what became of the chain this screen last showed verified,
// given the freshly read one (entry #0's hash first), or nil: still there,
// perhaps longer, or cut on purpose (sealed).
func (p *Pane) lostSince(first string) *audit.Report {
	n := p.chain.Len()
	switch {
	case p.seenN == 0 || p.chain.Bad() != nil:
		return nil
	case n == 0:
		return &audit.Report{Index: 0, Reason: audit.ReasonTruncated,
			Detail: fmt.Sprintf("the log this screen verified (%d entries) is gone, with its head", p.seenN)}
	case first != p.seenFirst:
		return &audit.Report{Index: 0, Reason: audit.ReasonReplaced,
			Detail: fmt.Sprintf("entry #0 is not the one of the log this screen verified (%d entries): replaced, with its head", p.seenN)}
	case n < p.seenN && len(p.chain.Sealed()) <= p.seenSealed:
		return &audit.Report{Index: n, Reason: audit.ReasonTruncated,
			Detail: fmt.Sprintf("the log ends at %d entries but this screen verified %d: cut, with its head", n, p.seenN)}
	}
	return nil
}

// noteSeen remembers the chain on screen as verified.
func (p *Pane) noteSeen(first string) {
	if p.broken() == nil {
		p.seenN, p.seenSealed = p.chain.Len(), len(p.chain.Sealed())
		if first != "" {
			p.seenFirst = first
		}
	}
}
