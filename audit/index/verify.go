package index

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/vigil-dev/vigil/audit"
)

// Verification is what a verification of the whole log found.
type Verification struct {
	Chain  *audit.Chain
	Anchor *audit.Report // the log disagrees with its head (or the report fails for a reason the chain does not hold)
	Mark   Mark          // what a later change is compared with (ReadAppended)
	First  string        // entry #0's hash
	End    int64         // just after the last complete line fed
	// Resumed is how many bytes the verified prefix's hash stood for (0: a full pass)
	Resumed int64
	Err     error
}

// Verify verifies the log at path through the engine's incremental
// verifier: a start after one that verified the log checks the recorded
// prefix by its SHA-256 alone and feeds only the entries after it, so a
// million-entry log costs a hash of its bytes, not a parse of every line. A
// rewrite inside the prefix changes that hash and sends the engine back to a
// full pass, which finds it where a full pass would.
//
// The mark it returns takes the prefix's hash from the record the engine
// wrote for exactly the bytes it verified (never from a second read, which
// an edit could race). progress hears bytes done; good is set to the entries
// that verified (the filter trusts those lines unparsed).
func Verify(ctx context.Context, path string, progress func(done, total int64), good *atomic.Int64) Verification {
	o, cpErr := localOptions(path)
	v, err := audit.VerifyIncremental(ctx, path, audit.VerifiedPath(path), o, progress)
	if err != nil {
		return Verification{Chain: audit.NewChain(), Err: err}
	}
	out := Verification{Chain: v.Chain, End: v.End, First: v.First, Resumed: v.Resumed}
	if out.Chain == nil { // no log: an empty chain, unless its head says otherwise
		out.Chain, out.End = audit.NewChain(), 0
	}
	switch {
	case !v.OK && out.Chain.Bad() == nil:
		rep := v.Report
		out.Anchor = &rep
	case v.OK && cpErr != nil:
		out.Anchor = &audit.Report{Entries: v.Entries, Reason: cpErr.Reason, Detail: cpErr.Error(), Checkpoint: cpErr.Source}
	}
	good.Store(out.Chain.Len())
	if out.First == "" && out.Chain.Len() > 0 {
		if ls, err := audit.ReadLinesAt(path, []int64{0}); err == nil && len(ls) == 1 && ls[0].Err == nil {
			out.First = ls[0].Entry.Hash
		}
	}
	if v.OK {
		out.Mark.setBase(out.End, verifiedPrefix(path, out.End, out.Chain))
	}
	return out
}

// localOptions holds the log, as `vigil audit verify` does by default, to
// the checkpoints Append wrote beside it (audit.checkpoints), with seals
// checked by the same key, when the operator's public key is where `vigil
// keys init` puts it (keys/ beside the log, where Append finds the private
// half): a cut below a checkpoint is BROKEN on every start, until a seal
// supersedes it. Without the key (a copy of another home's log) the log is
// held to its head and its verified prefix alone. A checkpoint file that
// does not verify is returned as the error the badge shows.
func localOptions(path string) (audit.VerifyOptions, *audit.CheckpointError) {
	pub, err := audit.LoadPublicKey(filepath.Join(filepath.Dir(path), "keys", "operator.pub.pem"))
	if err != nil {
		return audit.VerifyOptions{}, nil
	}
	cps, err := localCheckpoints(path, pub)
	var ce *audit.CheckpointError
	switch {
	case errors.As(err, &ce):
		return audit.VerifyOptions{Key: pub}, ce
	case err != nil:
		// not a checkpoint file at all: the CLI names it; the badge holds
		// the log to the rest
		return audit.VerifyOptions{Key: pub}, &audit.CheckpointError{Source: audit.CheckpointsPath(path),
			Reason: audit.ReasonGarbage, Detail: err.Error()}
	}
	return audit.VerifyOptions{Key: pub, Local: cps}, nil
}

// localCache keeps the checkpoints last read per log: a small log is
// verified again on every change, and checking every note's signature
// again (about 0.13 ms a note) would cost a busy home's screen more than
// the chain itself; the file changes only when a decision is recorded.
var localCache struct {
	sync.Mutex
	m map[string]localRead
}

type localRead struct {
	sum [sha256.Size]byte // of the file's bytes
	pub string
	cps []audit.Checkpoint
	err error
}

