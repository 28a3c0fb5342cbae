package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// DamagedError is why Append refused to grow the log: its end is not the one
// audit.log.head recorded (entries were cut, replaced or edited), so an entry
// written now would bury the damage. Nothing was appended. Callers that decide
// (approve, deny) fail closed on it; the CLI exits 3. `vigil audit seal` is the
// one way on.
type DamagedError struct {
	Index  int64  // 0-based index of the first entry cut or altered; -1 when unknown
	Reason string // what was found, in words
}

func (e *DamagedError) Error() string {
	at := "at its end"
	if e.Index >= 0 {
		at = fmt.Sprintf("at #%d", e.Index)
	}
	return fmt.Sprintf("audit log cut or altered %s: %s; nothing was appended "+
		"(run `vigil audit verify`; `vigil audit seal --reason R` records the break and lets the log grow again)", at, e.Reason)
}

// head is the anchor written after every append (audit.log.head): the last
// entry's seq and hash, and the log's size in bytes just after that entry.
// Without it, deleting the last line would leave a shorter chain that still
// verifies. Heads written before Size existed have Size 0.
type head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	Size int64  `json:"size,omitempty"`
}

type headState int

const (
	headMissing headState = iota // no head file
	headBlank                    // empty or NUL-filled: a rename a power cut did not persist
	headGarbage                  // present but not a head
	headOK
)

func loadHead(logPath string) (head, headState) {
	hb, err := readSmall(HeadPath(logPath), 4096)
	if errors.Is(err, os.ErrNotExist) {
		return head{}, headMissing
	}
	if err != nil {
		return head{}, headGarbage
	}
	if len(bytes.Trim(hb, "\x00 \t\r\n")) == 0 {
		return head{}, headBlank
	}
	var h head
	if json.Unmarshal(hb, &h) != nil || h.Seq < 0 || h.Size < 0 {
		return head{}, headGarbage
	}
	return h, headOK
}

// checkTail is the check every append makes before it writes: the log's end
// must be the one its head recorded. It costs one line read (plus the lines a
// crash left after a lagging head), never a scan of the log. It returns the
// entry to chain onto (ok false for an empty log).
//
// A head that is behind the log is accepted when the entry it names is intact
// and the entries after it chain on: the head is replaced without fsync, so a
// power cut can leave it one append behind. A head ahead of the log, a log
// that shrank below the head's size, or an entry at the head's place that is
// not the recorded one is damage.
func (l *Log) checkTail() (Entry, bool, error) {
	h, hs := loadHead(l.path)
	f, err := open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		if hs == headOK {
			return Entry{}, false, &DamagedError{Index: 0, Reason: fmt.Sprintf("the log is missing but its head says %d entries", h.Seq+1)}
		}
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Entry{}, false, err
	}
	size := st.Size()
	if size == 0 {
		if hs == headOK {
			return Entry{}, false, &DamagedError{Index: 0, Reason: fmt.Sprintf("the log is empty but its head says %d entries", h.Seq+1)}
		}
		return Entry{}, false, nil
	}
	if hs == headOK && h.Size > 0 {
		if size < h.Size {
			return Entry{}, false, &DamagedError{Index: cutIndex(f, size, h.Seq),
				Reason: fmt.Sprintf("the log shrank to %d bytes; its head recorded %d bytes and %d entries", size, h.Size, h.Seq+1)}
		}
		e, _, err := entryEndingAt(f, h.Size)
		switch {
		case err != nil:
			return Entry{}, false, &DamagedError{Index: h.Seq, Reason: fmt.Sprintf("the entry its head recorded (#%d) is no longer there (%v)", h.Seq, err)}
		case e.Seq != h.Seq || e.Hash != h.Hash:
			return Entry{}, false, &DamagedError{Index: h.Seq, Reason: fmt.Sprintf("entry #%d is not the one its head recorded", h.Seq)}
		}
		if size == h.Size {
			return e, true, nil
		}
		return l.chainAfter(h.Size, e)
	}
	last, start, err := entryEndingAt(f, size)
	if err != nil {
		return Entry{}, false, &DamagedError{Index: cutIndex(f, start, -1),
			Reason: fmt.Sprintf("the log's last line is damaged (%v)", err)}
	}
	switch hs {
	case headMissing:
		// only a power cut during the very first append leaves a log without a head
		if last.Seq > 0 {
			return Entry{}, false, &DamagedError{Index: last.Seq + 1,
				Reason: fmt.Sprintf("its head %s is missing, so entries after #%d may have been cut", HeadPath(l.path), last.Seq)}
		}
	case headGarbage:
		return Entry{}, false, &DamagedError{Index: last.Seq + 1,
			Reason: fmt.Sprintf("its head %s is not a head, so entries after #%d may have been cut", HeadPath(l.path), last.Seq)}
	case headOK: // a head written before heads recorded the size
		switch {
		case last.Seq < h.Seq:
			return Entry{}, false, &DamagedError{Index: last.Seq + 1,
				Reason: fmt.Sprintf("the log ends at #%d but its head says #%d", last.Seq, h.Seq)}
		case last.Seq == h.Seq && last.Hash != h.Hash:
			return Entry{}, false, &DamagedError{Index: h.Seq, Reason: fmt.Sprintf("entry #%d is not the one its head recorded", h.Seq)}
		case last.Seq > h.Seq:
			return l.legacyLag(h)
		}
	}
	return last, true, nil
}

