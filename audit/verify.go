package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// Reasons Verify gives for the first bad entry.
const (
	ReasonEdited     = "edited"
	ReasonDeleted    = "deleted"
	ReasonDuplicated = "duplicated"
	ReasonReordered  = "reordered"
	ReasonTruncated  = "truncated"
	ReasonGarbage    = "garbage"
	// against a checkpoint: the log now starts with another entry #0
	ReasonReplaced = "replaced"
	// a checkpoint or a seal not signed by the operator key, or altered
	ReasonBadSignature = "bad-signature"
)

// Report is what Verify found. When OK is false, Index is the 0-based line
// index of the first bad entry and Reason one of the Reason* words.
type Report struct {
	OK      bool   `json:"ok"`
	Entries int64  `json:"entries"`
	Index   int64  `json:"index,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Checkpoint names the checkpoint the log failed against, if that was the failure.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Checkpoints is how many checkpoints the log was checked against.
	Checkpoints int `json:"checkpoints,omitempty"`
	// Sealed lists the breaks `vigil audit seal` recorded, oldest first.
	Sealed []SealedGap `json:"sealed,omitempty"`
	// First and Last are the hashes of entries #0 and #Entries-1 of a good
	// chain (what a checkpoint of it signs).
	First, Last string `json:"-"`
	at          map[int64]string
	recorded    string // the hash of the recorded prefix's last entry (VerifyOptions.Recorded), as found
}

// SealedGap is one sealed entry as Verify reports it: a break in the log's
// history that was recorded on purpose.
type SealedGap struct {
	Index    int64  `json:"index"`            // the sealed entry
	Expected int64  `json:"expected_entries"` // entries the head recorded then; -1 when it had none
	Found    int64  `json:"found_entries"`    // entries kept before the seal
	Reason   string `json:"reason"`
	Signed   string `json:"signature"` // "verified", or "unchecked" without the operator's public key
}

func (g SealedGap) String() string {
	exp := "no head"
	if g.Expected >= 0 {
		exp = fmt.Sprintf("expected %d entries", g.Expected)
	}
	return fmt.Sprintf("sealed gap at #%d: %s, found %d (reason: %s; signature %s)", g.Index, exp, g.Found, g.Reason, g.Signed)
}

// MarshalJSON always includes index, reason and detail for a broken chain
// (index 0 must not vanish under omitempty) and leaves them out of a good one.
// checkpoint, checkpoints and sealed appear only when they say something.
func (r Report) MarshalJSON() ([]byte, error) {
	type extra struct {
		Checkpoint  string      `json:"checkpoint,omitempty"`
		Checkpoints int         `json:"checkpoints,omitempty"`
		Sealed      []SealedGap `json:"sealed,omitempty"`
	}
	if r.OK {
		return json.Marshal(struct {
			OK      bool  `json:"ok"`
			Entries int64 `json:"entries"`
			extra
		}{true, r.Entries, extra{"", r.Checkpoints, r.Sealed}})
	}
	return json.Marshal(struct {
		OK      bool   `json:"ok"`
		Entries int64  `json:"entries"`
		Index   int64  `json:"index"`
		Reason  string `json:"reason"`
		Detail  string `json:"detail"`
		extra
	}{false, r.Entries, r.Index, r.Reason, r.Detail, extra{r.Checkpoint, r.Checkpoints, r.Sealed}})
}

func (r Report) String() string {
	if r.OK {
		s := "chain verified · 1 entry"
		if r.Entries != 1 {
			s = fmt.Sprintf("chain verified · %d entries", r.Entries)
		}
		switch {
		case r.Checkpoints == 1:
			s += " · extends 1 checkpoint"
		case r.Checkpoints > 1:
			s += fmt.Sprintf(" · extends %d checkpoints", r.Checkpoints)
		}
		for _, g := range r.Sealed {
			s += "\n" + g.String()
		}
		return s
	}
	return fmt.Sprintf("BROKEN at #%d: %s (%s)", r.Index, r.Reason, r.Detail)
}

// Chain checks entries one at a time; the pane feeds it new lines as they
// arrive so its badge stays current without re-reading the file.
type Chain struct {
	next   int64
	prev   string
	bad    *Report
	key    ed25519.PublicKey // checks seals' signatures when set
	sealed []SealedGap
	recent [4]string // hashes of the last entries, by seq modulo 4
	digest hash.Hash // reused by feedLine
}

// Sealed lists the sealed entries seen so far.
func (c *Chain) Sealed() []SealedGap { return c.sealed }

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
	var r rawLine
	if !scanCanonical(line, &r) {
		e, err := parseLine(line)
		return c.feed(line, e, err)
	}
	return c.feed(line, r.entry(), nil)
}

// feedLine is Feed for a verifier that needs no Entry back: a canonical line
// is checked from its raw fields, building nothing but its hash's string.
func (c *Chain) feedLine(line []byte) bool {
	if c.bad != nil {
		return false
	}
	var r rawLine
	// an escape in the hash, prev or event, or a seal, takes the general
	// path (a canonical hash or prev is plain hex; only seals need details)
	const general = 1<<rawHash | 1<<rawPrev | 1<<rawEvent
	if !scanCanonical(line, &r) || r.escaped&general != 0 || string(r.str[rawEvent]) == EventSealed {
		_, ok := c.Feed(line)
		return ok
	}
	idx := c.next
	fail := func(reason, detail string) bool {
		c.bad = &Report{Index: idx, Reason: reason, Detail: detail}
		return false
	}
	if !c.bodyHashIs(line[:r.body], r.str[rawHash]) {
		return fail(ReasonEdited, "hash mismatch")
	}
	switch {
	case r.seq < idx:
		return fail(ReasonReordered, fmt.Sprintf("seq %d where %d was expected", r.seq, idx))
	case r.seq > idx:
		return fail(ReasonDeleted, fmt.Sprintf("seq %d where %d was expected", r.seq, idx))
	case string(r.str[rawPrev]) != c.prev:
		return fail(ReasonEdited, "prev does not match the previous entry's hash")
	}
	h := string(r.str[rawHash])
	c.recent[idx%int64(len(c.recent))] = h
	c.next++
	c.prev = h
	return true
}

// bodyHashIs reports whether hex SHA-256 of body+"}" (an entry's canonical
// bytes: its line up to the hash field, closed) is want.
func (c *Chain) bodyHashIs(body, want []byte) bool {
	if c.digest == nil {
		c.digest = sha256.New()
	}
	c.digest.Reset()
	c.digest.Write(body)
	c.digest.Write([]byte("}"))
	var sum [sha256.Size]byte
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], c.digest.Sum(sum[:0]))
	return bytes.Equal(hexSum[:], want)
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
	if e.Event == EventSealed {
		d, err := checkSeal(e, c.key)
		if err != nil {
			return fail(ReasonBadSignature, err.Error())
		}
		g := SealedGap{Index: idx, Expected: -1, Reason: d.Reason, Signed: "unchecked"}
		if d.Expected != nil {
			g.Expected = d.Expected.Seq + 1
		}
		if d.Found != nil {
			g.Found = d.Found.Seq + 1
		}
		if c.key != nil {
			g.Signed = "verified"
		}
		c.sealed = append(c.sealed, g)
	}
	c.recent[idx%int64(len(c.recent))] = e.Hash
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
func Verify(path string) (Report, error) { return VerifyWith(path, VerifyOptions{}) }

// VerifyOptions adds what lives outside the log to a verification.
type VerifyOptions struct {
	// Checkpoints the log must extend (see Checkpoint), already opened with
	// ParseCheckpoints.
	Checkpoints []Checkpoint
	// Key, when set, is the operator's public key: sealed entries must carry
	// its signature.
	Key ed25519.PublicKey
	// Local are the checkpoints Append wrote beside the log (see
	// LocalCheckpoints), in the file's order. The log must extend each,
	// except one a later seal superseded: a later note that covers no more
	// entries and ends on a sealed entry (the checkpoint the seal wrote)
	// means the entries after that seal are not the ones the earlier note
	// saw, on purpose and on record. Checkpoints kept elsewhere (Checkpoints)
	// are never excused that way.
	Local []Checkpoint
	// Progress, when set, hears the bytes verified so far and the log's
	// size, every few thousand entries (a terminal shows how far it is).
	Progress func(done, total int64)
	// Recorded, when set, is the prefix an earlier verification recorded
	// (LoadVerified): the log must still hold it, unless a seal since
	// recorded the break. VerifyIncremental reads its own record.
	Recorded *Verified
}

// everyCheckpoint is every checkpoint o names, kept elsewhere first.
func (o VerifyOptions) everyCheckpoint() []Checkpoint {
	return append(append([]Checkpoint(nil), o.Checkpoints...), o.Local...)
}

// checkpointsHeld is what a good chain with these seals must extend: the
// checkpoints kept elsewhere, and the local ones no later seal superseded.
func (o VerifyOptions) checkpointsHeld(sealed []SealedGap) []Checkpoint {
	seal := map[int64]bool{}
	for _, g := range sealed {
		seal[g.Index] = true
	}
	held := append([]Checkpoint(nil), o.Checkpoints...)
	var local []Checkpoint
	minSeal := int64(-1) // the smallest size of a later note that ends on a seal
	for i := len(o.Local) - 1; i >= 0; i-- {
		cp := o.Local[i]
		if minSeal < 0 || cp.Size < minSeal {
			local = append(local, cp)
		}
		if seal[cp.Size-1] && (minSeal < 0 || cp.Size < minSeal) {
			minSeal = cp.Size
		}
	}
	for i := len(local) - 1; i >= 0; i-- { // back to the file's order
		held = append(held, local[i])
	}
	return held
}

// holds checks a good chain's report against the checkpoints o holds it to.
func (r Report) holds(o VerifyOptions) Report {
	held := o.checkpointsHeld(r.Sealed)
	r.Checkpoints = len(held)
	for _, cp := range held {
		if bad := r.against(cp); bad != nil {
			return *bad
		}
	}
	if bad := r.againstRecorded(o.Recorded); bad != nil {
		return *bad
	}
	return r
}

// VerifyWith is Verify, then checks that the log extends each checkpoint:
// its entry #0 is the checkpoint's log's (else ReasonReplaced), it has at
// least the checkpoint's entries (else ReasonTruncated: cut, or rolled back to
// an older copy) and its entry #size-1 has the checkpoint's hash (else
// ReasonEdited: rewritten before the checkpoint). A broken chain is reported
// first.
func VerifyWith(path string, o VerifyOptions) (Report, error) {
	rep, err := verify(path, o)
	if err != nil || !rep.OK {
		return rep, err
	}
	return rep.holds(o), nil
}

// against checks one checkpoint with what the verifier recorded.
func (r Report) against(cp Checkpoint) *Report {
	fail := func(idx int64, reason, detail string) *Report {
		for _, g := range r.Sealed {
			if g.Index < cp.Size {
				detail += fmt.Sprintf("; the seal at #%d removed entries the checkpoint covers", g.Index)
				break
			}
		}
		return &Report{Entries: r.Entries, Index: idx, Reason: reason, Detail: detail,
			Checkpoint: cp.Source, Checkpoints: r.Checkpoints, Sealed: r.Sealed}
	}
	switch {
	case r.Entries == 0:
		return fail(0, ReasonTruncated, fmt.Sprintf("the log is empty; checkpoint %s covers %d entries", cp.Source, cp.Size))
	case cp.Origin != Origin(r.First):
		return fail(0, ReasonReplaced, fmt.Sprintf("checkpoint %s is of log %s, this log is %s: it was replaced by another chain",
			cp.Source, cp.Origin, Origin(r.First)))
	case cp.Size > r.Entries:
		return fail(r.Entries, ReasonTruncated, fmt.Sprintf("the log has %d entries; checkpoint %s covers %d: it was cut, or rolled back to an older copy",
			r.Entries, cp.Source, cp.Size))
	case r.at[cp.Size-1] != cp.Hash:
		return fail(cp.Size-1, ReasonEdited, fmt.Sprintf("entry #%d is not the one checkpoint %s recorded: the log was rewritten before it",
			cp.Size-1, cp.Source))
	}
	return nil
}

func verify(path string, o VerifyOptions) (Report, error) {
	rep, _, err := verifyResume(context.Background(), path, o, nil, o.Progress)
	return rep, err
}

// verifyResume verifies the log at path. With from, the prefix it records
// is checked by its SHA-256 alone and the chain resumes after it (a prefix
// that differs, or cannot serve o, means a pass from the start). The
// verifier it returns holds the chain's end and, when from was given, the
// SHA-256 of the bytes it verified. progress, when set, hears bytes done and
// the file's size as the pass goes; ctx stops it.
func verifyResume(ctx context.Context, path string, o VerifyOptions, from *Verified, progress func(done, total int64)) (Report, *verifier, error) {
	h, hs := loadHead(path)
	hasHead := hs == headOK
	f, err := open(path)
	if errors.Is(err, os.ErrNotExist) {
		if hasHead {
			return Report{Index: 0, Reason: ReasonDeleted,
				Detail: fmt.Sprintf("the log is missing but its head says %d entries", h.Seq+1)}, nil, nil
		}
		return Report{OK: true}, nil, nil
	}
	if err != nil {
		return Report{}, nil, err
	}
	defer f.Close()
	c := NewChain()
	c.key = o.Key
	v := &verifier{c: c, head: h, hasHead: hasHead, ctx: ctx, progress: progress, recIdx: -1}
	if o.Recorded != nil {
		v.recIdx = o.Recorded.Entries - 1
	}
	if st, err := f.Stat(); err == nil {
		v.total = st.Size()
	}
	if all := o.everyCheckpoint(); len(all) > 0 {
		v.want = map[int64]string{}
		for _, cp := range all {
			v.want[cp.Size-1] = ""
		}
	}
	var off int64
	if from != nil {
		v.prefix = sha256.New()
		if off, err = v.resume(f, from); err != nil {
			return Report{}, nil, err
		}
	}
	off, partial, err := v.feedFrom(f, off)
	if err != nil {
		return Report{}, nil, err
	}
	if v.c.bad == nil && partial {
		// an append may be in flight: look again while appenders are held off
		if lk := lockShared(path); lk != nil {
			off, partial, err = v.feedFrom(f, off)
			lk()
			if err != nil {
				return Report{}, nil, err
			}
		}
	}
	v.end = off
	if v.c.bad != nil {
		rep := *v.c.bad
		rep.Entries = v.c.next
		rep.Sealed = v.c.sealed
		rep, err := classify(path, rep)
		return rep, v, err
	}
	if partial {
		rep, err := v.unterminated(f, off)
		return rep, v, err
	}
	if hasHead {
		switch {
		case h.Seq >= v.c.next:
			return Report{Entries: v.c.next, Index: v.c.next, Reason: ReasonDeleted, Sealed: v.c.sealed,
				Detail: fmt.Sprintf("the log ends at %d entries but its head says %d", v.c.next, h.Seq+1)}, v, nil
		case h.Seq >= 0 && v.headHash != h.Hash:
			return Report{Entries: v.c.next, Index: h.Seq, Reason: ReasonEdited, Sealed: v.c.sealed,
				Detail: "entry's hash differs from the one its head anchor recorded"}, v, nil
		}
	}
	if bad := headless(path, hs, v.c.next); bad != nil {
		bad.Sealed = v.c.sealed
		return *bad, v, nil
	}
	return Report{OK: true, Entries: v.c.next, Sealed: v.c.sealed, First: v.first, Last: v.c.prev, at: v.want,
		recorded: v.recHash}, v, nil
}

type verifier struct {
	c        *Chain
	head     head
	hasHead  bool
	headHash string           // hash of the entry at head.Seq once reached
	first    string           // hash of entry #0
	want     map[int64]string // checkpoints' last indexes → the hashes found there
	recIdx   int64            // the recorded prefix's last index (VerifyOptions.Recorded); -1 for none
	recHash  string           // the hash found there
	end      int64            // offset after the last line fed

	ctx      context.Context
	progress func(done, total int64)
	total    int64
	prefix   hash.Hash // when set, every verified line's bytes go into it
	resumed  bool      // the chain went on from a recorded prefix (see resume)
}

// stopped reports whether the pass was cancelled.
func (v *verifier) stopped() error {
	if v.ctx == nil {
		return nil
	}
	return v.ctx.Err()
}

// feedFrom feeds every complete line from off on. It returns the offset after
// the last complete line and whether bytes without a newline follow it.
func (v *verifier) feedFrom(f *os.File, off int64) (int64, bool, error) {
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off, false, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	n := 0
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
			if !v.c.feedLine(line[:len(line)-1]) {
				return off, false, nil
			}
			if v.prefix != nil {
				v.prefix.Write(line)
			}
			off += int64(len(line))
			idx := v.c.next - 1
			if v.hasHead && idx == v.head.Seq {
				v.headHash = v.c.prev
			}
			if idx == 0 {
				v.first = v.c.prev
			}
			if _, ok := v.want[idx]; ok {
				v.want[idx] = v.c.prev
			}
			if idx == v.recIdx {
				v.recHash = v.c.prev
			}
			if n++; n%4096 == 0 {
				if err := v.stopped(); err != nil {
					return off, false, err
				}
				if v.progress != nil {
					v.progress(off, v.total)
				}
			}
		}
		if err == io.EOF {
			if v.progress != nil {
				v.progress(off, v.total)
			}
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

// headless is what a log without a usable head means, as Append sees it:
// only a power cut during the very first append leaves no head, and only a
// rename a power cut did not persist leaves an empty one (accepted).
func headless(path string, hs headState, n int64) *Report {
	name := filepath.Base(HeadPath(path))
	switch {
	case hs == headMissing && n > 1:
		return &Report{Entries: n, Index: n, Reason: ReasonDeleted,
			Detail: fmt.Sprintf("its head %s is missing, so entries after #%d may have been cut", name, n-1)}
	case hs == headGarbage && n > 0:
		return &Report{Entries: n, Index: n, Reason: ReasonDeleted,
			Detail: fmt.Sprintf("its head %s is not a head, so entries after #%d may have been cut", name, n-1)}
	}
	return nil
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
	f, err := open(path)
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

// Anchor is the head as read before a viewer scans the log (read it first:
// appends move the head after the log, so it is never ahead of what follows).
type Anchor struct {
	path string
	h    head
	hs   headState
}

// ReadAnchor reads audit.log.head beside the log at path.
func ReadAnchor(path string) Anchor {
	h, hs := loadHead(path)
	return Anchor{path, h, hs}
}

// CheckAnchor compares a chain fed with the whole log against its head, as
// Verify does: nil when they agree (or the chain is already broken, or the
// head names an entry too far back to check).
func (c *Chain) CheckAnchor(a Anchor) *Report {
	if c.bad != nil {
		return nil
	}
	if a.hs != headOK {
		return headless(a.path, a.hs, c.next)
	}
	h := a.h
	switch {
	case h.Seq >= c.next:
		return &Report{Entries: c.next, Index: c.next, Reason: ReasonDeleted,
			Detail: fmt.Sprintf("the log ends at %d entries but its head says %d", c.next, h.Seq+1)}
	case h.Seq >= 0:
		if got, ok := c.recentHash(h.Seq); ok && got != h.Hash {
			return &Report{Entries: c.next, Index: h.Seq, Reason: ReasonEdited,
				Detail: "entry's hash differs from the one its head anchor recorded"}
		}
	}
	return nil
}

// recentHash is the hash of entry seq if it is among the last few fed (a
// head lags the log by one append at most, after a power cut).
func (c *Chain) recentHash(seq int64) (string, bool) {
	back := c.next - 1 - seq
	if back < 0 || back >= int64(len(c.recent)) || back >= c.next {
		return "", false
	}
	return c.recent[(c.next-1-back)%int64(len(c.recent))], true
}
