package index

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"hash"
	"io"
	"os"

	"github.com/vigil-dev/vigil/audit"
)

// Mark is what a change to the log is compared with: the file the chain
// was read from, the SHA-256 of the bytes verified ([0, baseEnd)), and a
// running hash of the lines read after them, taken from what was parsed
// (never re-read later, so an edit racing the read still shows as a change).
// It is stricter than a follower's cut: an entry edited in place in the
// middle keeps the size and the last line, and still shows.
type Mark struct {
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

// newMark is the mark of the file st (nil: unknown), nothing verified yet.
func newMark(st os.FileInfo) Mark { return Mark{info: st, lastOff: -1} }

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

// AppendedOnly says whether the file at path is still the one m describes
// with bytes only added after from.
func (m Mark) AppendedOnly(path string, from int64) bool {
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

// Appended is what ReadAppended read.
type Appended struct {
	From   int64 // where the read began
	Lines  []audit.Line
	End    int64 // just after the last complete line read
	Anchor audit.Anchor
	Mark   Mark // the mark extended by Lines
	// Reload says the log is not mark's with lines appended (or is small
	// enough to verify whole): verify it all again
	Reload bool
	Err    error
}

// ReadAppended reads the lines appended to the log at path since from, the
// end of what mark describes, for a chain to be extended by them. When the
// log is not mark's file with lines appended, or is at most small bytes
// long (re-verifying it whole then costs little and catches any edit), or
// broken is set (the chain is broken: every change re-verifies), it reads
// nothing and says Reload.
func ReadAppended(path string, from int64, mark Mark, small int64, broken bool) Appended {
	if broken || !mark.AppendedOnly(path, from) {
		return Appended{From: from, Reload: true}
	}
	if st, err := os.Stat(path); err == nil && st.Size() <= small {
		return Appended{From: from, Reload: true}
	}
	mark = mark.Clone()
	anchor := audit.ReadAnchor(path)
	var lines []audit.Line
	end, err := audit.Scan(path, from, func(l audit.Line) bool {
		lines = append(lines, l)
		mark.Note(l)
		return true
	})
	return Appended{From: from, Lines: lines, End: end, Anchor: anchor, Mark: mark, Err: err}
}

// Base is where the verified bytes the mark holds the hash of end, and
// whether that hash is known (the record beside the log stated it): without
// it every change verifies the log again.
func (m Mark) Base() (end int64, known bool) { return m.baseEnd, m.base != nil }
