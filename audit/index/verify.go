package auditpane

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"sync/atomic"

	"github.com/vigil-dev/vigil/audit"
)

// verified is what a verification of the whole log found.
type verified struct {
	chain  *audit.Chain
	anchor *audit.Report // the log disagrees with its head (or the report fails for a reason the chain does not hold)
	mark   fileMark
	first  string // entry #0's hash
	end    int64  // just after the last complete line fed
	// resumed is how many bytes the verified prefix's hash stood for (0: a full pass)
	resumed int64
	err     error
}

// verifyLog verifies the log at path through the engine's incremental
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
func verifyLog(ctx context.Context, path string, progress func(done, total int64), good *atomic.Int64) verified {
	st, statErr := os.Stat(path) // before the read: a file replaced meanwhile shows as a change
	v, err := audit.VerifyIncremental(ctx, path, audit.VerifiedPath(path), audit.VerifyOptions{}, progress)
	if err != nil {
		return verified{chain: audit.NewChain(), mark: fileMark{lastOff: -1}, err: err}
	}
	out := verified{chain: v.Chain, end: v.End, first: v.First, mark: fileMark{lastOff: -1}, resumed: v.Resumed}
	if out.chain == nil { // no log: an empty chain, unless its head says otherwise
		out.chain, out.end = audit.NewChain(), 0
	}
	if statErr == nil {
		out.mark.info = st
	}
	if !v.OK && out.chain.Bad() == nil {
		rep := v.Report
		out.anchor = &rep
	}
	good.Store(out.chain.Len())
	if out.first == "" && out.chain.Len() > 0 {
		if ls, err := audit.ReadLinesAt(path, []int64{0}); err == nil && len(ls) == 1 && ls[0].Err == nil {
			out.first = ls[0].Entry.Hash
		}
	}
	if v.OK {
		out.mark.setBase(out.end, verifiedPrefix(path, out.end, out.chain))
	}
	return out
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
