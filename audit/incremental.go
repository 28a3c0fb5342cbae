package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/vigil-dev/vigil/internal/atomicfile"
)

// Verified records a prefix of the log that verified: its length in bytes
// and entries, the hashes a chain needs to go on from its end, and the
// SHA-256 of the prefix's bytes. The next verification hashes that prefix
// (fast: no parsing) and, when it is byte for byte the same, checks only
// the entries after it. A rewrite anywhere inside the prefix changes its
// SHA-256 and sends the verification back to the start, so it is found as
// a full pass would find it.
//
// The record is only as trustworthy as the home it lives in: someone who
// can rewrite the log and this file together can make a resumed check pass
// where a full one would not. The badge of a viewer uses it;
// `vigil audit verify` (Verify) always reads the whole chain.
type Verified struct {
	Version int    `json:"version"`
	Offset  int64  `json:"offset"`  // bytes: the end of entry #Entries-1's line
	Entries int64  `json:"entries"` // entries in the prefix
	First   string `json:"first"`   // hash of entry #0
	Last    string `json:"last"`    // hash of entry #Entries-1
	Prefix  string `json:"prefix_sha256"`
	// Recent are the last entries' hashes by seq modulo 4 (see Chain).
	Recent [4]string `json:"recent"`
	// Key names the key seals were checked with ("" for none): a prefix
	// verified without it does not stand for one verified with it.
	Key    string      `json:"key"`
	Sealed []SealedGap `json:"sealed,omitempty"`
	// At holds the hashes of entries inside the prefix that checkpoints
	// named, so they can be checked again without reading those lines.
	At map[int64]string `json:"at,omitempty"`

	source string // the file it was read from, for reports
}

const verifiedVersion = 1

// VerifiedPath is where VerifyIncremental keeps its record for the log at
// logPath: audit.log.verified beside it.
func VerifiedPath(logPath string) string { return logPath + ".verified" }

// VerifyIncremental is Verify (with o, as VerifyWith) for a viewer that
// verifies on every start: it resumes after the prefix recorded in
// cachePath when that prefix is unchanged (checked by its SHA-256), then
// records the new verified end there (atomically, durably) when the chain
// is good. A missing, unreadable or stale record only costs a full pass.
// The report is what VerifyWith would return for the same log.
//
// It reads the file once with bounded memory. progress, when set, hears
// bytes done and the file's size as the pass goes; ctx cancels it (the
// error is then ctx.Err()). Call it off the UI goroutine.
func VerifyIncremental(ctx context.Context, path, cachePath string, o VerifyOptions, progress func(done, total int64)) (Verification, error) {
	if o.Recorded == nil {
		// the record is evidence too: the log must still hold that prefix
		o.Recorded = readVerified(cachePath)
	}
	from := loadVerified(cachePath, o)
	resumeAt := from.Offset
	rep, v, err := verifyResume(ctx, path, o, &from, progress)
	if err != nil {
		return Verification{}, err
	}
	out := Verification{Report: rep}
	if v == nil {
		if rep.OK {
			out.Report = rep.holds(o) // no log: it must not have had entries
		}
		return out, nil
	}
	out.End, out.Chain = v.end, v.c
	if v.resumed {
		out.Resumed = resumeAt
	}
	if rep.OK {
		if out.Report = rep.holds(o); !out.OK {
			return out, nil
		}
		next := v.record(o, from)
		changed := next.Offset != from.Offset || next.Prefix != from.Prefix || len(next.At) != len(from.At)
		if changed && !keepsLonger(cachePath, next) {
			// a record that cannot be written costs the next start a full pass, nothing more
			out.SaveErr = saveVerified(cachePath, next)
		}
	}
	return out, nil
}

// Verification is what VerifyIncremental found.
type Verification struct {
	Report // the chain's state: the badge
	// End is the offset after the last line verified; Chain is positioned
	// there, ready to be fed the lines appended later (see Chain.Feed).
	End   int64
	Chain *Chain
	// Resumed is how many bytes were checked by the recorded prefix's hash
	// alone (0: a full pass).
	Resumed int64
	// SaveErr is why the new record could not be written, if it could not.
	SaveErr error
}

func keyName(o VerifyOptions) string {
	if o.Key == nil {
		return ""
	}
	return KeyID(o.Key)
}