// localCheckpoints is audit.LocalCheckpoints, read again only when the
// file's bytes or the key differ from the last read.
func localCheckpoints(path string, pub ed25519.PublicKey) ([]audit.Checkpoint, error) {
	data, err := os.ReadFile(audit.CheckpointsPath(path))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	key := localRead{sum: sha256.Sum256(data), pub: string(pub)}
	localCache.Lock()
	got, ok := localCache.m[path]
	localCache.Unlock()
	if ok && got.sum == key.sum && got.pub == key.pub {
		return got.cps, got.err
	}
	key.cps, _, key.err = audit.LocalCheckpoints(path, pub)
	if again, err := os.ReadFile(audit.CheckpointsPath(path)); err == nil && bytes.Equal(again, data) {
		localCache.Lock()
		if localCache.m == nil {
			localCache.m = map[string]localRead{}
		}
		localCache.m[path] = key
		localCache.Unlock()
	}
	return key.cps, key.err
}

// verifiedPrefix is the SHA-256 of the log's bytes [0, end) as the record
// beside it states, when the record describes exactly the chain verified
// (its end, length and last hash); nil otherwise (another viewer recorded
// more since, or the record could not be written): every change then
// verifies the log again, from the record if there is one.
func verifiedPrefix(path string, end int64, c *audit.Chain) []byte {
	if end == 0 {
		empty := sha256.Sum256(nil) // nothing verified: the empty prefix
		return empty[:]
	}
	b, err := os.ReadFile(audit.VerifiedPath(path))
	if err != nil {
		return nil
	}
	var r audit.Verified
	if json.Unmarshal(b, &r) != nil || r.Offset != end || r.Entries != c.Len() || r.Last != c.Last() {
		return nil
	}
	sum, err := hex.DecodeString(r.Prefix)
	if err != nil || len(sum) != 32 {
		return nil
	}
	return sum
}

// Seen is the chain a viewer last showed verified: a log deleted, cut or
// replaced together with its head verifies on its own, not against it, and
// LostSince finds it.
type Seen struct {
	n      int64
	first  string
	last   string // entry #n-1's hash
	sealed []audit.SealedGap
}

// LostSince is what became of the chain last seen, given the freshly read
// one c (entry #0's hash first), or nil: still there, perhaps longer, or
// cut on purpose (sealed).
func (s Seen) LostSince(c *audit.Chain, first string) *audit.Report {
	n := c.Len()
	switch {
	case s.n == 0 || c.Bad() != nil:
		return nil
	case n == 0:
		return &audit.Report{Index: 0, Reason: audit.ReasonTruncated,
			Detail: fmt.Sprintf("the log this screen verified (%d entries) is gone, with its head", s.n)}
	case first != s.first:
		return &audit.Report{Index: 0, Reason: audit.ReasonReplaced,
			Detail: fmt.Sprintf("entry #0 is not the one of the log this screen verified (%d entries): replaced, with its head", s.n)}
	case n < s.n && len(c.Sealed()) <= len(s.sealed):
		return &audit.Report{Index: n, Reason: audit.ReasonTruncated,
			Detail: fmt.Sprintf("the log ends at %d entries but this screen verified %d: cut, with its head", n, s.n)}
	}
	return nil
}

// Note remembers c, verified, as seen (first: entry #0's hash, "" when
// unknown: the one seen before is kept).
//
// It never forgets a longer chain of the same log: a read that sees fewer
// entries and no new seal (a cut whose head was rewritten, read while a
// confirmation of the break was pending) leaves the longer one, so the
// confirmation still finds the cut.
func (s *Seen) Note(c *audit.Chain, first string) {
	sameLog := first == "" || first == s.first
	if c.Len() < s.n && len(c.Sealed()) <= len(s.sealed) && sameLog {
		return
	}
	s.n, s.last, s.sealed = c.Len(), c.Last(), append([]audit.SealedGap(nil), c.Sealed()...)
	if first != "" {
		s.first = first
	}
}

// Hold keeps the chain seen in the record beside the log at path when the
// record holds less (audit.RecordSeen): a cut this screen found after the
// log grew past the last full verification then stays BROKEN on the next
// start, until a seal.
func (s Seen) Hold(path string) error {
	if s.n == 0 || s.first == "" || s.last == "" {
		return nil
	}
	return audit.RecordSeen(path, s.n, s.first, s.last, s.sealed)
}

// First is entry #0's hash of the chain last seen ("" before one was).
func (s Seen) First() string { return s.first }
