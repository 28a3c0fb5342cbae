package index

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"hash"
	"io"
	"os"
	"sync"

	"github.com/vigil-dev/vigil/audit"
)

// Mark is what the chain a viewer verified stands for, beyond what a
// follower checks: the SHA-256 of the bytes verified ([0, baseEnd)) and a
// running hash of the lines read after them, taken from what was parsed
// (never re-read later, so an edit racing the read still shows). The
// follower (audit.Follower) catches a log replaced, cut, or changed at its
// last line; the mark catches an entry edited in place further back, which
// keeps the size and the last line and is no cut to a follower.
type Mark struct {
	read    bool // a line was read after the verified bytes
	baseEnd int64
	base    []byte // SHA-256 of [0, baseEnd); nil: unknown
	// prefix hashes the lines read after baseEnd as the bytes they are (a
	// valid line is its entry's canonical bytes); nil once one was not
	// valid, or when base is unknown. Shared read-only: clone before writing.
	prefix hash.Hash
}

// setBase records the verified bytes [0, end)'s hash (nil: unknown) and starts the
// hash of what is read after them.
func (m *Mark) setBase(end int64, sum []byte) {
	m.baseEnd, m.base, m.prefix = end, sum, nil
	if sum != nil {
		m.prefix = sha256.New()
	}
}

// Clone is m with a running hash of its own to extend.
func (m Mark) Clone() Mark {
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

// Note records a line read after the verified bytes (on a clone: see Clone).
func (m *Mark) Note(l audit.Line) {
	m.read = true
	if l.Err != nil {
		m.prefix = nil // the chain is broken: every change reloads anyway
		return
	}
	if m.prefix != nil {
		b, _ := l.Entry.Line() // a valid line is its entry's canonical bytes
		m.prefix.Write(b)
		m.prefix.Write([]byte{'\n'})
	}
}

// Intact says whether the log at path still holds, in [0, upTo), the bytes
// m stands for: those verified, then the lines read after them. An entry
// edited in place in the middle keeps the size and the last line: only the
// hashes see it.
func (m Mark) Intact(path string, upTo int64) bool {
	if m.prefix == nil || m.base == nil || upTo < m.baseEnd {
		return upTo == 0 && !m.read && m.baseEnd == 0
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	base := sha256.New()
	if n, err := io.Copy(base, io.NewSectionReader(f, 0, m.baseEnd)); err != nil || n != m.baseEnd || !bytes.Equal(base.Sum(nil), m.base) {
		return false
	}
	after := sha256.New()
	if n, err := io.Copy(after, io.NewSectionReader(f, m.baseEnd, upTo-m.baseEnd)); err != nil || n != upTo-m.baseEnd {
		return false
	}
	return bytes.Equal(after.Sum(nil), m.prefix.Sum(nil))
}

// Base is where the verified bytes the mark holds the hash of end, and
// whether that hash is known (the record beside the log stated it): without
// it every change verifies the log again.
func (m Mark) Base() (end int64, known bool) { return m.baseEnd, m.base != nil }

// Cursor is an audit.Follower that a viewer's background reads share, one
// at a time.
type Cursor struct {
	mu sync.Mutex
	f  *audit.Follower
}

// NewCursor follows the log at path from offset from (a line start: the end
// of what was indexed or verified).
func NewCursor(path string, from int64) *Cursor {
	return &Cursor{f: audit.NewFollower(path, from)}
}

func (c *Cursor) read() (audit.Batch, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f.Read()
}

// Appended is what ReadAppended read.
type Appended struct {
	From   int64 // where the read began
	Lines  []audit.Line
	End    int64 // just after the last complete line read
	More   bool  // complete lines past End are left for the next read
	Anchor audit.Anchor
	Mark   Mark // the mark extended by Lines
	// Reload says the log is not the one verified with lines appended (the
	// follower saw a cut, or the mark a rewrite), or is small enough to
	// verify whole: verify it all again
	Reload bool
	Err    error
}

// ReadAppended reads the lines appended to the log since the chain's end
// (where c stands), for the chain to be extended by them. It says Reload,
// and reads nothing further, when the follower finds a cut, when the mark
// finds the bytes before them rewritten, when the log is at most small
// bytes long (re-verifying it whole then costs little and catches any
// edit), or when broken is set (the chain is broken: every change
// re-verifies).
func ReadAppended(c *Cursor, mark Mark, small int64, broken bool) Appended {
	path := c.f.Path()
	// the head before the lines: an append moves it just after the log, so
	// the lines read then reach at least as far as it says
	anchor := audit.ReadAnchor(path)
	b, err := c.read()
	out := Appended{From: b.From, End: b.End}
	switch {
	case err != nil:
		out.Err = err
		return out
	case b.Cut || broken:
		out.Reload = true
		return out
	}
	if st, err := os.Stat(path); err == nil && st.Size() <= small {
		out.Reload = true
		return out
	}
	if !mark.Intact(path, b.From) {
		out.Reload = true
		return out
	}
	mark = mark.Clone()
	out.Lines = b.Lines()
	for _, l := range out.Lines {
		mark.Note(l)
	}
	out.More, out.Anchor, out.Mark = b.More, anchor, mark
	return out
}
