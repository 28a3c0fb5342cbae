package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reasons Verify gives for the first bad entry.
const (
	ReasonEdited     = "edited"
	ReasonDeleted    = "deleted"
	ReasonDuplicated = "duplicated"
	ReasonReordered  = "reordered"
	ReasonTruncated  = "truncated"
	ReasonGarbage    = "garbage"
)

// Report is what Verify found. When OK is false, Index is the 0-based line
// index of the first bad entry and Reason one of the Reason* words.
type Report struct {
	OK      bool   `json:"ok"`
	Entries int64  `json:"entries"`
	Index   int64  `json:"index,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// MarshalJSON always includes index, reason and detail for a broken chain
// (index 0 must not vanish under omitempty) and leaves them out of a good one.
func (r Report) MarshalJSON() ([]byte, error) {
	if r.OK {
		return json.Marshal(struct {
			OK      bool  `json:"ok"`
			Entries int64 `json:"entries"`
		}{true, r.Entries})
	}
	return json.Marshal(struct {
		OK      bool   `json:"ok"`
		Entries int64  `json:"entries"`
		Index   int64  `json:"index"`
		Reason  string `json:"reason"`
		Detail  string `json:"detail"`
	}{false, r.Entries, r.Index, r.Reason, r.Detail})
}

func (r Report) String() string {
	if r.OK {
		return fmt.Sprintf("chain verified · %d entries", r.Entries)
	}
	return fmt.Sprintf("BROKEN at #%d: %s (%s)", r.Index, r.Reason, r.Detail)
}

// Chain checks entries one at a time; the pane feeds it new lines as they
// arrive so its badge stays current without re-reading the file.
type Chain struct {
	next int64
	prev string
	bad  *Report
}

// NewChain starts a chain at its genesis.
func NewChain() *Chain { return &Chain{prev: Genesis} }

// Bad is the first failure seen, or nil.
func (c *Chain) Bad() *Report { return c.bad }

// Len is how many entries have verified.
func (c *Chain) Len() int64 { return c.next }

// Last is the hash of the last verified entry.
func (c *Chain) Last() string { return c.prev }

// Feed checks one line (without its newline). It returns the decoded entry
// and false once the chain is broken (at this line or before).
func (c *Chain) Feed(line []byte) (Entry, bool) {
	if c.bad != nil {
		return Entry{}, false
	}
	e, err := parseLine(line)
	return c.feed(line, e, err)
}

// FeedParsed is Feed for a line already decoded by Scan or ReadTail (their
// Line.Err carries the same parse and canonical-form checks).
func (c *Chain) FeedParsed(e Entry, err error) (Entry, bool) { return c.feed(nil, e, err) }

// feed checks a decoded entry; line, when known, lets the hash skip re-encoding.
func (c *Chain) feed(line []byte, e Entry, err error) (Entry, bool) {
	if c.bad != nil {
		return Entry{}, false
	}
	idx := c.next
	fail := func(reason, detail string) (Entry, bool) {
		c.bad = &Report{Index: idx, Reason: reason, Detail: detail}
		return Entry{}, false
	}
	switch {
	case errors.Is(err, errGarbage):
		return fail(ReasonGarbage, "line is not a valid audit entry")
	case err != nil:
		return fail(ReasonEdited, err.Error())
	}
	if lineHash(line, e) != e.Hash {
		return fail(ReasonEdited, "hash mismatch")
	}
	switch {
	case e.Seq < idx:
		return fail(ReasonReordered, fmt.Sprintf("seq %d where %d was expected", e.Seq, idx))
	case e.Seq > idx:
		return fail(ReasonDeleted, fmt.Sprintf("seq %d where %d was expected", e.Seq, idx))
	case e.Prev != c.prev:
		return fail(ReasonEdited, "prev does not match the previous entry's hash")
	}
	c.next++
	c.prev = e.Hash
	return e, true
}

// Verify recomputes the whole chain of the log at path and names the first
// bad entry. A missing log is an empty, valid chain unless its head says
// entries were written.
//
// Verify is safe to run while other processes append: it reads the head
// anchor before the log (appends fsync the log before moving the head, so the
// head never runs ahead of what is read next), and an unterminated last line
// is read again under the appenders' lock before it is called truncated.
func Verify(path string) (Report, error) {
	h, hasHead := readHead(path)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if hasHead {
			return Report{Index: 0, Reason: ReasonDeleted,
				Detail: fmt.Sprintf("the log is missing but its head says %d entries", h.Seq+1)}, nil
		}
		return Report{OK: true}, nil
	}
	if err != nil {
		return Report{}, err
	}
	defer f.Close()
	v := verifier{c: NewChain(), head: h, hasHead: hasHead}
	off, partial, err := v.feedFrom(f, 0)
	if err != nil {
		return Report{}, err
	}
	if v.c.bad == nil && partial {
		// an append may be in flight: look again while appenders are held off
		if lk := lockShared(path); lk != nil {
			off, partial, err = v.feedFrom(f, off)
			lk()
			if err != nil {
				return Report{}, err
			}
		}
	}
	if v.c.bad != nil {
		rep := *v.c.bad
		rep.Entries = v.c.next
		return classify(path, rep)
	}
	if partial {
		return v.unterminated(f, off)
	}
	if hasHead {
		switch {
		case h.Seq >= v.c.next:
			return Report{Entries: v.c.next, Index: v.c.next, Reason: ReasonDeleted,
				Detail: fmt.Sprintf("the log ends at %d entries but its head says %d", v.c.next, h.Seq+1)}, nil
		case h.Seq >= 0 && v.headHash != h.Hash:
			return Report{Entries: v.c.next, Index: h.Seq, Reason: ReasonEdited,
				Detail: "entry's hash differs from the one its head anchor recorded"}, nil
		}
	}
	return Report{OK: true, Entries: v.c.next}, nil
}

type verifier struct {
	c        *Chain
	head     head
	hasHead  bool
	headHash string // hash of the entry at head.Seq once reached
}

// feedFrom feeds every complete line from off on. It returns the offset after
// the last complete line and whether bytes without a newline follow it.
func (v *verifier) feedFrom(f *os.File, off int64) (int64, bool, error) {
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off, false, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// a line longer than the buffer: gather it whole
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return off, false, err
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if _, ok := v.c.Feed(line[:len(line)-1]); !ok {
				return off, false, nil
			}
			off += int64(len(line))
			if v.hasHead && v.c.next-1 == v.head.Seq {
				v.headHash = v.c.prev
			}
		}
		if err == io.EOF {
			return off, len(line) > 0 && line[len(line)-1] != '\n', nil
		}
	}
}

// unterminated reports a last line without its newline: the start of an entry
// cut short is truncated; anything else is garbage.
func (v *verifier) unterminated(f *os.File, off int64) (Report, error) {
	rep := Report{Index: v.c.next, Entries: v.c.next, Reason: ReasonTruncated,
		Detail: "last line has no end (cut mid-write or truncated)"}
	b := make([]byte, len(entryPrefix))
	n, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return Report{}, err
	}
	if !bytes.HasPrefix([]byte(entryPrefix), b[:n]) && !bytes.HasPrefix(b[:n], []byte(entryPrefix)) {
		rep.Reason, rep.Detail = ReasonGarbage, "last line is not the start of an audit entry"
	}
	return rep, nil
}

// entryPrefix is how every entry's line begins.
const entryPrefix = `{"seq":`

func readHead(path string) (head, bool) {
	hb, err := os.ReadFile(HeadPath(path))
	if err != nil {
		return head{}, false
	}
	var h head
	if json.Unmarshal(hb, &h) != nil {
		return head{}, false
	}
	return h, true
}

// lineHash is ComputeHash for a line already known to be canonical: the body
// is the line without its trailing hash field, so no second encoding is needed.
func lineHash(line []byte, e Entry) string {
	suffix := `,"hash":"` + e.Hash + `"}`
	if e.Hash == "" || !bytes.HasSuffix(line, []byte(suffix)) {
		h, _ := e.ComputeHash()
		return h
	}
	d := sha256.New()
	d.Write(line[:len(line)-len(suffix)])
	d.Write([]byte("}"))
	return hex.EncodeToString(d.Sum(nil))
}

// classify refines an out-of-order seq into duplicated, reordered or deleted
// by looking at the rest of the file. Only the failure path pays for it.
func classify(path string, rep Report) (Report, error) {
	if rep.Reason != ReasonReordered && rep.Reason != ReasonDeleted {
		return rep, nil
	}
	lines, err := seqsAndHashes(path)
	if err != nil {
		return rep, nil
	}
	idx := rep.Index
	if idx < 0 || idx >= int64(len(lines)) {
		return rep, nil // the file changed under us: keep the first reading
	}
	bad := lines[idx]
	if rep.Reason == ReasonReordered { // seq lower than expected
		if bad.seq >= 0 && bad.seq < int64(len(lines)) && lines[bad.seq].hash == bad.hash {
			rep.Reason = ReasonDuplicated
			rep.Detail = fmt.Sprintf("repeats entry #%d", bad.seq)
		}
		return rep, nil
	}
	// seq higher than expected: if the expected seq shows up later, lines were moved
	for _, l := range lines[idx+1:] {
		if l.seq == idx {
			rep.Reason = ReasonReordered
			rep.Detail = fmt.Sprintf("entry #%d appears later in the file", idx)
			return rep, nil
		}
	}
	rep.Detail = fmt.Sprintf("entry #%d is missing", idx)
	return rep, nil
}

type seqHash struct {
	seq  int64
	hash string
}

func seqsAndHashes(path string) ([]seqHash, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []seqHash
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			Seq  int64  `json:"seq"`
			Hash string `json:"hash"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			e.Seq = -1
		}
		out = append(out, seqHash{e.Seq, e.Hash})
	}
	return out, sc.Err()
}