// entryEndingAt reads the line that ends (with its newline) just before
// offset end, checks that it is a canonical entry whose hash is right, and
// returns it with the offset where it starts.
func entryEndingAt(f *os.File, end int64) (Entry, int64, error) {
	if end <= 0 {
		return Entry{}, 0, errors.New("no line there")
	}
	nl := make([]byte, 1)
	if _, err := f.ReadAt(nl, end-1); err != nil {
		return Entry{}, end, err
	}
	if nl[0] != '\n' {
		return Entry{}, end, errors.New("no line ends there")
	}
	start, err := lastLineStart(f, end)
	if err != nil {
		return Entry{}, end, err
	}
	line := make([]byte, end-1-start)
	if _, err := f.ReadAt(line, start); err != nil && err != io.EOF {
		return Entry{}, start, err
	}
	e, err := parseLine(line)
	if err != nil {
		return Entry{}, start, err
	}
	if lineHash(line, e) != e.Hash {
		return Entry{}, start, errors.New("hash mismatch")
	}
	return e, start, nil
}

// cutIndex guesses the first missing or altered entry from the entry ending
// at end (the last one still intact); fallback when there is none.
func cutIndex(f *os.File, end, fallback int64) int64 {
	e, _, err := entryEndingAt(f, end)
	if err != nil {
		if end <= 0 {
			return 0
		}
		return fallback
	}
	return e.Seq + 1
}

// chainAfter checks the entries after the head's (a head a crash left
// behind) and returns the last of them.
func (l *Log) chainAfter(off int64, at Entry) (Entry, bool, error) {
	c := &Chain{next: at.Seq + 1, prev: at.Hash}
	last := at
	var bad error
	_, err := Scan(l.path, off, func(ln Line) bool {
		e, ok := c.FeedParsed(ln.Entry, ln.Err)
		if !ok {
			b := c.Bad()
			bad = &DamagedError{Index: b.Index, Reason: fmt.Sprintf("entry #%d after its head does not chain on (%s: %s)", b.Index, b.Reason, b.Detail)}
			return false
		}
		last = e
		return true
	})
	if err != nil {
		return Entry{}, false, err
	}
	if bad != nil {
		return Entry{}, false, bad
	}
	return last, true, nil
}

// legacyLag finds the entry an old head (no size) names and checks the
// entries after it. It reads the log once; the head written next has a size.
func (l *Log) legacyLag(h head) (Entry, bool, error) {
	var at *Line
	var off int64
	_, err := Scan(l.path, 0, func(ln Line) bool {
		if ln.Err == nil && ln.Entry.Seq == h.Seq {
			at = &ln
			return false
		}
		return true
	})
	if err != nil {
		return Entry{}, false, err
	}
	if at != nil {
		if sum, err := at.Entry.ComputeHash(); err != nil || sum != at.Entry.Hash {
			at = nil
		}
	}
	if at == nil || at.Entry.Hash != h.Hash {
		return Entry{}, false, &DamagedError{Index: h.Seq, Reason: fmt.Sprintf("entry #%d is not the one its head recorded", h.Seq)}
	}
	line, err := at.Entry.Line()
	if err != nil {
		return Entry{}, false, err
	}
	off = at.Offset + int64(len(line)) + 1
	return l.chainAfter(off, at.Entry)
}