// loadVerified reads the record; anything wrong with it (missing, garbage,
// another version or key) is the empty record: verify from the start.
func loadVerified(cachePath string, o VerifyOptions) Verified {
	none := Verified{Version: verifiedVersion, Key: keyName(o)}
	if cachePath == "" {
		return none
	}
	b, err := readSmall(cachePath, 64<<20)
	if err != nil {
		return none
	}
	var r Verified
	if json.Unmarshal(b, &r) != nil || r.Version != verifiedVersion || r.Key != none.Key ||
		r.Offset <= 0 || r.Entries <= 0 || !isHash(r.Last) || !isHash(r.First) || !isHash(r.Prefix) {
		return none
	}
	// a checkpoint inside the prefix whose entry the record does not hold
	// can only be checked by reading the log from the start
	for _, cp := range o.everyCheckpoint() {
		if _, ok := r.At[cp.Size-1]; !ok && cp.Size-1 < r.Entries {
			return none
		}
	}
	return r
}

func isHash(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size
}

func saveVerified(cachePath string, r Verified) error {
	if cachePath == "" {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(cachePath, append(b, '\n'), 0o600)
}

// resume hashes the recorded prefix and, when it is unchanged, sets the
// chain at its end and returns its length; otherwise it returns 0 and the
// pass starts from the beginning.
func (v *verifier) resume(f *os.File, from *Verified) (int64, error) {
	if from.Offset <= 0 || from.Offset > v.total {
		return 0, nil // nothing recorded, or the log shrank: a full pass says how
	}
	if v.hasHead && v.head.Seq < from.Entries-1 {
		return 0, nil // the head names an entry inside the prefix: read it
	}
	if _, ok := from.At[v.recIdx]; v.recIdx >= 0 && v.recIdx < from.Entries-1 && !ok {
		return 0, nil // the recorded prefix to check ends inside this one: read it
	}
	buf := make([]byte, chunkSize)
	for done := int64(0); done < from.Offset; {
		if err := v.stopped(); err != nil {
			return 0, err
		}
		n := min(int64(len(buf)), from.Offset-done)
		m, err := f.ReadAt(buf[:n], done)
		if err != nil && !(errors.Is(err, io.EOF) && int64(m) == n) {
			return 0, err
		}
		v.prefix.Write(buf[:m])
		done += int64(m)
		if v.progress != nil {
			v.progress(done, v.total)
		}
	}
	if hex.EncodeToString(v.prefix.Sum(nil)) != from.Prefix {
		v.prefix.Reset()
		return 0, nil
	}
	// the same bytes verified before: go on from their end
	v.c.next, v.c.prev, v.c.recent = from.Entries, from.Last, from.Recent
	v.c.sealed = append([]SealedGap(nil), from.Sealed...)
	v.first = from.First
	if v.hasHead && v.head.Seq == from.Entries-1 {
		v.headHash = from.Last
	}
	for idx := range v.want {
		if idx < from.Entries {
			v.want[idx] = from.At[idx]
		}
	}
	switch {
	case v.recIdx == from.Entries-1:
		v.recHash = from.Last
	case v.recIdx >= 0 && v.recIdx < from.Entries:
		v.recHash = from.At[v.recIdx]
	}
	v.resumed = true
	return from.Offset, nil
}

// record is the verified prefix after a good pass.
func (v *verifier) record(o VerifyOptions, from Verified) Verified {
	r := Verified{Version: verifiedVersion, Offset: v.end, Entries: v.c.next, First: v.first, Last: v.c.prev,
		Prefix: hex.EncodeToString(v.prefix.Sum(nil)), Recent: v.c.recent, Key: keyName(o), Sealed: v.c.sealed}
	for idx, h := range from.At {
		if idx < r.Entries && v.resumed {
			r.At = setAt(r.At, idx, h)
		}
	}
	for idx, h := range v.want {
		if h != "" {
			r.At = setAt(r.At, idx, h)
		}
	}
	return r
}

func setAt(m map[int64]string, idx int64, h string) map[int64]string {
	if m == nil {
		m = map[int64]string{}
	}
	m[idx] = h
	return m
}

// String is the record in a line, for logs and tests.
func (r Verified) String() string {
	return fmt.Sprintf("verified %d entries, %d bytes (prefix sha256 %s)", r.Entries, r.Offset, r.Prefix)
}
